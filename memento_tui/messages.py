"""App-level messages: the watcher and the workers talk to the App only through these.

What the App then shows lives in its reactives (see app_state.py), which the
screens and widgets watch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from memento_core.runlog import Outcome as TickOutcome

from .snapshot import Snapshot


@dataclass
class FilesChanged(Message):
    """These snapshot parts changed on disk.

    Posted by the watcher (debounced, hash-checked) and after the dashboard's own edits.
    """

    parts: set[str] = field(default_factory=set)

    def can_replace(self, message: Message) -> bool:
        # Two bursts waiting in the queue become one refresh covering both.
        if isinstance(message, FilesChanged):
            message.parts |= self.parts
            return True
        return False


@dataclass
class WatcherTrouble(Message):
    """The watcher hit an error (reported, never silently fatal)."""

    text: str


@dataclass
class SnapshotLoaded(Message):
    """A refresh worker finished reading ``snapshot.parts_read`` from disk."""

    snapshot: Snapshot

    @property
    def parts(self) -> frozenset[str]:
        return self.snapshot.parts_read


@dataclass
class TickFinished(Message):
    """A tick worker finished: its outcome, or None and the error that stopped it."""

    outcome: TickOutcome | None
    error: str = ""


@dataclass
class ActionDone(Message):
    """An edit made through memento_core finished: tell the person what happened."""

    text: str
    error: bool = False
