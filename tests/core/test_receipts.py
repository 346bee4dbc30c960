"""memento_core/receipts.py, the sending side of a person's receipts (SPEC §13), and the receipts' value.

Where the socket is named, the blob id a memory receipt names, what a tick's records amount to and
which of the guards' questions they answer, a line read off the socket, and `vouch` against a real
listener that answers anything from nothing to a refusal. The tick's side (who is taken for a person)
is tests/core/tick/test_receipts.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memento_core import receipts

PY = sys.executable
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_socket_is_named_after_the_workspaces_real_path(tmp_path):
    """One name per workspace however it is reached (a link to it, a trailing slash), another for another."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    name = receipts.socket_name(tmp_path / "a")
    assert name.startswith(b"\0memento-person-") and len(name) == len(b"\0memento-person-") + 32
    assert receipts.socket_name(tmp_path / "link") == receipts.socket_name(f"{tmp_path}/a/") == name
    assert receipts.socket_name(tmp_path / "b") != name


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_a_blob_id_is_what_git_names_the_blob_in_that_object_format(tmp_path, fmt):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", f"--object-format={fmt}", str(repo)], check=True)
    for data in (b"", b"one line\n", "héllo\r\n".encode() + bytes(range(256))):
        (repo / "f").write_bytes(data)
        said = subprocess.run(["git", "hash-object", "--no-filters", "f"], cwd=repo, capture_output=True,
                              text=True, check=True).stdout.strip()
        assert receipts.blob_id(data, fmt) == said


def test_a_documents_workspace_is_two_folders_up_its_real_path(tmp_path):
    (tmp_path / "proj" / "docs").mkdir(parents=True)
    (tmp_path / "elsewhere").symlink_to(tmp_path / "proj" / "docs")
    assert receipts.root_of_doc(tmp_path / "proj" / "docs" / "MASTER_PLAN.md") == tmp_path / "proj"
    assert receipts.root_of_doc(tmp_path / "elsewhere" / "HUMAN_NOTES.md") == tmp_path / "proj"


def test_a_status_is_a_persons_only_as_a_reset_an_answer_or_that_skip_leave_it():
    held = receipts.from_records([{"op": "reset", "task": "T-1"}, {"op": "answer", "task": "T-4"},
                                  {"op": "skip", "task": "T-2", "reason": " not\tnow "}])
    assert held.answers == {"T-4"}
    assert held.status("T-1", " ", "") and held.status("T-4", " ", "")
    assert not held.status("T-2", " ", "") and not held.status("T-3", " ", "")
    assert held.status("T-2", "-", "not now") and held.status("T-2", "-", "not  now\n")
    assert not held.status("T-2", "-", "later") and not held.status("T-1", "-", "")
    for other in ("x", "!", "?", "~"):  # no receipt makes a task done, blocked, waiting or running
        assert not held.status("T-1", other, "") and not held.status("T-2", other, "not now")
    assert receipts.NO_RECEIPTS == receipts.from_records([]) and not receipts.NO_RECEIPTS.status("T-1", " ", "")


def test_without_a_tick_a_receipt_goes_nowhere_and_nothing_is_refused(tmp_path):
    receipts.vouch(tmp_path, {"op": "reset", "task": "T-1"})  # nobody listens: returns at once
    receipts.check_person(tmp_path)


class Listener:
    """A bare listener on a workspace's name that answers every caller ``answer`` (or hangs up)."""

    def __init__(self, root: Path, answer: bytes | None):
        self.answer, self.got = answer, []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(receipts.socket_name(root))
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            self.got.append(receipts.read_line(conn))
            if self.answer is not None:
                conn.sendall(self.answer)

    def close(self) -> None:
        self.thread.join(10)
        self.sock.close()


@pytest.mark.parametrize(("answer", "why"), [
    (b'{"ok": true}\n', None),
    (b'{"ok": false, "why": "not you"}\n', "refused: not you; nothing was changed"),
    (b'{"ok": false}\n', "refused: the running tick did not accept this change; nothing was changed"),
    (b'{"ok": "yes"}\n', "did not accept this change"),
    (b'[true]\n', "did not accept this change"),
    (b"not json\n", "did not accept this change"),
    (None, "did not accept this change"),  # hung up without a word
])
def test_vouch_goes_on_only_when_the_tick_says_ok_true(tmp_path, answer, why):
    listener = Listener(tmp_path, answer)
    try:
        if why is None:
            receipts.vouch(tmp_path, {"op": "note", "key": "k1"})
        else:
            with pytest.raises(receipts.PersonRefused) as refused:
                receipts.vouch(tmp_path, {"op": "note", "key": "k1"})
            assert why in str(refused.value)
    finally:
        listener.close()
    assert listener.got == [b'{"op": "note", "key": "k1"}']  # one line, sent before the answer is read


