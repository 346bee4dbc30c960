"""Which tasks wait for a person: a verify the architect changed, not yet acknowledged (SPEC §13, §16).

The architect repairs a blocked task by editing it, and its verify is what judges the
worker: a weakened one (`true`) would pass a task whose code is still broken. Each verify
command it changes is listed in ``.memento/verify_changes.json`` (verify_changes.py) until
a person runs `memento architect --ack [TASK]` or presses the dashboard's `v`; while its
task is listed (:func:`held_tasks`), the pick passes over it (tick/pick.py, the parallel crew,
the fleet's claims), says so once per tick in logs/cron.log, and the other tasks run. When
nothing else can run, the tick waits for the person (tick/pick.py). After the acknowledgement
the task is picked like any other.

In a fleet (SPEC §12 "Across machines") the list is first brought in line with the branch's
history (:func:`history`): a change the architect made on another host is held here
too, and an acknowledgement another host committed releases it here. This sits below the
tick and the fleet, which both ask it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from . import verify_changes as vc
from .errors import MementoError
from .git.objects import show_file
from .git.repo import repo_path
from .git.run import run_git
from .plan.model import Plan
from .plan.scan import parse_plan_text
from .runlog import cron_log
from .verify_changes import ACK_COMMAND, VerifyChange, pending, reconcile

if TYPE_CHECKING:
    from .tick.context import TickContext


def from_history(ctx: TickContext, rev: str = "HEAD") -> None:
    """In a fleet, the list in line with the history of ``rev`` (once per commit a tick)."""
    if ctx.config is None or not ctx.config.workers_remote:
        return
    sha = run_git(ctx.root, ["rev-parse", "-q", "--verify", f"{rev}^{{commit}}"], check=False)
    key = sha.stdout.decode().strip()
    if not key or key in ctx.held_seen:
        return
    try:
        reconcile(ctx.ws, *history(ctx.root, key))
    except (MementoError, OSError) as exc:
        cron_log(ctx.ws, f"the verify changes in the history of {key[:12]} could not be read: {exc}")
        return
    ctx.held_seen.add(key)


def held_tasks(ctx: TickContext, plan: Plan, rev: str = "HEAD") -> frozenset[str]:
    """The tasks of ``plan`` whose verify change no person acknowledged yet (logged once a tick);
    in a fleet, as the history of ``rev`` (the commit ``plan`` is read from) says too."""
    from_history(ctx, rev)
    listed = {c.task.upper(): c for c in pending(ctx.ws)}
    found = held_in(plan, listed.values())
    for task_id in sorted(found - ctx.held_said):
        cron_log(ctx.ws, f"{task_id} not picked: the architect changed its verify ({listed[task_id.upper()].describe()}); "
                         f"it runs once a person has checked it: `{ACK_COMMAND} {task_id}`")
    ctx.held_said |= found
    return found


def held_in(plan: Plan, changes: Iterable[VerifyChange]) -> frozenset[str]:
    """The tasks of ``plan`` still to run (``[ ]``) whose verify ``changes`` name: what a pick
    passes over (the tick's through :func:`held_tasks`, `memento status`'s through state_word)."""
    listed = {c.task.upper() for c in changes}
    return frozenset(t.id for t in plan.tasks if t.id.upper() in listed and t.status == " ") if listed else frozenset()


def history(root: Path, rev: str = "HEAD") -> tuple[list[VerifyChange], set[tuple[str, str]]]:
    """From the commits of ``rev``: the verify changes no acknowledgement followed (each the
    newest of its task; old and new read from the plan at that commit and its parent), and
    every (task, digest) an acknowledgement covers. An acknowledgement counts only in a
    commit whose subject is Memento's for it; a change only in an architect's."""
    # --topo-order: a replayed commit may carry an older date than the commits it was put onto
    proc = run_git(root, ["log", "-z", "--topo-order", "--format=%H%n%B", "-E",
                          f"--grep=^({vc.CHANGED_TRAILER}|{vc.ACK_TRAILER}): ", rev, "--"], check=False)
    if proc.returncode != 0:
        return [], set()
    newest: dict[str, tuple[str, str]] = {}  # task -> (digest, commit) of its newest change
    acks: dict[str, set[str]] = {}  # task -> digests acknowledged after its newest change
    acked: set[tuple[str, str]] = set()
    for record in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        sha, _, message = record.strip("\n").partition("\n")
        subject = message.split("\n", 1)[0]
        kind = vc.ACK_TRAILER if subject.startswith(vc.ACK_SUBJECT) else \
            vc.CHANGED_TRAILER if subject.startswith("memento: architect") else None
        if kind is None:
            continue
        for key, task, dig in (m.groups() for m in map(vc.TRAILER_RE.fullmatch, _last_paragraph(message)) if m):
            if key != kind:
                continue
            if kind == vc.ACK_TRAILER:
                acked.add((task, dig))
                if task not in newest:
                    acks.setdefault(task, set()).add(dig)
            elif task not in newest:
                newest[task] = (dig, sha)
    held = [_change_at(root, task, sha) for task, (dig, sha) in newest.items() if dig not in acks.get(task, ())]
    return held, acked


def _last_paragraph(message: str) -> list[str]:
    """The trailer block: the message's last paragraph, each line of it (none when it is the subject)."""
    paragraphs = [p for p in message.strip("\n").split("\n\n") if p.strip()]
    return paragraphs[-1].split("\n") if len(paragraphs) > 1 else []


def _change_at(root: Path, task: str, sha: str) -> VerifyChange:
    """``task``'s verify change by the commit ``sha``, as the plan says before and after it."""
    def verify(rev: str) -> str:
        data = show_file(root, rev, repo_path(root, "docs/MASTER_PLAN.md"))
        if data is None:
            return ""
        found = parse_plan_text(data.decode("utf-8", "replace")).task(task)
        return found.verify if found is not None else ""

    at = run_git(root, ["show", "-s", "--format=%cI", sha], check=False).stdout.decode().strip()
    return VerifyChange(task, verify(f"{sha}^"), verify(sha), at)
