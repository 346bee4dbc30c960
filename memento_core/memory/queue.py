"""Memory writes from a sandboxed worker (SPEC §13): queued, then applied by the tick.

In the sandbox memory/ is read-only, so `memento memory write` run by the
worker checks what it can (summary, path jail, content) and leaves a request
in ``.memento/worker/memory/``. After the agent exits the tick applies the
queue through ``write_entry`` (every check of SPEC §9 again, the lock, one
commit each). Nothing in a request is trusted: the source is always the
running task, a request that is not a small regular JSON file is dropped,
and at most ``MAX_REQUESTS`` are read.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import MementoError
from ..locks import atomic_write_text
from ..workspace import Workspace
from .store import jail

MAX_REQUESTS = 100
MAX_REQUEST_BYTES = 1024 * 1024
_FIELDS = ("path", "content", "summary", "mode", "tags", "priority")


@dataclass(frozen=True)
class Applied:
    """One queued request and what became of it: the write's action, or why it was refused."""

    name: str
    path: str
    action: str  # create | append | update | conflict | noop | journal | refused
    detail: str = ""
    commit: str | None = None


def queue_dir(ws: Workspace) -> Path:
    return ws.worker_dir / "memory"


def must_queue(ws: Workspace) -> bool:
    """A write from inside the sandbox, where memory/ cannot be written: it is queued instead."""
    from ..sandbox import inside

    if not inside():
        return False
    if not ws.memory_dir.is_dir():
        return True  # the store is made by the tick, outside the sandbox
    return not (os.access(ws.memory_dir, os.W_OK) and os.access(ws.memento_dir, os.W_OK))


def queue_write(ws: Workspace, path: str, content: str, summary: str, *, mode: str | None = None,
                tags: tuple[str, ...] = (), priority: str | None = None) -> Path:
    """Check what can be checked now and leave the request for the tick; returns the request file."""
    if not " ".join((summary or "").split()):
        raise MementoError("a memory write needs a summary (--summary TEXT): it becomes the commit message")
    rel, _ = jail(ws, path)
    if not (content or "").strip():
        raise MementoError("nothing to write: the content (standard input) is empty")
    request = {"path": rel, "content": content, "summary": summary, "mode": mode,
               "tags": list(tags), "priority": priority}
    data = json.dumps(request, ensure_ascii=False)
    if len(data.encode("utf-8")) > MAX_REQUEST_BYTES:
        raise MementoError(f"a queued memory write is limited to {MAX_REQUEST_BYTES // 1024} KB")
    folder = queue_dir(ws)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{time.time_ns():020d}-{os.getpid()}.json"
    atomic_write_text(target, data)
    return target


def clear_queue(ws: Workspace) -> None:
    """Drop whatever an earlier run left in the queue (called before each agent starts)."""
    folder = queue_dir(ws)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
        return
    for name in _names(folder):
        try:
            (folder / name).unlink()
        except OSError:
            pass


def _names(folder: Path) -> list[str]:
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return []
        return sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []


def _read_request(path: Path) -> dict:
    """The request at ``path``: a regular file (never through a link), small, JSON with string fields."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise MementoError(f"unreadable request: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise MementoError("not a regular file")
        data = fh.read(MAX_REQUEST_BYTES + 1)
    if len(data) > MAX_REQUEST_BYTES:
        raise MementoError(f"over {MAX_REQUEST_BYTES // 1024} KB")
    try:
        request = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise MementoError("not a JSON request") from None
    if not isinstance(request, dict) or not isinstance(request.get("path"), str):
        raise MementoError("not a memory write request")
    tags = request.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise MementoError("tags must be a list of strings")
    for key in ("content", "summary"):
        if not isinstance(request.get(key), str):
            raise MementoError(f"{key} must be text")
    for key in ("mode", "priority"):
        if request.get(key) is not None and not isinstance(request.get(key), str):
            raise MementoError(f"{key} must be text")
    return {k: request.get(k) for k in _FIELDS}


def apply_queue(ws: Workspace, task_id: str) -> list[Applied]:
    """Apply the queued writes in order through write_entry (source: the task), then empty the queue."""
    folder = queue_dir(ws)
    names = _names(folder)
    if not names:
        return []  # the usual tick: the writes' checks (and the markdown parser they load) not imported
    from .writes import write_entry

    done: list[Applied] = []
    for n, name in enumerate(names):
        path = folder / name
        shown = name
        try:
            if n >= MAX_REQUESTS:
                raise MementoError(f"more than {MAX_REQUESTS} requests in one run")
            r = _read_request(path)
            shown = r["path"]
            result = write_entry(ws, r["path"], r["content"], r["summary"], source=task_id, mode=r["mode"],
                                 tags=tuple(r["tags"] or ()), priority=r["priority"])
            done.append(Applied(name, result.path, result.action, result.detail, result.commit))
        except MementoError as exc:
            done.append(Applied(name, shown, "refused", str(exc)))
        finally:
            try:
                path.unlink()
            except OSError:
                pass
    return done
