"""The verify commands the architect changed, until a person acknowledges them (SPEC §13, §16).

A task's ``verify:`` is what judges the worker: an architect that weakens it (`true`) would
pass anything. So every verify command an architect run changes (or writes, for a task it
adds) goes into ``.memento/verify_changes.json``, Memento's own file (read-only to a confined
agent), and stays there, shown under "needs you" and notified, until a person runs
``memento architect --ack [TASK]`` or presses the dashboard's key; until then the tick does
not pick that task (held.py, tick/pick.py). A task changed twice keeps
its first old command; changed back to it, it leaves the list.

In a fleet (SPEC §12 "Across machines") the list travels in git: the architect's commit
carries a ``Memento-Verify-Changed: <task> <digest>`` trailer per change, and an
acknowledgement given on a host is listed under ``acked`` here until that host's tick commits
it as ``memento: a person acknowledged the verify of …`` with a ``Memento-Verify-Ack`` trailer
(fleet/docs.py). held.py reads both back from a branch's history and brings the list in
line with it. Only Memento writes those messages (an agent makes no commit that
stays: its refs are put back, git/state.py; the text it controls is never at a line's
start in a message), and an ack names the digest of the verify it saw, so an acknowledgement
never covers a later change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from .lines import read_regular_or_none
from .locks import locked_edit
from .workspace import Workspace

FILE = "verify_changes.json"
ACK_COMMAND = "memento architect --ack"
ACK_HINT = f"their tasks do not run until a person has checked them: `{ACK_COMMAND}`"
CHANGED_TRAILER = "Memento-Verify-Changed"
ACK_TRAILER = "Memento-Verify-Ack"
ACK_SUBJECT = "memento: a person acknowledged the verify of "
TRAILER_RE = re.compile(r"(Memento-Verify-(?:Changed|Ack)): (\S+) ([0-9a-f]{16})")


@dataclass(frozen=True)
class VerifyChange:
    """A verify command an architect run changed (or wrote, for a task it added), kept until a person acknowledges it."""

    task: str
    old: str  # "" for a task the architect added
    new: str
    at: str  # the run's UTC stamp

    def describe(self) -> str:
        """``T-2: `pytest -q` → `true```, or ``T-9 (new): `true```."""
        if not self.old:
            return f"{self.task} (new): `{self.new}`"
        return f"{self.task}: `{self.old}` → `{self.new}`"


def digest(verify: str) -> str:
    """What an acknowledgement names: the verify command it saw (a later change has another)."""
    return hashlib.sha256(verify.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def trailers(kind: str, changes: Sequence[VerifyChange]) -> str:
    """The trailer lines of a commit that changes (``CHANGED_TRAILER``) or acknowledges
    (``ACK_TRAILER``) ``changes``."""
    return "".join(f"{kind}: {c.task} {digest(c.new)}\n" for c in changes)


def ack_message(changes: Sequence[VerifyChange]) -> str:
    """The commit of a person's acknowledgement (made by the tick that publishes it)."""
    return ACK_SUBJECT + ", ".join(c.task for c in changes) + "\n\n" + trailers(ACK_TRAILER, changes)


def path_of(ws: Workspace) -> Path:
    return ws.memento_dir / FILE


def decode(data: bytes) -> list[VerifyChange]:
    try:
        items = json.loads(data.decode("utf-8")).get("changes") if data.strip() else []
        return [VerifyChange(str(i["task"]), str(i["old"]), str(i["new"]), str(i["at"])) for i in items]
    except (ValueError, AttributeError, TypeError, KeyError):
        return []


def decode_acked(data: bytes) -> list[VerifyChange]:
    """The acknowledgements given here that no commit carries yet (a fleet's, see the module's doc)."""
    try:
        items = json.loads(data.decode("utf-8")).get("acked") if data.strip() else []
        return [VerifyChange(str(i["task"]), str(i["old"]), str(i["new"]), str(i["at"])) for i in items or ()]
    except (ValueError, AttributeError, TypeError, KeyError):
        return []


