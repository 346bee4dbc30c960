"""Memento's own documents across hosts (SPEC §12 "Across machines"): committed before a
sync (a rebase needs a clean tree), and merged when a rebase meets a conflict in them: the
remote's version with this host's edits re-applied (:data:`RESOLVERS`: the plan through
plan_merge.py, the status log's entries, the notes read, the state rewritten whole).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import notes, status_log, verify_changes
from ..errors import MementoError
from ..git.run import run_git
from ..git.status import changed_from_head
from ..locks import atomic_write_bytes
from ..workspace import OWN_DOCS
from . import plan_merge
from .host import NOTES_DOC, PLAN, STATE_DOC, STATUS, fleet

if TYPE_CHECKING:
    from ..tick.context import TickContext


def commit_own_docs(ctx: TickContext, *, plan: bool = True) -> None:
    """Memento's own documents as `memento: sync docs` (a rebase needs a clean tree); ``plan``
    False leaves the plan out (HEAD holds a claim the work tree's plan does not have yet).

    CURRENT_STATE.md alone is not worth a commit on every host's every tick (it is
    rewritten by each): put back as committed instead; the next tick writes it again.
    """
    _commit_acks(ctx)
    docs = changed_from_head(ctx.root, [d for d in OWN_DOCS if plan or d != PLAN])
    if docs == [STATE_DOC]:
        run_git(ctx.root, ["checkout", "-q", "HEAD", "--", STATE_DOC])
    elif docs:
        ctx.commit(docs, "memento: sync docs")


def _commit_acks(ctx: TickContext) -> None:
    """The verify changes a person acknowledged on this host (`memento architect --ack`), each
    in a commit of its own that says so, so every host releases the task (verify_changes.py).
    Made here, never by the command itself: a commit while a tick runs would move the refs its
    guards watch."""
    acked = verify_changes.unpublished(ctx.ws)
    if not acked:
        return
    ctx.event(f"👤 VERIFY CHECKED — {', '.join(c.task for c in acked)}",
              [("Verify", "; ".join(c.describe() for c in acked)),
               ("Action", "a person acknowledged the architect's change here; every host runs the task again")])
    if ctx.commit([STATUS], verify_changes.ack_message(acked), sha_in_entry=True):
        verify_changes.published(ctx.ws, acked)


def _resolve(ctx: TickContext, path: str, stages: dict[int, bytes]) -> bool:
    """Resolve a conflicted document in the work tree (the caller stages it): the remote's
    version with this host's edits re-applied. Not made durable: a rebase a crash interrupts
    is aborted by the next tick (:func:`integrate.clean_leftovers`), and this file with it."""
    resolver = RESOLVERS.get(path)
    if resolver is None:
        return False
    upstream, mine = stages.get(2), stages.get(3)  # in a rebase, :2 is the upstream
    if upstream is None or mine is None:
        return False
    try:
        data = resolver(ctx, stages.get(1, b""), upstream, mine)
    except (MementoError, ValueError):
        return False
    if data is None:
        return False
    atomic_write_bytes(ctx.root / path, data, sync=False)
    return True


def merge_plan(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes | None:
    """The remote's plan with this side's edits re-applied where the remote left them alone
    (plan_merge.merge_plan: status, retries, Meta, task definitions, added and removed tasks;
    when both changed one, the remote's stands, never a task done twice). What this side
    loses is kept in ``ctx.fleet.plan_notes`` for a status-log entry after the rebase."""
    notes: list[str] = []
    merged = plan_merge.merge_plan(base, upstream, mine, notes)
    if ctx is not None and notes:
        fleet(ctx).plan_notes.extend(notes)
    return merged


_ENTRY_START = re.compile(r"^##[ \t]+\[", re.M)


def _entries(data: bytes) -> list[str]:
    """The status log's entries as normalised text blocks (the header and separators dropped)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    starts = [m.start() for m in _ENTRY_START.finditer(text)]
    blocks = []
    for i, start in enumerate(starts):
        lines = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)].split("\n")
        while lines and (not lines[-1].strip() or status_log.SEPARATOR_RE.match(lines[-1])):
            lines.pop()
        blocks.append("\n".join(lines) + "\n")
    return blocks


def merge_status(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """The remote's status log plus the entries this side appended (nothing lost, newest last)."""
    known = set(_entries(base)) | set(_entries(upstream))
    data = upstream
    for entry in (e for e in _entries(mine) if e not in known):
        data = status_log.with_entry(data, entry, ctx.ws.status_path)
    return data


def merge_notes(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes | None:
    """The remote's notes with the ones this side marked read marked read; None when this side
    added a note the remote does not have (a person's: resolve by hand)."""
    was = {n.key: n for n in notes.parse_notes_text(base.decode("utf-8", "replace"))}
    theirs = {n.key for n in notes.parse_notes_text(upstream.decode("utf-8", "replace"))}
    ours = notes.parse_notes_text(mine.decode("utf-8", "replace"))
    if any(n.key not in was and n.key not in theirs for n in ours):
        return None
    path = ctx.ws.notes_path
    atomic_write_bytes(path, upstream)
    notes.mark_read(path, [n.key for n in ours if n.read and n.key in was and not was[n.key].read])
    return path.read_bytes()


def merge_state(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """CURRENT_STATE.md is rewritten whole by every tick: the replayed (newer) one."""
    return mine


RESOLVERS = {PLAN: merge_plan, STATUS: merge_status, NOTES_DOC: merge_notes, STATE_DOC: merge_state}
_COMMIT_FIELD = re.compile(r"^(- \*\*Git Commit\*\*: `)([0-9a-f]{7,40})(`)", re.M)


def _fix_commit_shas(ctx: TickContext, moved: dict[str, str]) -> None:
    """A rebase gives commits new ids: the SUCCESS entries' Git Commit fields follow them."""
    path = ctx.ws.status_path
    if not moved or not path.is_file():
        return
    short = {old[:7]: new[:7] for old, new in moved.items()}
    text = path.read_text(encoding="utf-8")
    fixed = _COMMIT_FIELD.sub(lambda m: m.group(1) + short.get(m.group(2)[:7], m.group(2)) + m.group(3), text)
    if fixed != text:
        atomic_write_bytes(path, fixed.encode("utf-8"))


def _say_plan_notes(ctx: TickContext) -> None:
    """The plan edits of this host the rebase could not keep (the remote changed them too)."""
    f = fleet(ctx)
    if f.plan_notes:
        notes, f.plan_notes = f.plan_notes, []
        ctx.event(f"⚠️ PLAN MERGE — the remote's plan kept over {len(notes)} edit(s) made here",
                  [("Reason", "; ".join(notes))])
