"""Long-term memory (SPEC §9): memory/ as its own git repository, written through one safe tool.

Layers: ``journal/YYYY-MM-DD.md`` (every tick appends), ``knowledge/{lessons,
decisions,people}/`` (front matter entries, CRUD-checked writes),
``.archive/`` (weekly gc). MEMORY.md is generated; PERSONA.md belongs to people.

The tick calls ``commit_unattributed`` after the agent (tick/attempt.py) and ``record_tick``
at the end of a tick; the prompt calls ``tree_for_prompt``; the dashboard
uses ``list_entries``, ``read_entry`` and ``entry_history``.
"""

from __future__ import annotations

import json
import time

from ..errors import MementoError
from ..lines import read_text_file
from ..locks import atomic_write_text
from ..workspace import Workspace
from .entries import MemoryEntry
from .journal import record_tick
from .store import (
    UnattributedWrite,
    commit_leftovers,
    ensure_store,
    history,
    is_store,
    jail,
    locked,
    unattributed_writes,
)
from .tree import list_entries, tree_for_prompt


def init_store(ws: Workspace) -> bool:
    """Create memory/ as its own repository if it is not one yet (`memento init`); True if made."""
    if is_store(ws.memory_dir):
        return False
    with locked(ws):
        pass
    return True


def commit_unattributed(ws: Workspace, task_id: str) -> list[str]:
    """Commit raw writes into memory/ that bypassed `memento memory write` (the tick, after the agent).

    Their commit says "unattributed write by <task>: paths" with the trailer
    ``Memento-Memory: unattributed``, and a line goes to
    ``.memento/memory_unattributed.jsonl`` for `memento doctor`. Returns the commits.
    """
    if not ws.memory_dir.is_dir():
        return []
    with locked(ws) as root:  # the tick's own journal waiting for its commit goes on waiting
        return [sha for _, sha in commit_leftovers(ws, root, task_id, flush=False)]


GC_EVERY_DAYS = 7


def weekly_gc(ws: Workspace, now: float | None = None) -> bool:
    """Run `memento memory gc` when the last run is a week old (the tick, after its work).

    The time of the last run is kept in ``.memento/memory_gc.json``; True when gc ran.
    """
    if not ws.memory_dir.is_dir():
        return False
    now = time.time() if now is None else now
    stamp = ws.memento_dir / "memory_gc.json"
    try:
        last = float(json.loads(read_text_file(stamp))["at"])
    except (OSError, ValueError, KeyError, TypeError):
        last = 0.0
    if now - last < GC_EVERY_DAYS * 86400:
        return False
    from .gc import gc as run_gc  # here: only the first tick of a week runs it

    run_gc(ws)
    atomic_write_text(stamp, json.dumps({"at": now}) + "\n")
    return True


def read_entry(ws: Workspace, path: str) -> str:
    """The text of one entry (MEMORY.md and PERSONA.md included); MementoError if refused or missing."""
    rel, target = jail(ws, path, writing=False)
    try:
        return read_text_file(target, "replace")
    except FileNotFoundError:
        raise MementoError(f"memory/{rel} does not exist") from None
    except IsADirectoryError:
        raise MementoError(f"memory/{rel} is a folder") from None


def entry_history(ws: Workspace, path: str, n: int = 50) -> list[tuple[str, str, str]]:
    """(sha, ISO date, subject) of the commits that touched ``path``, newest first."""
    rel, _ = jail(ws, path, writing=False)
    return [(c.sha, c.date, c.subject) for c in history(ws, rel, n)]


__all__ = [
    "MemoryEntry",
    "UnattributedWrite",
    "commit_unattributed",
    "ensure_store",
    "entry_history",
    "init_store",
    "list_entries",
    "read_entry",
    "record_tick",
    "tree_for_prompt",
    "unattributed_writes",
    "weekly_gc",
]
