"""`memento plan import github OWNER/REPO` (SPEC §19 "Issues in"): open issues become ``GH-<n>`` tasks.

The issues are read first (nothing is held while GitHub answers); then, under the tick lock, the
plan is changed through plan/edits.edit_plan (its lock, minimal line edits, an atomic replace) and
committed as ``memento: import GitHub issues from OWNER/REPO``. What the import wrote into each
task (its title, each field, a skip's reason) is kept in ``.memento/forge_import.json``: a later
import changes a value only while the plan still holds what was written there, so a person's
edit always wins. A pull request is never imported; a closed issue's task is skipped with
``reason: closed on GitHub (<reason>)`` unless it is done; a reopened one comes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MementoError
from ..lines import listed
from ..plan.edits import PlanEditor
from ..plan.model import Task
from ..workspace import Workspace
from .issue_block import IssueFields, defused_title, read_issue
from .records import load_state, save_state

DEFAULT_LABEL = "memento"
DEFAULT_PHASE = "GitHub issues"
PLAN_REL = "docs/MASTER_PLAN.md"
SCALAR_FIELDS = ("verify", "context_files", "depends", "import_error")


@dataclass
class ImportResult:
    repo: str
    phase: str = ""
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # closed on GitHub: now [-]
    reopened: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # "GH-3 verify": a person's edit, left alone
    invalid: list[str] = field(default_factory=list)  # "GH-4: why" (no block, a malformed one)
    held: list[str] = field(default_factory=list)  # closed, but a worker holds it [~]: next import
    pull_requests: int = 0
    commit: str | None = None
    commit_error: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.skipped or self.reopened)


def import_issues(ws: Workspace, repo: str, *, label: str | None = DEFAULT_LABEL, phase: str | None = None,
                  client=None) -> ImportResult:
    """Import ``repo``'s issues labelled ``label`` into the plan (see the module docstring).
    A MementoError (ForgeError among them) says why nothing was changed."""
    from ..config.load import load_config
    from ..config.sections import repo_problem
    from ..locks import LockBusy, file_lock
    from .comments import seed
    from .github import client_for

    if repo_problem(repo):
        raise MementoError(f"OWNER/REPO: {repo_problem(repo)}")
    config = load_config(ws.config_path)
    github = client if client is not None else client_for(config)
    issues = github.issues(repo, label, state="all")
    result = ImportResult(repo)
    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            state = load_state(ws)
            from ..plan.edits import edit_plan

            plan = edit_plan(ws.plan_path, lambda e: _apply(e, issues, repo, phase, state, result))
            if result.changed:
                result.commit = _commit(ws, config, result)
            save_state(ws, state)
            # Status back compares with these: a task done before it was imported is no news.
            seed(ws, {t: plan.task(t).status for t in state["tasks"] if plan.task(t) is not None})
    except LockBusy:
        raise MementoError("a tick is running (the tick lock is taken); import when it has finished") from None
    return result


def _apply(e: PlanEditor, issues: list, repo: str, phase: str | None, state: dict, result: ImportResult) -> None:
    tasks = state["tasks"]
    new: list[tuple[str, str, IssueFields]] = []
    for issue in issues:
        if not isinstance(issue, dict) or not isinstance(issue.get("number"), int):
            continue
        if "pull_request" in issue:
            result.pull_requests += 1
            continue
        number = issue["number"]
        task_id = f"GH-{number}"
        title = defused_title(issue.get("title", ""))
        fields = read_issue(number, issue.get("body"))
        written = tasks.get(task_id)
        if not isinstance(written, dict) or written.get("repo") not in (None, repo):
            written = None  # another repository's GH-12, or a person's own task of that id: theirs
        task = e.plan.task(task_id)
        closed = issue.get("state") == "closed"
        if task is None:
            if not closed and written is None:
                new.append((task_id, title, fields))
            continue
        if written is None and task_id in tasks:
            continue  # imported from another repository: never touched from this one
        written = written if written is not None else {"repo": repo, "number": number, "fields": {}, "accept": []}
        tasks[task_id] = written
        written.update(repo=repo, number=number)
        if closed:
            _close(e, task, written, issue.get("state_reason"), result)
            continue
        _reopen(e, task_id, written, result)
        _update(e, task_id, title, fields, written, result)
    if new:
        where = _phase_for(e, phase)
        result.phase = where
        _add(e, where, new, repo, tasks, result)
    elif phase:
        result.phase = phase
    e.update_counters()


def _task_values(fields: IssueFields) -> tuple[dict[str, str], list[str]]:
    """The scalar fields and accept lines the import writes for an issue."""
    if fields.error:
        return {"import_error": fields.error}, []
    return dict(fields.fields), list(fields.accept)


def _update(e: PlanEditor, task_id: str, title: str, fields: IssueFields, written: dict,
            result: ImportResult) -> None:
    """Each value the plan still holds as the last import wrote it (or already as the issue says)
    becomes the issue's; a value a person changed stays theirs."""
    task = e.plan.task(task_id)
    assert task is not None
    changed = False
    if task.title != title:
        if task.title == written.get("title"):
            changed |= e.set_title(task_id, title)
        else:
            result.kept.append(f"{task_id} title")
    if task.title == title or e.plan.task(task_id).title == title:
        written["title"] = title
    values, accept = _task_values(fields)
    old = written.setdefault("fields", {})
    for key in SCALAR_FIELDS:
        task = e.plan.task(task_id)
        now, want, was = task.fields.get(key), values.get(key), old.get(key)
        if now == want:
            _remember(old, key, want)
            continue
        if now != was:
            result.kept.append(f"{task_id} {key}")
            continue
        changed |= e.set_field(task_id, key, want) if want is not None else e.remove_field(task_id, key)
        _remember(old, key, want)
    task = e.plan.task(task_id)
    if list(task.accept) != accept:
        if list(task.accept) == list(written.get("accept") or []):
            changed |= e.set_repeated(task_id, "accept", accept)
            written["accept"] = accept
        else:
            result.kept.append(f"{task_id} accept")
    else:
        written["accept"] = accept
    if changed:
        result.updated.append(task_id)
    _say_invalid(task_id, fields, result)


