"""A person's action carries a receipt the agent cannot make (SPEC §13, without a sandbox).

While a tick runs it listens on an abstract unix socket named from the workspace
(``\\0memento-person-<digest of the root>``: no file to plant or remove, no path length
limit, unreachable from a sandbox's own network namespace). Every change a person makes
through memento_core while the agent may be running (a reset, a skip, a mode change, a
note, a memory write) first sends the tick a receipt saying what it is about to change,
and makes the change only once the tick has acknowledged it. The tick reads the sender's
pid from the kernel (``SO_PEERCRED``) and refuses every process of its own tree: the tick
is a child subreaper, so even a double-forked or ``setsid`` daemon of the agent is still
its descendant (tick/receipts.py). Its guards then take a change of another task, a note
or a memory commit for a person's only when a receipt covers it.

This module is the sending side and the receipts' value; it costs nothing when no tick
runs (connecting to an abstract name nobody listens on fails at once).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from .errors import MementoError

ANSWER_TIMEOUT = 5.0  # seconds a person's command waits for the running tick's acknowledgement
MAX_RECEIPT = 64 * 1024


def socket_name(root: Path | str) -> bytes:
    """The abstract socket the tick of the workspace at ``root`` listens on."""
    real = os.path.realpath(os.fspath(root))
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:32]
    return b"\0memento-person-" + digest.encode("ascii")


def blob_id(data: bytes, fmt: str = "sha1") -> str:
    """The git blob id of ``data`` in a repository of object format ``fmt`` (what `git
    hash-object --no-filters` says there): memory/ is SHA-256 when git made it so
    (GIT_DEFAULT_HASH), and a receipt in the other format would name no blob of it."""
    return hashlib.new(fmt, b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def root_of_doc(path: Path | str) -> Path:
    """The workspace root of one of its documents (docs/MASTER_PLAN.md, docs/HUMAN_NOTES.md)."""
    return Path(os.path.realpath(os.fspath(path))).parent.parent


@dataclass(frozen=True)
class Receipts:
    """What people announced during a tick: the changes its guards keep as theirs."""

    resets: frozenset[str] = frozenset()  # task ids: back to [ ], retries 0, no reason
    skips: frozenset[tuple[str, str]] = frozenset()  # (task id, reason): [-] with that reason
    modes: frozenset[str] = frozenset()  # tick_mode values
    notes: frozenset[str] = frozenset()  # note keys (notes.Note.key)
    memory: frozenset[str] = frozenset()  # blob ids of memory files a person's write commits
    acks: frozenset[str] = frozenset()  # task ids whose verify change a person acknowledged
    answers: frozenset[str] = frozenset()  # task ids a person answered: [?] back to [ ] (SPEC §18)

    def status(self, task_id: str, status: str, reason: str) -> bool:
        """A person's reset or skip leaves ``task_id`` in ``status`` with ``reason``."""
        if status == " ":
            return task_id in self.resets or task_id in self.answers
        if status == "-":
            return (task_id, " ".join(reason.split())) in self.skips
        return False

    def field(self, task_id: str, key: str, value: str | None) -> bool:
        """A person's reset or skip wrote (or removed: None) field ``key`` of ``task_id``."""
        if key == "retries":
            return task_id in self.resets and (value or "").strip() == "0"
        if key == "reason":
            return (value is None and task_id in self.resets) or \
                (task_id, " ".join((value or "").split())) in self.skips
        return False


NO_RECEIPTS = Receipts()


def from_records(records: list[dict]) -> Receipts:
    """The receipts a tick accepted, as one value."""
    def pick(op: str, *keys: str):
        return frozenset(tuple(str(r.get(k, "")) for k in keys) if len(keys) > 1 else str(r.get(keys[0], ""))
                         for r in records if r.get("op") == op)

    skips = frozenset((t, " ".join(reason.split())) for t, reason in pick("skip", "task", "reason"))
    memory = frozenset(b for r in records if r.get("op") == "memory" for b in r.get("blobs", ()) if isinstance(b, str))
    acks = frozenset(t for r in records if r.get("op") == "verify_ack" for t in r.get("tasks", ()) if isinstance(t, str))
    return Receipts(resets=pick("reset", "task"), skips=skips, modes=pick("mode", "mode"), notes=pick("note", "key"),
                    memory=memory, acks=acks, answers=pick("answer", "task"))


class PersonRefused(MementoError):
    """The running tick refused to take this process for a person: it is one of the tick's own."""


def vouch(root: Path | str, receipt: dict) -> None:
    """Announce ``receipt`` to the tick running in the workspace at ``root``, before the change.

    Returns at once when no tick runs. Raises :class:`PersonRefused` when this process is
    inside the tick's own process tree (an agent's), MementoError when the tick does not
    answer: in both cases nothing must be changed."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        try:
            sock.connect(socket_name(root))
        except (ConnectionRefusedError, FileNotFoundError):
            return  # no tick is running here: nothing to tell
        sock.settimeout(ANSWER_TIMEOUT)
        try:
            sock.sendall(json.dumps(receipt, ensure_ascii=True).encode("ascii") + b"\n")
            answer = read_line(sock)
        except (BrokenPipeError, ConnectionResetError):
            answer = _read_rest(sock)  # the tick closed at once: it said why first
        except TimeoutError:
            raise MementoError(f"the running tick did not acknowledge within {ANSWER_TIMEOUT:g} s; "
                               "nothing was changed (try again)") from None
    finally:
        sock.close()
    try:
        reply = json.loads(answer or b"{}")
    except ValueError:
        reply = {}
    if not isinstance(reply, dict) or reply.get("ok") is not True:
        why = reply.get("why") if isinstance(reply, dict) else ""
        raise PersonRefused(f"refused: {why or 'the running tick did not accept this change'}; nothing was changed")


def check_person(root: Path | str) -> None:
    """Refuse up front (PersonRefused) when this process is inside the running tick's own tree."""
    vouch(root, {"op": "hello"})


def read_line(sock: socket.socket) -> bytes:
    """One line (a receipt, an answer) of at most MAX_RECEIPT bytes, without its newline."""
    data = b""
    while b"\n" not in data and len(data) < MAX_RECEIPT:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0][:MAX_RECEIPT]  # the last chunk may run past it


def _read_rest(sock: socket.socket) -> bytes:
    try:
        return read_line(sock)
    except OSError:
        return b""