def _encode(changes: Sequence[VerifyChange], acked: Sequence[VerifyChange] = ()) -> bytes:
    body: dict = {"changes": [asdict(c) for c in changes]}
    if acked:
        body["acked"] = [asdict(c) for c in acked]
    return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()


def pending(ws: Workspace) -> list[VerifyChange]:
    """The changes nobody acknowledged yet, oldest first (none when the file is missing or damaged,
    or is no regular file: a FIFO put there never blocks `memento status` or a tick)."""
    data = read_regular_or_none(path_of(ws))
    return decode(data) if data is not None else []


def unpublished(ws: Workspace) -> list[VerifyChange]:
    """The acknowledgements given on this host that its tick has not committed yet."""
    data = read_regular_or_none(path_of(ws))
    return decode_acked(data) if data is not None else []


def _own_file(ws: Workspace) -> Path:
    """The list's path, whatever took its place (a link, a FIFO) removed first: it is Memento's own."""
    path = path_of(ws)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            path.unlink()
    except FileNotFoundError:
        pass
    return path


def changes_of(found: Iterable[tuple[str, str, str]], at: str) -> list[VerifyChange]:
    """An architect run's ``(task, old, new)`` verify changes, stamped."""
    return [VerifyChange(task, old, new, at) for task, old, new in found]


def record(ws: Workspace, changes: Sequence[VerifyChange]) -> None:
    """Add an architect run's verify changes to the list (a task listed already keeps its first old command)."""
    if not changes:
        return

    def add(data: bytes) -> bytes:
        listed = {c.task: c for c in decode(data)}
        for change in changes:
            first = listed.pop(change.task).old if change.task in listed else change.old
            if first != change.new:
                listed[change.task] = VerifyChange(change.task, first, change.new, change.at)
        return _encode(list(listed.values()), decode_acked(data))

    _edit_own(ws, add)


def _edit_own(ws: Workspace, edit) -> None:
    """The tick's (or the architect's) own edit of the list: one the watch of tick/own.py expects."""
    ws.memento_dir.mkdir(parents=True, exist_ok=True)
    locked_edit(_own_file(ws), edit)
    from . import owned

    if owned.watched(path_of(ws)):  # the tick watches it (tick/own.py): this write is Memento's own
        owned.baseline([path_of(ws)])


def published(ws: Workspace, acked: Sequence[VerifyChange]) -> None:
    """``acked`` are committed now: they leave the ``acked`` part."""
    gone = set(acked)

    def drop(data: bytes) -> bytes | None:
        was = decode_acked(data)
        return _encode(decode(data), [c for c in was if c not in gone]) if gone & set(was) else None

    _edit_own(ws, drop)


def reconcile(ws: Workspace, held: Sequence[VerifyChange], acked: set[tuple[str, str]]) -> None:
    """The list in line with a branch's history (held.history): ``held`` listed unless
    acknowledged here already, and what ``acked`` (task, digest) covers gone."""
    def edit(data: bytes) -> bytes | None:
        listed, mine = decode(data), decode_acked(data)
        here = {(c.task, digest(c.new)) for c in mine}
        keep = [c for c in listed if (c.task, digest(c.new)) not in acked]
        names = {c.task for c in keep}
        keep += [c for c in held if c.task not in names and (c.task, digest(c.new)) not in here]
        return _encode(keep, mine) if keep != listed else None

    if held or (acked and pending(ws)):
        _edit_own(ws, edit)


def acknowledge(ws: Workspace, tasks: Sequence[str] = (), *, publish: bool = False) -> list[VerifyChange]:
    """A person saw them: ``tasks`` (every one when empty) leave the list; the ones that did.
    ``publish`` (a fleet): they are kept under ``acked`` until a commit carries them."""
    wanted = {t.upper() for t in tasks}
    gone: list[VerifyChange] = []

    def drop(data: bytes) -> bytes | None:
        listed = decode(data)
        gone[:] = [c for c in listed if not wanted or c.task.upper() in wanted]
        acked = decode_acked(data) + (gone if publish else [])
        return _encode([c for c in listed if c not in gone], acked) if gone else None

    if os.path.lexists(path_of(ws)):
        locked_edit(_own_file(ws), drop)
    return gone
