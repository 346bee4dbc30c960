"""App-level messages: the watcher and the workers talk to the UI only through these."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from memento_core.runlog import Outcome as TickOutcome

from .snapshot import Snapshot


@dataclass
class FilesChanged(Message):
    """The watcher saw real changes to these snapshot parts (debounced, hash-checked)."""

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
    """A refresh worker finished reading ``parts`` from disk."""

    snapshot: Snapshot
    parts: frozenset[str]


@dataclass
class TickStarted(Message):
    """A tick started from the dashboard (tick now or auto-tick)."""


@dataclass
class TickFinished(Message):
    outcome: TickOutcome | None
    error: str = ""


@dataclass
class ActionDone(Message):
    """An edit made through memento_core finished: tell the person what happened."""

    text: str
    error: bool = False
