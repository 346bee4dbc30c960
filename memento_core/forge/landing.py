"""A phase's pull request (SPEC §19 "Pull requests out", ``land = "pr"``): which phases wait for one,
its state as GitHub says it, and the push and the pull request once a phase is finished.

- :func:`waits`: the phases that may not be picked now, each with the record it waits on. A phase
  whose branch exists is worked on it (again, after a review sent a task back) until its pull
  request is merged. Any other phase waits while another phase is not landed: phases are worked
  one at a time, each from the merged base, so the base branch's plan has a phase's ``[x]`` only
  by its merge. With ``stack = true`` a phase may start on top of a *finished* phase's branch
  whose pull request is open (one unfinished phase at a time still). A pull request closed
  without a merge holds its phase and every later one until a person reopens or merges it.
- :func:`refresh`: each open record's state from GitHub (merged, closed, open).
- :func:`land`: push the phase's branch (the person's git credentials, never the token) with a
  lease on what Memento pushed last, then open ONE pull request, after looking for one with that
  head (a 502 may hide one GitHub made); a later push updates the same pull request's body.

Nothing here raises for GitHub's answers: the caller gets the error and decides (the tick defers
a ForgeUnavailable, says a refused push in the remote's words).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..errors import MementoError
from ..git.objects import show_file
from ..git.remote import remote_said
from ..git.repo import repo_path
from ..git.run import run_git
from ..lines import clipped, safe_text
from ..plan.model import FINISHED, Plan
from ..plan.scan import parse_plan_text
from ..runlog import utc_stamp
from ..status_log import parse_status
from ..workspace import Workspace
from .pulls import PullRecord

WORKING = ("unpushed", "open")  # a record whose phase is still Memento's to push
MAX_BODY = 60000  # GitHub refuses a body over 65,536 characters
MAX_TASK_TEXT = 3000


class PushRefused(MementoError):
    """The remote refused the push (a protected branch, a hook): ``said`` in its own words."""

    def __init__(self, said: str):
        super().__init__(said)
        self.said = said


# ---------------------------------------------------------------- which phases wait


def finished(plan: Plan, phase: str) -> bool:
    """Every task of ``phase`` done or skipped (a phase without tasks is not finished)."""
    tasks = [t for t in plan.tasks if t.phase == phase]
    return bool(tasks) and all(t.status in FINISHED for t in tasks)


def waits(plan: Plan, records: dict[str, PullRecord], stack: bool = False) -> dict[str, PullRecord]:
    """``{phase id: the record it waits on}`` for the phases that may not be picked now (see the
    module docstring)."""
    out: dict[str, PullRecord] = {}
    unlanded = [r for r in records.values() if not r.landed]
    for phase in plan.phases:
        own = records.get(phase.id)
        if own is not None and not own.landed:
            if own.state == "closed":
                out[phase.id] = own
            continue
        blockers = [r for r in unlanded if r.phase != phase.id
                    and not (stack and r.state in WORKING and finished(plan, r.phase))]
        if blockers:
            blockers.sort(key=lambda r: (r.phase not in phase.depends, r.state != "closed"))
            out[phase.id] = blockers[0]
    return out


def passed_over(plan: Plan, records: dict[str, PullRecord], stack: bool = False
                ) -> tuple[frozenset[str], PullRecord | None]:
    """(the tasks a pick passes over because their phase waits, the record the first of them that
    could otherwise run waits on: what a tick with nothing else to pick says)."""
    from ..scheduler import open_phases, pickable

    held = waits(plan, records, stack)
    if not held:
        return frozenset(), None
    skipped = frozenset(t.id for t in plan.tasks if t.phase in held)
    opened = {p.id for p in open_phases(plan)}
    first = next((t for t in plan.tasks if t.phase in held and t.phase in opened
                  and pickable(t, plan.meta.max_retries, plan)), None)
    return skipped, (held[first.phase] if first is not None else None)


def unmerged(records: dict[str, PullRecord]) -> PullRecord | None:
    """A record whose phase is not landed: every task done is not the plan complete while it is there."""
    return next((r for r in records.values() if not r.landed), None)


def wait_message(rec: PullRecord) -> str:
    """What a tick that waits on ``rec`` says (the pull request's number and address)."""
    if rec.state == "closed":
        return (f"⚠️ PULL REQUEST CLOSED — #{rec.number} ({rec.phase}) was closed without a merge: {rec.url}; "
                f"reopen it, or merge {rec.branch} into {rec.base} yourself, and the next tick goes on")
    if rec.number and rec.checks == "failing":
        names = ", ".join(c.name for c in rec.failing) or "a required check"
        return (f"⚠️ CHECKS FAILING — pull request #{rec.number} ({rec.phase}): {names}: {rec.url}; fix it "
                f"with a push to {rec.branch} or a task in the phase, and the next tick looks again")
    if rec.number:
        return f"⏳ WAITING FOR PULL REQUEST #{rec.number} ({rec.phase}) to be merged: {rec.url}"
    why = f": {rec.error}" if rec.error else ""
    return f"⏳ WAITING — {rec.phase} is finished on {rec.branch}, not pushed as a pull request yet{why}"


# ---------------------------------------------------------------- GitHub's word on each record


def refresh(client, repo: str, rec: PullRecord) -> PullRecord:
    """``rec`` with the state GitHub gives its pull request (merged, closed, open); ForgeError as raised."""
    data = client.pull(repo, rec.number)
    if data.get("merged") is True or data.get("merged_at"):
        state = "merged"
    elif data.get("state") == "closed":
        state = "closed"
    else:
        state = "open"
    url = data.get("html_url") if isinstance(data.get("html_url"), str) else rec.url
    return replace(rec, state=state, url=url, updated=utc_stamp())


# ---------------------------------------------------------------- the push


def plan_at(root: Path, ref: str) -> Plan | None:
    """The plan as ``ref`` holds it (None when it has none)."""
    data = show_file(root, ref, repo_path(root, "docs/MASTER_PLAN.md"))
    return parse_plan_text(data.decode("utf-8", "replace")) if data is not None else None


def remote_tip(root: Path, remote: str, branch: str) -> str:
    """The commit ``branch`` has on ``remote`` now ('' when it has none); MementoError when git cannot ask."""
    proc = run_git(root, ["ls-remote", "--heads", remote, f"refs/heads/{branch}"], check=False)
    if proc.returncode != 0:
        raise MementoError(f"git ls-remote {remote} failed: " + _words(proc))
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition("\t")
        if ref == f"refs/heads/{branch}":
            return sha
    return ""


def push(root: Path, remote: str, rec: PullRecord, sha: str) -> None:
    """``sha`` to the remote's ``rec.branch``, expecting it where Memento pushed it last (absent the
    first time): a commit someone else pushed there is never overwritten. PushRefused in the
    remote's words; MementoError for anything else."""
    there = remote_tip(root, remote, rec.branch)
    if there == sha:
        return  # a push that landed though its answer was lost
    if there and there != rec.head:
        raise PushRefused(f"{remote}'s branch {rec.branch} is at {there[:12]}, which Memento did not push "
                          f"(someone pushed to it); Memento does not overwrite it: merge it into the local "
                          f"{rec.branch}, or delete the remote branch")
    lease = f"refs/heads/{rec.branch}:{there}"
    proc = run_git(root, ["push", "--porcelain", "--no-verify", f"--force-with-lease={lease}", remote,
                          f"{sha}:refs/heads/{rec.branch}"], check=False)
    if proc.returncode == 0:
        return
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    said = remote_said(out, any_rejection=True)
    if said:
        raise PushRefused(clipped(safe_text(said), 600))
    raise MementoError(f"git push {remote} {rec.branch} failed: " + _words(proc))


def _words(proc) -> str:
    return clipped(" ".join(proc.stderr.decode("utf-8", "replace").split()), 400) or f"exit code {proc.returncode}"


# ---------------------------------------------------------------- the pull request


def open_or_update(client, repo: str, rec: PullRecord, title: str, body: str, base: str) -> PullRecord:
    """The pull request of ``rec.branch`` into ``base``: found (any state: GitHub may have made it
    behind a 502), else created; a found open one gets ``body``. ``rec`` with its number, address
    and state."""
    owner = repo.split("/", 1)[0]
    number, url, state = rec.number, rec.url, rec.state
    if not number:
        found = client.pulls_with_head(repo, owner, rec.branch)
        live = [p for p in found if p.get("state") == "open"] or found
        if live:
            number, url = int(live[0]["number"]), str(live[0].get("html_url") or "")
            state = "merged" if live[0].get("merged_at") else ("closed" if live[0].get("state") == "closed" else "open")
        else:
            made = client.create_pull(repo, title, rec.branch, base, body)
            number, url, state = int(made.get("number") or 0), str(made.get("html_url") or ""), "open"
            if not number:
                # imported here: a tick that lands nothing never loads urllib and ssl
                from .github import ForgeError

                raise ForgeError("GitHub answered the new pull request without its number")
            return replace(rec, number=number, url=url, state=state, error="", updated=utc_stamp())
    if state == "open":
        client.update_pull_body(repo, number, body)
    return replace(rec, number=number, url=url, state=state, error="", updated=utc_stamp())


def root_base(records: dict[str, PullRecord], rec: PullRecord) -> str:
    """The branch ``rec``'s work lands on: its base, or (stacked on another phase's branch) that
    phase's, down to a branch that is no phase's. A stacked pull request targets it too, so a
    merge always reaches the base branch (it shows the phases below it until they are merged)."""
    by_branch = {r.branch: r for r in records.values()}
    base, seen = rec.base, {rec.branch}
    while base in by_branch and base not in seen:
        seen.add(base)
        base = by_branch[base].base
    return base


def clipped_title(title: str) -> str:
    """A pull request's title: the phase's, on one line (GitHub takes 256 characters)."""
    return clipped(safe_text(" ".join(title.split())), 250) or "Memento phase"


def body(ws: Workspace, plan: Plan, rec: PullRecord, repo: str) -> str:
    """Each task of the phase: its id and title, verify command and output, the review's verdict
    and its status entry; ``Closes #N`` for each ``GH-<n>`` task."""
    from .records import load_state

    phase = next((p for p in plan.phases if p.id == rec.phase), None)
    title = phase.title if phase is not None else rec.phase
    entries = _last_success(ws)
    imported = load_state(ws)["tasks"]
    # Text from the plan, the issues and the agents' runs stays in code spans and blocks: there a
    # "Fixes #3" closes nothing and an @name pings nobody; only the Closes lines below are Memento's.
    parts = [f"Memento worked through {_code(title)} on `{rec.branch}`. Every task below passed its "
             "verify command; this pull request is the phase's only way onto the base branch.", ""]
    closes = []
    for task in (t for t in plan.tasks if t.phase == rec.phase):
        mark = "skipped" if task.status == "-" else "done" if task.status == "x" else f"[{task.status}]"
        parts.append(f"### {task.id} {_code(task.title)} ({mark})")
        if task.verify:
            parts.append(f"- verify: {_code(task.verify)}")
        entry = entries.get(task.id)
        if entry is not None:
            for name in ("Verify Output", "Review", "Findings"):
                value = entry.field(name)
                if value:
                    parts.append(f"- {name.lower()}: {_code(value)}")
            lines = "\n".join(safe_text(f"{k}: {v}") for k, v in entry.fields)
            parts.append("")
            parts.append("<details><summary>status entry</summary>\n")
            parts.append(_fenced(clipped(lines, MAX_TASK_TEXT)))
            parts.append("</details>")
        elif task.status == "-" and task.reason:
            parts.append(f"- reason: {_code(task.reason)}")
        parts.append("")
        m = re.fullmatch(r"GH-(\d+)", task.id)
        if m and task.status == "x":
            there = imported.get(task.id, {}).get("repo") if isinstance(imported.get(task.id), dict) else None
            closes.append(f"Closes #{m.group(1)}" if there in (None, repo) else f"Closes {there}#{m.group(1)}")
    text = "\n".join(parts + closes).rstrip() + "\n"
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY - 200] + "\n\n(cut: the status log has the rest)\n\n" + "\n".join(closes) + "\n"
    return text


def _last_success(ws: Workspace) -> dict:
    """``{task id: its newest SUCCESS entry}`` in TICK_STATUS.md (the archive is older than any
    unmerged phase's work)."""
    found = {}
    for entry in parse_status(ws.status_path):
        task, status = entry.field("Task") or "", entry.field("Status") or ""
        if "SUCCESS" in status and task:
            found[task.split()[0].strip("`:")] = entry
    return found


def _inline(text: str) -> str:
    return clipped(safe_text(" ".join(str(text).split())), 500)


def _code(text: str) -> str:
    text = _inline(text)
    ticks = "`" * (1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fenced(text: str) -> str:
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    return f"{fence}\n{text}\n{fence}"
