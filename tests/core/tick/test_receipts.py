"""The receipt socket itself (SPEC §13): who the tick takes for a person, judged on real processes.

A Book (tick/receipts.py) listens in this process, as a tick does; callers are this process (the
dashboard's own thread: a person), its child, a setsid'd grandchild re-parented to us as a
subreaper (the agent's daemon: refused), and a stopped tick (the person's command fails, nothing
changed). The tree is read from /proc, as the tick reads it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core import receipts
from memento_core.agents.reaper import subreaper
from memento_core.plan.edits import skip_task
from memento_core.plan.scan import parse_plan
from memento_core.tick.receipts import INSIDE, held, inside_the_tick, listening
from tests.core.scenarios.test_engine import HELLO, make_ws

PY = sys.executable
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TWO = HELLO + "\n" + HELLO.replace("T-1", "T-2").replace("Write hello", "Second")
CALL = ("import json, sys; sys.path.insert(0, {repo!r}); from memento_core import receipts\n"
        "try:\n    receipts.vouch({root!r}, {{'op': 'skip', 'task': 'T-2', 'reason': 'x'}}); print('ok')\n"
        "except receipts.PersonRefused as exc:\n    print(json.dumps(str(exc)))\n")
DAEMON = ("import os, sys, time\n"
          "if os.fork():\n    os._exit(0)\n"
          "os.setsid()\n"
          "if os.fork():\n    os._exit(0)\n"
          "while os.getppid() != {tick}:\n    time.sleep(0.01)\n"  # re-parented to the subreaper
          "{call}")


@pytest.fixture
def ws(tmp_path, git_identity):
    return make_ws(tmp_path, "true", tasks=TWO)


def test_this_process_is_a_person_and_its_receipt_is_held(ws):
    with listening(ws) as book:
        assert book is not None
        skip_task(ws.plan_path, "T-2", "not now")
        assert held(ws).status("T-2", "-", "not now")
    assert held(ws) == receipts.NO_RECEIPTS  # the tick's receipts live only as long as it listens
    assert parse_plan(ws.plan_path).task("T-2").status == "-"


def test_a_child_and_a_setsid_daemon_of_the_tick_are_refused(ws):
    call = CALL.format(repo=REPO, root=str(ws.root))
    with subreaper(), listening(ws) as book:
        child = subprocess.run([PY, "-c", call], capture_output=True, text=True, timeout=30)
        assert INSIDE in json.loads(child.stdout), child.stdout + child.stderr
        # The daemon keeps the pipe open: run() returns once it has asked and exited.
        daemon = subprocess.run([PY, "-c", DAEMON.format(tick=os.getpid(), call=call)], capture_output=True,
                                text=True, timeout=30)
        assert INSIDE in json.loads(daemon.stdout), daemon.stdout + daemon.stderr
        assert book.refused == 2 and held(ws) == receipts.NO_RECEIPTS


def test_a_childs_check_before_it_acts_is_refused_and_this_process_passes_it(ws):
    """check_person: what a command asks before its first change (nothing announced yet)."""
    check = (f"import sys; sys.path.insert(0, {REPO!r}); from memento_core import receipts\n"
             f"try:\n    receipts.check_person({str(ws.root)!r}); print('passed')\n"
             "except receipts.PersonRefused as exc:\n    print(exc)\n")
    with subreaper(), listening(ws) as book:
        child = subprocess.run([PY, "-c", check], capture_output=True, text=True, timeout=30)
        assert INSIDE in child.stdout, child.stdout + child.stderr
        assert book.refused == 1
        receipts.check_person(ws.root)  # this process: a person, nothing refused
        assert book.refused == 1 and held(ws) == receipts.NO_RECEIPTS


# Outside the tick's tree (double-forked, re-parented past it), as the account `uid` (dropped to once
# started: this interpreter is under root's home); speaks the socket's protocol itself.
OUTSIDER = ("import json, os, socket, sys, time\n"
            "uid = {uid}\n"
            "if uid is not None:\n    os.setgroups([]); os.setgid(uid); os.setuid(uid)\n"
            "if os.fork():\n    os._exit(0)\n"
            "os.setsid()\n"
            "middle = os.getpid()\n"
            "if os.fork():\n    os._exit(0)\n"
            "while os.getppid() == middle:\n    time.sleep(0.01)\n"  # re-parented past this test's tree
            "s = socket.socket(socket.AF_UNIX)\n"
            "s.connect({name!r})\n"
            "try:\n    s.sendall(json.dumps({{'op': 'skip', 'task': 'T-2', 'reason': 'x'}}).encode() + b'\\n')\n"
            "except BrokenPipeError:\n    pass\n"  # a refusal is sent before a byte is read, and closes
            "print(s.makefile().readline().strip(), flush=True)\n")


@pytest.mark.skipif(os.getuid() != 0, reason="starting a process as another account needs root")
def test_another_accounts_process_is_refused_where_this_accounts_is_a_person(ws):
    with listening(ws) as book:
        name = receipts.socket_name(ws.root)

        def ask(uid: int | None = None) -> dict:
            run = subprocess.run([PY, "-I", "-c", OUTSIDER.format(name=name, uid=uid)],
                                 capture_output=True, text=True, timeout=30, cwd="/")
            assert run.stdout, run.stderr
            return json.loads(run.stdout)

        assert ask(65534) == {"ok": False, "why": "another user's process"}
        assert book.refused == 1 and held(ws) == receipts.NO_RECEIPTS
        assert ask() == {"ok": True}  # the same program as this account, from outside the tick: a person
        assert held(ws).status("T-2", "-", "x")


@pytest.mark.parametrize("line", [b"[1, 2]", b'"skip"', b'{"op": "delete everything"}', b"not json"])
def test_what_is_not_a_receipt_is_answered_so_and_the_socket_answers_on(ws, line):
    import socket

    with listening(ws) as book:
        for sent in (line, b'{"op": "hello"}'):
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(receipts.socket_name(ws.root))
                s.sendall(sent + b"\n")
                answer = json.loads(s.makefile().readline())
            assert answer == ({"ok": True} if sent.startswith(b'{"op": "hello"') else
                              {"ok": False, "why": "not a receipt"}), sent
        assert book.records == []


def test_inside_the_tick_follows_the_parent_chain():
    me = os.getpid()
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(30)"])
    try:
        assert inside_the_tick(child.pid, me) == INSIDE
        assert inside_the_tick(me, child.pid) == ""  # the tick's parent is not the tick's
        assert inside_the_tick(me, me) == ""  # the tick itself (the dashboard's own thread)
    finally:
        child.kill()
        child.wait()
    assert inside_the_tick(child.pid, me) == "the calling process is gone"
    apart = subprocess.Popen([PY, "-c", "import time; time.sleep(30)"], process_group=0)
    try:  # a group of its own in this session: inside when the session is one the tick runs
        assert os.getpgid(apart.pid) != os.getpgid(0) and os.getsid(apart.pid) == os.getsid(0)
        assert inside_the_tick(apart.pid, 2, sessions=[os.getsid(0)]) == INSIDE
        assert inside_the_tick(apart.pid, 2, sessions=[apart.pid]) == INSIDE  # its group
        assert inside_the_tick(apart.pid, 2, sessions=[]) == ""
    finally:
        apart.kill()
        apart.wait()
    shell = subprocess.Popen(["sh", "-c", "sleep 30 & echo $!; wait"], stdout=subprocess.PIPE, text=True)
    try:
        grandchild = int(shell.stdout.readline())
        assert inside_the_tick(grandchild, me) == INSIDE  # two steps up the chain
        assert inside_the_tick(grandchild, 2) == ""  # a chain that never meets the tick
    finally:
        os.kill(grandchild, signal.SIGKILL)
        shell.kill()
        shell.wait()
        shell.stdout.close()


def _wait_stopped(pid: int) -> None:
    """Until every thread of ``pid`` is stopped (state T in /proc), at most 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = [Path(f"/proc/{pid}/task/{t}/stat").read_text().rsplit(")", 1)[1].split()[0]
                  for t in os.listdir(f"/proc/{pid}/task")]
        if all(state == "T" for state in states):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not stop")


