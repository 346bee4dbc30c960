"""The verify commands the architect changed, until a person acknowledges them (SPEC §13, §16).

A task's ``verify:`` is what judges the worker: an architect that weakens it (`true`) would
pass anything. So every verify command an architect run changes (or writes, for a task it
adds) goes into ``.memento/verify_changes.json``, Memento's own file (read-only to a confined
agent), and stays there, shown under "needs you" and notified, until a person runs
``memento architect --ack [TASK]`` or presses the dashboard's key; until then the tick does
not pick that task (tick/held.py). A task changed twice keeps
its first old command; changed back to it, it leaves the list.
"""

from __future__ import annotations

import json
import os
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


@dataclass(frozen=True)
class VerifyChange:
    task: str
    old: str  # "" for a task the architect added
    new: str
    at: str  # the run's UTC stamp

    def describe(self) -> str:
        """``T-2: `pytest -q` → `true```, or ``T-9 (new): `true```."""
        if not self.old:
            return f"{self.task} (new): `{self.new}`"
        return f"{self.task}: `{self.old}` → `{self.new}`"


def path_of(ws: Workspace) -> Path:
    return ws.memento_dir / FILE


def decode(data: bytes) -> list[VerifyChange]:
    try:
        items = json.loads(data.decode("utf-8")).get("changes") if data.strip() else []
        return [VerifyChange(str(i["task"]), str(i["old"]), str(i["new"]), str(i["at"])) for i in items]
    except (ValueError, AttributeError, TypeError, KeyError):
        return []


def _encode(changes: Sequence[VerifyChange]) -> bytes:
    return (json.dumps({"changes": [asdict(c) for c in changes]}, indent=2, ensure_ascii=False) + "\n").encode()


def pending(ws: Workspace) -> list[VerifyChange]:
    """The changes nobody acknowledged yet, oldest first (none when the file is missing or damaged,
    or is no regular file: a FIFO put there never blocks `memento status` or a tick)."""
    data = read_regular_or_none(path_of(ws))
    return decode(data) if data is not None else []


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
        return _encode(list(listed.values()))

    ws.memento_dir.mkdir(parents=True, exist_ok=True)
    locked_edit(_own_file(ws), add)
    from . import owned

    if owned.watched(path_of(ws)):  # the tick watches it (tick/ownstate.py): this write is Memento's own
        owned.baseline([path_of(ws)])


def acknowledge(ws: Workspace, tasks: Sequence[str] = ()) -> list[VerifyChange]:
    """A person saw them: ``tasks`` (every one when empty) leave the list; the ones that did."""
    wanted = {t.upper() for t in tasks}
    gone: list[VerifyChange] = []

    def drop(data: bytes) -> bytes | None:
        listed = decode(data)
        gone[:] = [c for c in listed if not wanted or c.task.upper() in wanted]
        return _encode([c for c in listed if c not in gone]) if gone else None

    if os.path.lexists(path_of(ws)):
        locked_edit(_own_file(ws), drop)
    return gone