def _remember(old: dict, key: str, value: str | None) -> None:
    if value is None:
        old.pop(key, None)
    else:
        old[key] = value


def _say_invalid(task_id: str, fields: IssueFields, result: ImportResult) -> None:
    if fields.error:
        result.invalid.append(f"{task_id}: {fields.error}")
    elif not fields.has_block:
        result.invalid.append(f"{task_id}: issue #{fields.number} has no ```memento block (verify, context_files)")
    else:
        missing = [k for k in ("verify", "context_files") if k not in fields.fields]
        if missing:
            result.invalid.append(f"{task_id}: issue #{fields.number}'s ```memento block has no "
                                  + " and no ".join(f"`{k}:`" for k in missing))


def _close(e: PlanEditor, task: Task, written: dict, state_reason, result: ImportResult) -> None:
    """A closed issue: its task [-] with the reason, unless done (stays [x]) or held by a worker."""
    if task.status in ("x", "-"):
        return
    if task.status == "~":
        result.held.append(task.id)
        return
    why = str(state_reason) if isinstance(state_reason, str) and state_reason else "closed"
    reason = f"closed on GitHub ({defused_title(why)})"
    e.set_status(task.id, "-", expect=" !")
    e.set_field(task.id, "reason", reason)
    written["reason"] = reason
    result.skipped.append(task.id)


def _reopen(e: PlanEditor, task_id: str, written: dict, result: ImportResult) -> None:
    """A task the import skipped because its issue was closed, the issue open again: back to [ ]."""
    reason = written.get("reason")
    task = e.plan.task(task_id)
    if not reason or task is None:
        return
    if task.status == "-" and task.fields.get("reason") == reason:
        e.set_status(task_id, " ", expect="-")
        e.remove_field(task_id, "reason")
        result.reopened.append(task_id)
    written.pop("reason", None)


