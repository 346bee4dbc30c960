"""Status back to the issues (SPEC §19 "Status back"): one comment per task and
change of state, posted during the tick, retried by later ticks until it lands.

At the end of a tick (after its commit is final: the tick's documents may have been folded into
it) each task an import made is compared with the state last seen: a task now ``[x]`` gets a
comment with its commit, one now ``[!]`` one with the reason, one now ``[?]`` the worker's question
(fenced) and how to answer it. The comment is queued in
``.memento/forge_comments.json`` before anything is sent, then posted; what does not land (GitHub
down, rate limited, the token refused) stays queued, the tick goes on (exit code unchanged, a line
in logs/cron.log), and `memento doctor` lists it; a refused token is also one ⚠️ FORGE entry and a
needs-you item until GitHub takes it again (trouble.py). Every comment carries a hidden marker, and a
comment tried before is looked for on the issue first: a 502 that hid a comment GitHub made is
never answered with a second one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import owned
from ..lines import clipped, message_text
from ..runlog import cron_log, utc_stamp
from ..workspace import Workspace
from . import trouble
from .github import ForgeAuthError, ForgeError, ForgeUnavailable

TOLD = ("x", "!", "?")  # the states a comment says (passed, blocked, a question); the others are only remembered
MAX_QUESTION = 3000
MAX_REASON = 1500


def state_path(ws: Workspace) -> Path:
    return ws.memento_dir / "forge_comments.json"


def load(ws: Workspace) -> dict:
    """``{"seen": {task: status}, "count": {task: n}, "pending": [comment…], "last_error", "last_error_at"}``."""
    raw = owned.read(state_path(ws))
    try:
        data = json.loads(raw.decode("utf-8")) if raw and raw != owned.NOT_A_FILE else {}
    except (UnicodeDecodeError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    for key, empty in (("seen", {}), ("count", {}), ("pending", [])):
        if not isinstance(data.get(key), type(empty)):
            data[key] = empty
    data["pending"] = [c for c in data["pending"] if _well_formed(c)]
    return data


def _well_formed(c) -> bool:
    return (isinstance(c, dict) and isinstance(c.get("repo"), str) and isinstance(c.get("number"), int)
            and isinstance(c.get("body"), str) and isinstance(c.get("marker"), str))


def save(ws: Workspace, data: dict) -> None:
    ws.memento_dir.mkdir(exist_ok=True)
    owned.write(state_path(ws), (json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode())


def pending(ws: Workspace) -> list[dict]:
    """The comments waiting to be posted, oldest first (doctor, status)."""
    return load(ws)["pending"]


def seed(ws: Workspace, statuses: dict[str, str]) -> None:
    """Remember the state of tasks just imported (no comment says what they were before Memento)."""
    data = load(ws)
    fresh = {t: s for t, s in statuses.items() if t not in data["seen"]}
    if fresh:
        data["seen"].update(fresh)
        save(ws, data)


# ---------------------------------------------------------------- queue


def queue_changes(ws: Workspace, data: dict, results=()) -> list[str]:
    """Queue one comment per imported task whose state changed to [x] or [!]; the ids queued."""
    from ..plan.scan import parse_plan
    from .records import load_state

    imported = load_state(ws)["tasks"]
    if not imported:
        return []
    plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    reasons = {r.task_id: r.reason for r in results if getattr(r, "reason", "")}
    queued = []
    for task_id, entry in imported.items():
        task = plan.task(task_id)
        if task is None or not isinstance(entry, dict):
            continue
        was = data["seen"].get(task_id, " ")
        data["seen"][task_id] = task.status
        if task.status == was or task.status not in TOLD:
            continue
        repo, number = entry.get("repo"), entry.get("number")
        if not isinstance(repo, str) or not isinstance(number, int):
            continue
        n = int(data["count"].get(task_id, 0)) + 1
        data["count"][task_id] = n
        marker = f"memento:{task_id}:{task.status}:{n}"
        body = (_passed(ws, task) if task.status == "x" else _asked(ws, task) if task.status == "?"
                else _blocked(task, reasons.get(task_id, "")))
        data["pending"].append({"task": task_id, "repo": repo, "number": number, "marker": marker,
                                "body": f"{body}\n\n<!-- {marker} -->", "queued": utc_stamp(), "tries": 0})
        queued.append(task_id)
    return queued


def _passed(ws: Workspace, task) -> str:
    from .pulls import load as load_pulls

    sha = _commit_of(ws, task.id)
    where = f"in commit {sha}" if sha else "marked done in the plan (no commit of its own)"
    said = f"**Memento: {task.id} passed.** Its verify command passed and the work is {where}"
    pull = load_pulls(ws).get(task.phase or "")
    if pull is None:  # land = "direct"
        return (said + ".\n\nThis issue stays open (Memento lands work straight on the base branch): close it "
                "when you have looked.")
    if pull.number:
        return (said + f" on branch `{pull.branch}`.\n\nIt lands with pull request #{pull.number} ({pull.url}), "
                "which closes this issue when it is merged.")
    return (said + f" on branch `{pull.branch}`.\n\nIt lands with the pull request Memento opens for "
            f"{pull.phase} once the phase's last task passes; merging it closes this issue.")


def _blocked(task, reason: str) -> str:
    why = clipped(message_text(reason or f"it failed {task.retries} time(s)"), MAX_REASON)
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", why)), default=0))
    return (f"**Memento: {task.id} is blocked** after {task.retries} attempt(s); a person is needed. "
            f"The last attempt failed:\n\n{fence}\n{why}\n{fence}\n\n"
            f"Fix what it needs (a note, the issue's ```memento block, the plan), then `memento reset {task.id}`.")


def _asked(ws: Workspace, task) -> str:
    """A worker's question (SPEC §18), fenced as the agent wrote it, and the ways to answer."""
    from ..questions import question_of

    question = question_of(ws, task)
    choices = "".join(f"\n{n}. {clipped(message_text(c), 200)}" for n, c in enumerate(question.choices, 1))
    text = clipped(message_text(question.text), MAX_QUESTION) + (f"\n\nChoices:{choices}" if choices else "")
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    how = (f"`memento answer {task.id} --choice N`" if question.choices else f"`memento answer {task.id} TEXT`")
    return (f"**Memento: {task.id} asks a question** and waits for an answer (no retry is counted). "
            f"The worker wrote:\n\n{fence}\n{text}\n{fence}\n"
            f"\nAnswer with {how} in the project, with `w` on the question in the dashboard "
            "(Needs you), or by replying to the question in the project's chat. An answer here on "
            "GitHub is not read.")