def test_a_stopped_tick_makes_the_persons_command_fail_with_nothing_changed(ws, monkeypatch):
    script = (f"import sys, time; sys.path.insert(0, {REPO!r})\n"
              "from memento_core.tick.receipts import listening\nfrom memento_core.workspace import Workspace\n"
              f"with listening(Workspace({str(ws.root)!r})):\n    print('listening', flush=True)\n    time.sleep(60)\n")
    tick = subprocess.Popen([PY, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert tick.stdout.readline().strip() == "listening"
        os.kill(tick.pid, signal.SIGSTOP)
        _wait_stopped(tick.pid)  # a signal is delivered when the kernel next looks: until then it still answers
        monkeypatch.setattr(receipts, "ANSWER_TIMEOUT", 0.5)
        before = ws.plan_path.read_bytes()
        with pytest.raises(receipts.MementoError, match="did not acknowledge"):
            skip_task(ws.plan_path, "T-2", "not now")
        assert ws.plan_path.read_bytes() == before
    finally:
        tick.kill()
        tick.wait()


def test_settled_reads_the_document_under_its_lock_and_a_workers_copy_without_one(ws, tmp_path):
    from memento_core.tick.receipts import settled

    assert settled(ws.plan_path) == ws.plan_path.read_bytes() != b""
    copy = tmp_path / "worktree" / "docs" / "MASTER_PLAN.md"  # no .memento/ above it: no lock
    copy.parent.mkdir(parents=True)
    assert settled(copy) == b""
    copy.write_bytes(b"# plan of a worker\n")
    assert settled(copy) == b"# plan of a worker\n"
    assert [p.name for p in copy.parent.iterdir()] == ["MASTER_PLAN.md"]  # no lock file made in a worker's copy


def test_a_caller_lost_before_it_was_accepted_leaves_the_socket_answering(ws, monkeypatch):
    """accept() failing once (ECONNABORTED, EMFILE) is not the end of listening."""
    import errno
    import socket

    real = socket.socket.accept
    failed = []

    def accept_once_failing(self):
        if not failed:
            failed.append(True)
            raise OSError(errno.ECONNABORTED, "connection aborted")
        return real(self)

    monkeypatch.setattr(socket.socket, "accept", accept_once_failing)
    with listening(ws) as book:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(receipts.socket_name(ws.root))
            s.sendall(b'{"op": "hello"}\n')
            assert json.loads(s.makefile().readline()) == {"ok": True}
        assert failed and book.thread.is_alive()


def test_the_socket_is_there_while_a_tick_listens_and_its_name_is_free_after(ws):
    import socket

    from memento_core.tick.receipts import is_listening

    assert not is_listening(ws)
    with listening(ws) as book:
        assert book is not None and is_listening(ws)
    assert not is_listening(ws)
    with socket.socket(socket.AF_UNIX) as s:  # the abstract name is released with the socket
        s.bind(receipts.socket_name(ws.root))


# A person's write holding a lock, as `memento memory write` or `memento skip` hold it: the lock
# taken, "held" said, then (``commit``) a commit in memory/ made before the lock is let go, or
# (no ``commit``) the lock held until the process is killed.
HOLDER = (f"import subprocess, sys, time; sys.path.insert(0, {REPO!r})\n"
          "from pathlib import Path\nfrom memento_core.locks import file_lock\n"
          "with file_lock(Path({lock!r}), timeout=30):\n    print('held', flush=True)\n"
          "    if {commit!r}:\n        time.sleep(0.3)\n"
          "        subprocess.run(['git', '-C', {commit!r}, 'commit', '-q', '--allow-empty', '-m', 'by hand'], check=True)\n"
          "    else:\n        time.sleep(60)\n")


def _hold(lock: Path, commit: Path | None = None) -> subprocess.Popen:
    holder = subprocess.Popen([PY, "-c", HOLDER.format(lock=str(lock), commit=str(commit or ""))],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def _memory_head(ws) -> str:
    return subprocess.run(["git", "-C", str(ws.memory_dir), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_memory_head_waits_for_a_persons_write_in_progress_and_a_hung_one_only_so_long(ws, monkeypatch):
    from memento_core.memory.store import lock_path
    from memento_core.tick import receipts as tick_receipts

    before = _memory_head(ws)
    assert tick_receipts.memory_head(ws) == before
    holder = _hold(lock_path(ws), ws.memory_dir)
    try:
        after = tick_receipts.memory_head(ws)  # the lock let go only after the person's commit
    finally:
        holder.wait(30)
        holder.stdout.close()
    assert after == _memory_head(ws) != before
    monkeypatch.setattr(tick_receipts, "SETTLE_TIMEOUT", 0.2)
    holder = _hold(lock_path(ws))
    try:  # a write that never ends: HEAD as it is, once the wait is over
        assert tick_receipts.memory_head(ws) == after
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    (ws.memory_dir / ".git").rename(ws.memory_dir / "git-was-here")
    assert tick_receipts.memory_head(ws) is None  # no store (yet)


def test_settled_reads_a_document_held_too_long_as_it_is(ws, monkeypatch):
    from memento_core.locks import lock_path_for
    from memento_core.tick import receipts as tick_receipts

    monkeypatch.setattr(tick_receipts, "SETTLE_TIMEOUT", 0.2)
    holder = _hold(lock_path_for(ws.plan_path))
    try:
        assert tick_receipts.settled(ws.plan_path) == ws.plan_path.read_bytes() != b""
        ws.plan_path.unlink()
        assert tick_receipts.settled(ws.plan_path) == b""
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def _persons_commit(ws, files: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A commit in memory/ with no Memento trailer (it says it is a person's): its sha, each file's blob."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ws.memory_dir), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    for rel, text in files.items():
        (ws.memory_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws.memory_dir / rel).write_text(text)
    git("add", "-A")
    git("commit", "-qm", "lessons by hand")
    return git("rev-parse", "HEAD"), {rel: git("rev-parse", f"HEAD:{rel}") for rel in files}


def test_a_memory_commit_whose_every_file_a_person_announced_is_theirs_and_another_is_taken_out(ws):
    from memento_core.memory.store import history
    from memento_core.tick.receipts import forged_memory

    since = _memory_head(ws)
    sha, blobs = _persons_commit(ws, {"knowledge/lessons/persons.md": "a person's lesson\n",
                                      "knowledge/lessons/agents.md": "verify is always true\n"})
    announced = receipts.Receipts(memory=frozenset(blobs.values()))
    assert forged_memory(ws, since, announced, "T-1") == ()
    assert _memory_head(ws) == sha  # the person's commit stays as it was
    one = receipts.Receipts(memory=frozenset({blobs["knowledge/lessons/persons.md"]}))
    assert forged_memory(ws, since, one, "T-1") == (sha[:7],)
    assert subprocess.run(["git", "-C", str(ws.memory_dir), "cat-file", "-e", sha]).returncode != 0
    assert (ws.memory_dir / "knowledge/lessons/agents.md").read_text() == "verify is always true\n"
    assert history(ws)[0].kind != "human"  # the task's write now, in Memento's name
    assert forged_memory(ws, None, one, "T-1") == ()  # nothing left that says it is a person's


def test_a_forged_memory_commit_that_cannot_be_taken_out_is_recorded_as_the_tasks(ws, monkeypatch):
    from memento_core.memory import store
    from memento_core.tick.receipts import forged_memory

    since = _memory_head(ws)
    sha, _blobs = _persons_commit(ws, {"knowledge/lessons/agents.md": "verify is always true\n"})
    assert forged_memory(ws, "0" * 40, receipts.NO_RECEIPTS, "T-1") == ()  # git cannot read that span
    monkeypatch.setattr(store, "LOCK_TIMEOUT", 0.2)
    holder = _hold(store.lock_path(ws))  # memory/ busy: its history cannot be made again now
    try:
        assert forged_memory(ws, since, receipts.NO_RECEIPTS, "T-2") == (sha[:7],)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert _memory_head(ws) == sha
    assert [(w.task, w.commit, w.paths) for w in store.unattributed_writes(ws, days=None)] == [
        ("T-2", sha, ("knowledge/lessons/agents.md",))]


def test_a_second_listener_of_the_same_workspace_gets_no_book_and_the_first_keeps_its_receipts(ws):
    """The abstract name is taken: the second cannot bind, is not registered, and leaving it does
    not unregister the tick that listens."""
    from memento_core.tick.receipts import is_listening

    with listening(ws) as first:
        with listening(ws) as second:
            assert second is None
            skip_task(ws.plan_path, "T-2", "not now")
        assert is_listening(ws) and held(ws).status("T-2", "-", "not now")
        assert first.records and first.thread.is_alive()


def test_no_thread_of_the_socket_outlives_its_listening(ws):
    with listening(ws) as book:
        assert book.thread.is_alive()
    assert not book.thread.is_alive()  # joined before listening returns


def test_a_tick_that_is_pid_1_takes_every_process_of_its_namespace_for_its_own():
    """In a container the tick may be pid 1: an orphan re-parented to it is inside (the walk
    stops at pid 1, so the line after it asks)."""
    orphan = subprocess.Popen([PY, "-c", "import os, time\nif os.fork():\n    os._exit(0)\n"
                               "os.setsid()\nprint(os.getpid(), flush=True)\ntime.sleep(30)\n"],
                              stdout=subprocess.PIPE, text=True)
    pid = int(orphan.stdout.readline())
    orphan.wait()
    orphan.stdout.close()
    try:
        assert inside_the_tick(pid, 1) == INSIDE
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_silent_caller_is_dropped_and_the_next_person_answered(ws, monkeypatch):
    import socket

    from memento_core.tick import receipts as tick_receipts

    monkeypatch.setattr(tick_receipts, "READ_TIMEOUT", 0.2)
    with listening(ws) as book, socket.socket(socket.AF_UNIX) as silent, socket.socket(socket.AF_UNIX) as person:
        silent.settimeout(30)
        silent.connect(receipts.socket_name(ws.root))  # says nothing
        person.settimeout(30)  # without the read's timeout the thread would wait on the silent one for good
        person.connect(receipts.socket_name(ws.root))
        person.sendall(b'{"op": "note", "text": "x"}\n')
        assert json.loads(person.makefile().readline()) == {"ok": True}
        assert silent.recv(100) == b""  # dropped, unanswered
        assert book.records == [{"op": "note", "text": "x"}]


def test_a_parent_chain_that_cannot_be_followed_is_refused_and_a_looping_one_ends(monkeypatch):
    """/proc read as it changes under a walk: a parent gone between reading a process and reading
    its parent, on every walk, or a pid reused into a loop. No test can time that on a real /proc,
    so read_proc answers from a table here."""
    from memento_core.agents.reaper import Proc
    from memento_core.tick import receipts as tick_receipts

    table = {100: Proc(100, "S", 50, 100, 100), 60: Proc(60, "S", 70, 60, 60), 70: Proc(70, "S", 60, 70, 70)}
    monkeypatch.setattr(tick_receipts, "read_proc", table.get)
    assert inside_the_tick(100, 999) == "the calling process's parents could not be followed"  # 50 is gone
    table[100] = Proc(100, "S", 60, 100, 100)  # 60 and 70 each other's parent
    assert inside_the_tick(100, 999) == ""
    assert inside_the_tick(100, 70) == INSIDE


def test_taking_a_forged_memory_commit_out_runs_no_hook_nor_fsmonitor_the_agent_planted(ws, tmp_path):
    """An unconfined agent writes memory/.git as it likes: the git commands that take its forged
    commit out (update-ref's reference-transaction hook, a status's fsmonitor) run none of its
    programs as the person."""
    from memento_core.tick.receipts import forged_memory

    since = _memory_head(ws)
    sha, _blobs = _persons_commit(ws, {"knowledge/lessons/agents.md": "verify is always true\n"})
    ran = tmp_path / "ran"
    hook = ws.memory_dir / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\necho hook >> {ran}\n")
    hook.chmod(0o755)
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\necho fsmonitor >> {ran}\n")
    monitor.chmod(0o755)
    subprocess.run(["git", "-C", str(ws.memory_dir), "config", "core.fsmonitor", str(monitor)], check=True)
    assert forged_memory(ws, since, receipts.NO_RECEIPTS, "T-1") == (sha[:7],)
    assert subprocess.run(["git", "-C", str(ws.memory_dir), "cat-file", "-e", sha]).returncode != 0
    assert not ran.exists(), ran.read_text()


@pytest.mark.parametrize("where", ["refs/heads/evil", "refs/heads/main", "logs/HEAD", "HEAD", "packed-refs"])
def test_a_fifo_in_memorys_git_folder_is_removed_before_git_opens_it(ws, where):
    from memento_core.memory import store

    path = ws.memory_dir / ".git" / where
    head = _memory_head(ws)
    if path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    done = subprocess.run([sys.executable, "-c", "import sys; from memento_core.memory import commit_unattributed;"
                           "from pathlib import Path; from memento_core.workspace import Workspace;"
                           "print(commit_unattributed(Workspace(Path(sys.argv[1])), 'T-1'))", str(ws.root)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not path.exists() or path.is_file()
    assert "a FIFO, a socket or a device" in (ws.logs_dir / "cron.log").read_text()
    if where != "refs/heads/main":
        assert _memory_head(ws) == head  # the branch itself was never the FIFO's
    assert store.is_store(ws.memory_dir)


def test_a_memory_git_folder_that_is_a_link_is_never_walked_through(ws, tmp_path):
    """memory/.git made a link by an agent: what it leads to is not Memento's to remove."""
    from memento_core.memory.store import _clear_specials

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "refs").mkdir(parents=True)
    os.mkfifo(elsewhere / "refs" / "persons-fifo")
    real = ws.memory_dir / ".git"
    real.rename(tmp_path / "real-git")
    real.symlink_to(elsewhere)
    assert _clear_specials(ws.memory_dir) == ""
    assert (elsewhere / "refs" / "persons-fifo").exists()
    real.unlink()
    (tmp_path / "real-git").rename(real)
    os.mkfifo(real / "refs" / "heads" / "evil")
    assert "refs/heads/evil" in _clear_specials(ws.memory_dir)
    assert (real / "HEAD").read_text() == "ref: refs/heads/main\n"
    (real / "HEAD").unlink()  # gone, with nothing removed here: not this function's to make again
    assert _clear_specials(ws.memory_dir) == "" and not os.path.lexists(real / "HEAD")