def test_a_persons_check_sends_only_hello(tmp_path):
    listener = Listener(tmp_path, b'{"ok": true}\n')
    try:
        receipts.check_person(tmp_path)
    finally:
        listener.close()
    assert listener.got == [b'{"op": "hello"}']


def test_a_line_is_cut_at_64_kib_whatever_the_caller_sends():
    import socket
    import threading

    mine, theirs = socket.socketpair()
    sender = threading.Thread(target=lambda: theirs.sendall(b"x" * (200 * 1024)), daemon=True)
    sender.start()
    try:
        assert len(receipts.read_line(mine)) == receipts.MAX_RECEIPT == 64 * 1024
    finally:
        mine.close()
        sender.join(5)
        theirs.close()


def test_a_line_whose_last_chunk_runs_past_64_kib_is_cut_there():
    """The chunks are not aligned on 64 KiB (a first short send): the last one read runs past the
    limit, and what is returned stops at it. SOCK_SEQPACKET keeps each send one recv."""
    import socket

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        theirs.send(b"z" * 100)
        for _ in range(17):
            theirs.send(b"z" * 4096)
        mine.settimeout(10)
        assert receipts.read_line(mine) == b"z" * receipts.MAX_RECEIPT
    finally:
        mine.close()
        theirs.close()


def test_a_line_of_exactly_64_kib_is_read_without_waiting_for_more():
    """A caller that sent the most a receipt may be and keeps its end open is not waited on."""
    import socket

    mine, theirs = socket.socketpair()
    try:
        theirs.sendall(b"y" * receipts.MAX_RECEIPT)
        mine.settimeout(10)  # waiting for one more chunk would raise here
        assert receipts.read_line(mine) == b"y" * receipts.MAX_RECEIPT
    finally:
        mine.close()
        theirs.close()


def test_each_kind_of_receipt_lands_in_its_own_field_and_no_other():
    held_ = receipts.from_records([
        {"op": "reset", "task": "T-1"}, {"op": "skip", "task": "T-2", "reason": "not  needed\n"},
        {"op": "mode", "mode": "paused"}, {"op": "note", "key": "abc"},
        {"op": "memory", "blobs": ["b1", 7]}, {"op": "verify_ack", "tasks": ["T-3", None]},
        {"op": "hello", "task": "T-9", "tasks": ["T-9"], "blobs": ["b9"]},
    ])
    assert held_.resets == {"T-1"} and held_.skips == {("T-2", "not needed")}
    assert held_.modes == {"paused"} and held_.notes == {"abc"}
    assert held_.memory == {"b1"} and held_.acks == {"T-3"}


def test_a_reset_or_a_skip_covers_only_the_fields_it_writes_and_of_its_own_task():
    """What the guards ask of the receipts for every field of another task the run changed: a
    reset covers its task's retries 0 and its reason removed, a skip its task's reason as given
    (blanks aside); any other value, field or task is the agent's."""
    held_ = receipts.from_records([{"op": "reset", "task": "T-1"}, {"op": "skip", "task": "T-2", "reason": "not now"}])
    assert held_.field("T-1", "retries", "0") and held_.field("T-1", "retries", " 0 ")
    assert not held_.field("T-1", "retries", "99") and not held_.field("T-2", "retries", "0")
    assert not held_.field("T-3", "retries", "0")
    assert held_.field("T-1", "reason", None)
    assert not held_.field("T-1", "reason", "hidden") and not held_.field("T-3", "reason", None)
    assert held_.field("T-2", "reason", "not   now") and not held_.field("T-2", "reason", "other")
    assert not held_.field("T-2", "reason", None) and not held_.field("T-1", "depends", None)


def test_a_line_ends_at_its_newline_or_where_the_caller_hangs_up():
    """What follows the newline is not the line's; a caller that closes without a newline has
    sent its line (read in a process of its own: a reader that waited for more would never return)."""
    import socket

    mine, theirs = socket.socketpair()
    try:
        theirs.sendall(b'{"op": "hello"}\n{"op": "reset", "task": "T-1"}\n')
        mine.settimeout(10)
        assert receipts.read_line(mine) == b'{"op": "hello"}'
    finally:
        mine.close()
        theirs.close()
    reader = (f"import socket, sys; sys.path.insert(0, {REPO!r}); from memento_core import receipts\n"
              "mine, theirs = socket.socketpair()\n"
              "theirs.sendall(b'no newline'); theirs.close()\n"
              "print(receipts.read_line(mine).decode())\n")
    done = subprocess.run([PY, "-c", reader], capture_output=True, text=True, timeout=30)
    assert done.stdout == "no newline\n", done.stderr