def _commit_of(ws: Workspace, task_id: str) -> str:
    """The commit that completed ``task_id`` (its subject ``memento: complete GH-12 …``), or ''."""
    from ..git.run import run_git

    proc = run_git(ws.root, ["log", "-1", "--format=%H", "-E", f"--grep=^memento: complete {task_id}( |$)"],
                   check=False)
    sha = proc.stdout.decode("ascii", "replace").strip()
    return sha if proc.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else ""


# ---------------------------------------------------------------- post


def post_pending(ws: Workspace, data: dict, client, *, look_first: bool = False) -> tuple[int, str]:
    """Post the queued comments in order; (how many landed, why the rest wait or ''). A comment
    tried before is looked for on the issue first; every one is with ``look_first`` (a fleet:
    each host sees the same task pass, and the first to post it is enough)."""
    landed, problem = 0, ""
    for comment in list(data["pending"]):
        try:
            if (comment.get("tries") or look_first) and _already_there(client, comment):
                data["pending"].remove(comment)
                landed += 1
                continue
            client.create_comment(comment["repo"], comment["number"], comment["body"])
        except ForgeAuthError as exc:  # no later tick gets past this until a person acts: said once
            comment["tries"] = int(comment.get("tries", 0)) + 1
            problem = str(exc)
            trouble.refused(ws, None, exc, f"posting a comment on issue #{comment['number']} of {comment['repo']}")
            break
        except ForgeUnavailable as exc:
            comment["tries"] = int(comment.get("tries", 0)) + 1
            problem = str(exc)
            break  # the rest would meet the same: the next tick tries again
        except ForgeError as exc:  # this issue (gone, locked): the others may still land
            comment["tries"] = int(comment.get("tries", 0)) + 1
            comment["error"] = str(exc)
            problem = str(exc)
            continue
        data["pending"].remove(comment)
        landed += 1
    if landed:
        trouble.works(ws)  # GitHub took the token: a refusal before is over
    return landed, problem


def _already_there(client, comment: dict) -> bool:
    marker = f"<!-- {comment['marker']} -->"
    return any(isinstance(c, dict) and marker in str(c.get("body") or "")
               for c in client.issue_comments(comment["repo"], comment["number"]))


def after_tick(ws: Workspace, config, results=(), *, client=None) -> None:
    """The tick's part (see the module docstring). Never raises: a down forge never fails a tick."""
    try:
        _after_tick(ws, config, results, client)
    except Exception as exc:  # noqa: BLE001 - the tick's work is done and committed whatever GitHub says
        try:
            cron_log(ws, f"forge: comments not posted: {type(exc).__name__}: {clipped(str(exc), 300)}")
        except OSError:
            pass


def _after_tick(ws: Workspace, config, results, client) -> None:
    from .github import client_for

    data = load(ws)
    queued = queue_changes(ws, data, results)
    if queued or data["pending"]:
        save(ws, data)  # queued before anything is sent: a tick killed now posts it next time
    if not data["pending"]:
        return
    try:
        client = client if client is not None else client_for(config)
    except ForgeError as exc:
        landed, problem = 0, str(exc)
        if isinstance(exc, ForgeAuthError):  # no token at all: the same trouble as a refused one
            trouble.refused(ws, config, exc, "posting comments on the issues")
    else:
        landed, problem = post_pending(ws, data, client, look_first=bool(config.workers_remote))
    if problem:
        data["last_error"], data["last_error_at"] = problem, utc_stamp()
        waiting = len(data["pending"])
        cron_log(ws, f"forge: {waiting} comment(s) wait for GitHub, tried again next tick: {clipped(problem, 300)}")
    else:
        data.pop("last_error", None)
        data.pop("last_error_at", None)
    if landed:
        cron_log(ws, f"forge: {landed} comment(s) posted")
    save(ws, data)