def _phase_for(e: PlanEditor, wanted: str | None) -> str:
    """The phase new tasks go to: ``wanted`` by title, id or the words after its colon, else a new
    phase of that title (``GitHub issues`` without one) at the end, ``depends: none``."""
    title = " ".join((wanted or DEFAULT_PHASE).split())
    low = title.lower()
    for p in e.plan.phases:
        after = p.title.split(":", 1)[1].strip().lower() if ":" in p.title else None
        if low in (p.title.lower(), p.id.lower(), after):
            return p.id
    problem = _heading_problem(title)
    if problem:
        raise MementoError(f"--phase {title!r}: {problem}")
    lines = e.doc.lines
    last = len(lines)
    while last and not lines[last - 1].strip():
        last -= 1
    block = ([""] if last else []) + [f"## {title}", "<!-- depends: none -->"]
    e.insert_lines(last, block)
    made = e.plan.phases[-1]
    return made.id


def _heading_problem(title: str) -> str:
    if not title or title.lower() == "meta":
        return "not a phase title"
    if any(c in title for c in "\n\r#<>[]`") or title != defused_title(title):
        return "a phase title is plain words (no #, brackets, backticks or control characters)"
    return ""


def _add(e: PlanEditor, phase_id: str, new: list[tuple[str, str, IssueFields]], repo: str, tasks: dict,
         result: ImportResult) -> None:
    """The new tasks at the end of ``phase_id``, in issue order."""
    at = _end_of_phase(e, phase_id)
    lines: list[str] = []
    for task_id, title, fields in new:
        values, accept = _task_values(fields)
        lines.append(f"- [ ] {task_id} {title}")
        lines += [f"  - {key}: {values[key]}" for key in SCALAR_FIELDS if key in values]
        lines += [f"  - accept: {a}" for a in accept]
        tasks[task_id] = {"repo": repo, "number": fields.number, "title": title, "fields": values, "accept": accept}
        result.added.append(task_id)
        _say_invalid(task_id, fields, result)
    before = e.doc.lines[at - 1].strip() if at else ""
    if before and not before.startswith("- [") and not e.doc.lines[at - 1].startswith((" ", "\t")):
        lines.insert(0, "")  # after a heading's comment lines: a blank line, as a person writes it
    e.insert_lines(at, lines)


def _end_of_phase(e: PlanEditor, phase_id: str) -> int:
    """The line after which a task goes at the end of ``phase_id``: its last task's last line,
    else its last non-blank line before the next level-2 heading."""
    plan = e.plan
    phase = plan.phase(phase_id)
    assert phase is not None
    if phase.task_ids:
        last = max((t for t in plan.tasks if t.phase == phase_id), key=lambda t: t.line)
        return last.end_line
    later = [p.line for p in plan.phases if p.line > phase.line]
    stop = min(later) - 1 if later else len(e.doc.lines)
    while stop > phase.line and not e.doc.lines[stop - 1].strip():
        stop -= 1
    return stop


def _commit(ws: Workspace, config, result: ImportResult) -> str | None:
    """One commit of the plan (a person's other changes to it go along, as with any plan commit)."""
    from ..git.commit import commit_paths
    from ..git.commit_fast import commit_here
    from ..git.repo import is_repo

    if not is_repo(ws.root):
        result.commit_error = f"{ws.root} is not a git repository: the plan was changed, not committed"
        return None
    body = [f"{label}: {listed(ids, 20)}" for label, ids in (
        ("Added", result.added), ("Updated", result.updated), ("Skipped (closed on GitHub)", result.skipped),
        ("Reopened", result.reopened)) if ids]
    message = f"memento: import GitHub issues from {result.repo}\n\n" + "\n".join(body)
    try:
        return commit_paths(ws.root, [PLAN_REL], message, author=config.author,
                            build=commit_here)
    except MementoError as exc:
        if "nothing to commit" in str(exc):
            return None
        result.commit_error = str(exc)
        return None
