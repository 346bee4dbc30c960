"""A watchdog observer on docs/, logs/ and .memento/ that reports which snapshot parts changed.

Design (SPEC §4 pitfalls, toolong's watcher):
- directories are watched, not files, so an editor's save-by-rename (write a
  temporary file, rename it over the original) is seen as moved/created events;
- events are debounced (~150 ms of quiet, at most ``max_delay`` after the first
  event of a burst) and coalesced into one set of parts per flush;
- document changes are confirmed by a content hash, so a touch or a write of
  the same bytes refreshes nothing;
- an exception in the handler or the flush thread is reported through
  ``on_error`` and never kills the observer silently;
- when inotify is unavailable (watch limit reached) it falls back to polling.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from memento_core.workspace import Workspace

from .snapshot import CHECKPOINT, CONFIG, LOGS, NOTES, PLAN, STATE, STATUS

WATCHED_DIRS = ("docs", "logs", ".memento")
DEBOUNCE = 0.15
MAX_DELAY = 0.5

_DOCS = {
    "MASTER_PLAN.md": PLAN,
    "TICK_STATUS.md": STATUS,
    "HUMAN_NOTES.md": NOTES,
    "CURRENT_STATE.md": CHECKPOINT,
}
# Files whose content decides whether a change is real (hash-compared).
_HASHED = frozenset({PLAN, STATUS, NOTES, CHECKPOINT, CONFIG})


def classify(ws: Workspace, path: str) -> tuple[str, Path] | None:
    """(part, file) for a path the dashboard cares about, else None."""
    try:
        rel = Path(path).resolve().relative_to(ws.root.resolve())
    except (ValueError, OSError):
        return None
    parts = rel.parts
    if not parts:
        return None
    if parts[0] == "docs" and len(parts) == 2 and parts[1] in _DOCS:
        return _DOCS[parts[1]], ws.root / rel
    if parts[0] == ".memento":
        if rel.name == "state.json" or (len(parts) == 3 and parts[1] == "claims" and rel.suffix == ".json"):
            return STATE, ws.root / rel
        if len(parts) == 2 and rel.name in ("verify_changes.json", "forge_pulls.json", "forge_trouble.json"):
            return PLAN, ws.root / rel  # in the summary, read with the plan
        return None
    if parts[0] == "logs":
        if len(parts) >= 2 and parts[1] == "status_archive":
            return STATUS, ws.root / rel
        if len(parts) == 2 and rel.name.startswith("tick_") and rel.suffix == ".log":
            return LOGS, ws.root / rel
        return None
    if len(parts) == 1 and rel.name == "memento.toml":
        return CONFIG, ws.root / rel
    if len(parts) == 1 and rel.name == ".memento_alert":
        return STATE, ws.root / rel
    return None


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: WorkspaceWatcher):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            if event.event_type in ("opened", "closed_no_write"):
                return
            if event.is_directory and event.event_type in ("created", "moved"):
                target = Path(getattr(event, "dest_path", "") or event.src_path)
                if target.name in WATCHED_DIRS and target.parent == self.watcher.ws.root:
                    self.watcher._watch_sub(target)
            paths = [event.src_path]
            dest = getattr(event, "dest_path", "")
            if dest:
                paths.append(dest)
            self.watcher._record(paths)
        except Exception as exc:  # an exception here would kill the observer thread
            self.watcher._report(exc)


class WorkspaceWatcher:
    """Calls ``on_change(parts)`` from its own thread after a debounced burst of changes."""

    def __init__(
        self,
        ws: Workspace,
        on_change: Callable[[frozenset[str]], None],
        on_error: Callable[[str], None] = lambda message: None,
        *,
        debounce: float = DEBOUNCE,
        max_delay: float = MAX_DELAY,
        polling: bool = False,
    ):
        self.ws = ws
        self.on_change = on_change
        self.on_error = on_error
        self.debounce = debounce
        self.max_delay = max_delay
        self.polling = polling
        self._observer = None
        self._pending: dict[Path, str] = {}
        self._first_event = 0.0
        self._last_event = 0.0
        self._cond = threading.Condition()
        self._stopped = False
        self._hashes: dict[Path, str | None] = {}
        self._flusher: threading.Thread | None = None
        self.flushes = 0

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        for name in _DOCS:
            path = self.ws.root / "docs" / name
            self._hashes[path] = _digest(path)
        self._hashes[self.ws.config_path] = _digest(self.ws.config_path)
        self._start_observer(polling=self.polling)
        self._flusher = threading.Thread(target=self._flush_loop, name="memento-watch-flush", daemon=True)
        self._flusher.start()

    def _start_observer(self, polling: bool) -> None:
        if not polling:
            try:
                self._observer = self._make(Observer)
                self.polling = False
                return
            except OSError as exc:  # inotify watch or instance limit
                self._report(f"inotify unavailable ({exc}); polling instead")
        self._observer = self._make(lambda: PollingObserver(timeout=0.5))
        self.polling = True

    def _make(self, factory) -> object:
        observer = factory()
        self._handler = _Handler(self)
        self._watched: set[str] = set()
        observer.schedule(self._handler, str(self.ws.root), recursive=False)
        observer.daemon = True
        self._observer = observer
        for sub in WATCHED_DIRS:
            self._watch_sub(self.ws.root / sub)
        observer.start()
        return observer

    def _watch_sub(self, path: Path) -> None:
        """Watch one of docs/, logs/, .memento/ (also when it appears after start)."""
        if path.name in self._watched or not path.is_dir() or self._observer is None:
            return
        self._observer.schedule(self._handler, str(path), recursive=True)
        self._watched.add(path.name)

    @property
    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def ensure_alive(self) -> bool:
        """Restart a dead observer (polling this time); True when one was restarted."""
        if self._stopped or self.alive:
            return False
        self._report("the file watcher stopped; restarted it in polling mode")
        self._start_observer(polling=True)
        return True

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        observer = self._observer
        if observer is not None:
            observer.stop()
            if observer.is_alive():
                observer.join(timeout=5)
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(timeout=5)

    # ---------------------------------------------------------------- events

    def _record(self, paths: list[str]) -> None:
        found = [c for c in (classify(self.ws, p) for p in paths if p) if c is not None]
        if not found:
            return
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first_event = now
            for part, path in found:
                self._pending[path] = part
            self._last_event = now
            self._cond.notify_all()

    def _report(self, exc: object) -> None:
        message = exc if isinstance(exc, str) else f"file watcher: {type(exc).__name__}: {exc}"
        try:
            self.on_error(message)
        except Exception:
            pass

    def _flush_loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                # Wait for quiet, but never longer than max_delay after the burst began.
                while not self._stopped:
                    now = time.monotonic()
                    quiet_at = self._last_event + self.debounce
                    latest = self._first_event + self.max_delay
                    wake = min(quiet_at, latest)
                    if now >= wake:
                        break
                    self._cond.wait(wake - now)
                if self._stopped:
                    return
                pending, self._pending = self._pending, {}
            try:
                parts = self._confirm(pending)
                if parts:
                    self.flushes += 1
                    self.on_change(frozenset(parts))
            except Exception as exc:
                self._report(exc)

    def _confirm(self, pending: dict[Path, str]) -> set[str]:
        parts: set[str] = set()
        for path, part in pending.items():
            if part in _HASHED:
                digest = _digest(path)
                if path in self._hashes and self._hashes[path] == digest:
                    continue
                self._hashes[path] = digest
            parts.add(part)
        return parts

    def forget(self, part_path: Path) -> None:
        """Drop the remembered hash of a file (the next change to it always counts)."""
        self._hashes.pop(part_path, None)


def _digest(path: Path) -> str | None:
    from memento_core.lines import read_regular_or_none

    data = read_regular_or_none(path, follow=True)  # a FIFO an agent left is never opened (SPEC §13)
    return hashlib.blake2b(data, digest_size=16).hexdigest() if data is not None else None
