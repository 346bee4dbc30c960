"""agents/reaper.py: a run's baseline of our children, as the kernel lists them."""

from __future__ import annotations

import os
import subprocess


def test_the_baseline_is_our_children_in_other_sessions_as_the_kernel_lists_them(monkeypatch):
    """A run's baseline reads the kernel's list of our children, not every process: the same
    answer as a full reading of /proc (which is what it falls back to), a thread's children
    included."""
    import threading

    from memento_core.agents import reaper

    alone = subprocess.Popen(["sleep", "30"], start_new_session=True)
    ours = subprocess.Popen(["sleep", "30"])
    from_thread: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: from_thread.append(
        subprocess.Popen(["sleep", "30"], start_new_session=True)))
    thread.start()
    thread.join()
    try:
        fast = reaper.baseline()
        assert {pid for pid, _ in fast} >= {alone.pid, from_thread[0].pid}
        assert ours.pid not in {pid for pid, _ in fast}
        assert dict(fast)[alone.pid] == reaper.start_time(alone.pid)
        monkeypatch.setattr(reaper, "our_children", lambda: None)
        assert reaper.baseline() == fast
    finally:
        for proc in (alone, ours, *from_thread):
            proc.kill()
            proc.wait()


def _gone(pid: int) -> bool:
    from memento_core.agents import reaper

    proc = reaper.read_proc(pid)
    return proc is None or proc.state in ("Z", "X")


def test_a_subreapers_strays_are_found_in_its_own_tree_as_in_all_of_proc(monkeypatch):
    """Differential: where this process is a subreaper, what a run left (an orphan in a session of
    its own, re-parented to us; the run's session; an unwaited zombie) is found reading our tree
    (:func:`reaper.our_tree`) exactly as reading every process; a running group, its children and
    a child in our own session are not. kill_strays ends them, judged in /proc, having read no
    process outside our tree while there was nothing to kill."""
    import time

    from memento_core.agents import reaper

    with reaper.subreaper() as ok:
        assert ok
        existing = reaper.baseline()
        ours = subprocess.Popen(["sleep", "30"])  # our session: Memento's own, never a stray
        kept = subprocess.Popen(["sh", "-c", "sleep 30 & exec sleep 30"], start_new_session=True)
        monkeypatch.setattr(reaper, "_running", lambda: [kept.pid])  # a run still being waited on
        time.sleep(0.2)
        assert reaper.find_strays((), existing) == set()
        calls = []
        real_all = reaper.all_processes
        monkeypatch.setattr(reaper, "all_processes", lambda: calls.append(1) or real_all())
        assert reaper.kill_strays((), exclude=existing) == [] and calls == []  # our tree only

        subprocess.run(["sh", "-c", "setsid sleep 30 & exit 0"], check=True)  # an orphan, now ours
        run = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"], start_new_session=True)
        zombie = subprocess.Popen(["true"], start_new_session=True)
        time.sleep(0.3)
        tree, everything = reaper.our_tree(), real_all()
        assert tree is not None and {p.pid for p in tree} < {p.pid for p in everything}
        fast = reaper.find_strays([run.pid], existing, tree)
        assert fast == reaper.find_strays([run.pid], existing, everything)
        orphans = {p.pid for p in tree if p.ppid == os.getpid() and p.sid not in (os.getsid(0), kept.pid, run.pid)
                   and p.state not in ("Z", "X")}
        run_session = {p.pid for p in tree if p.sid == run.pid}
        assert orphans and len(run_session) == 3 and fast == orphans | run_session, (fast, orphans, run_session)
        assert zombie.pid not in fast and reaper.read_proc(zombie.pid).state == "Z"

        killed = reaper.kill_strays([run.pid], grace=0.5, exclude=existing)
        assert set(killed) == fast and all(_gone(pid) for pid in fast)
        assert reaper.read_proc(zombie.pid) is None  # reaped
        kept_tree = reaper.descendants([kept.pid], real_all())
        assert len(kept_tree) == 2 and not any(_gone(pid) for pid in kept_tree | {ours.pid})
        for proc in (ours, kept, run):
            proc.kill()
        for proc in (ours, kept, run):
            proc.wait()
        zombie.returncode = 0  # reaped above


def test_our_tree_says_nothing_when_a_process_ended_while_it_was_read_and_kill_strays_reads_all(monkeypatch):
    """A child gone between its parent's list and its own: its children may have moved up past
    where the walk is, so the tree is not trusted and every process is read."""
    from memento_core.agents import reaper

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        with reaper.subreaper():
            monkeypatch.setattr(reaper, "read_proc", lambda pid: None)
            assert reaper.our_tree() is None
            calls = []
            monkeypatch.setattr(reaper, "all_processes", lambda: calls.append(1) or [])
            assert reaper.kill_strays(exclude=frozenset()) == [] and calls == [1]
            monkeypatch.undo()
        with reaper.subreaper():
            monkeypatch.setattr(reaper, "is_subreaper", lambda: False)  # no subreaper: its tree says nothing
            calls = []
            real_all = reaper.all_processes
            monkeypatch.setattr(reaper, "all_processes", lambda: calls.append(1) or real_all())
            assert reaper.kill_strays(exclude=reaper.baseline()) == [] and calls == [1]
            monkeypatch.undo()
    finally:
        child.kill()
        child.wait()


def test_a_list_of_children_read_differently_twice_is_not_trusted(monkeypatch):
    """The kernel walks a children list a child at a time: one reaped meanwhile (another thread's
    Popen.wait) can make it skip the next. Two readings that differ: the tree says nothing, and
    kill_strays reads every process."""
    from memento_core.agents import reaper

    readings = iter([{101, 102}, {102}])
    real = reaper._listed_children
    monkeypatch.setattr(reaper, "_listed_children", lambda pid: next(readings, None) if pid == "self" else real(pid))
    assert reaper._children_of("self") is None
    monkeypatch.setattr(reaper, "_listed_children", real)
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert child.pid in reaper._children_of("self")
        with reaper.subreaper():
            flips = iter(range(1000))
            monkeypatch.setattr(reaper, "_listed_children",
                                lambda pid: (real(pid) or set()) | ({99999999} if next(flips) % 2 else set()))
            calls = []
            real_all = reaper.all_processes
            monkeypatch.setattr(reaper, "all_processes", lambda: calls.append(1) or real_all())
            assert reaper.our_tree() is None
            assert reaper.kill_strays(exclude=reaper.baseline()) == [] and calls == [1, 1]  # baseline's too
            monkeypatch.undo()
    finally:
        child.kill()
        child.wait()


def test_a_process_whose_first_thread_ended_is_alive(tmp_path):
    """/proc says "Z" of it while its other thread runs: read_proc says it lives (so a stray of
    that kind is killed, never taken for a zombie to reap); once it is dead, "Z" again."""
    import sys
    import time

    from memento_core.agents import reaper

    script = tmp_path / "leader_exits.py"
    script.write_text("import ctypes, threading, time\n"
                      "threading.Thread(target=time.sleep, args=(30,)).start()\n"
                      "ctypes.CDLL(None).pthread_exit(None)\n")
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.monotonic() + 10
        while open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert reaper.read_proc(proc.pid).state == "S"
        os.kill(proc.pid, 9)
        while len(os.listdir(f"/proc/{proc.pid}/task")) > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert reaper.read_proc(proc.pid).state == "Z"
    finally:
        proc.kill()
        proc.wait()


def test_read_proc_reads_what_the_kernel_says_of_a_child():
    """Its parent, group and session as os says them; a plain zombie reads "Z"; a pid or a thread
    that is not there reads as nothing."""
    import time

    from memento_core.agents import reaper

    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        got = reaper.read_proc(child.pid)
        assert (got.ppid, got.pgid, got.sid) == (os.getpid(), os.getpgid(child.pid), os.getsid(child.pid))
        assert got.sid != os.getsid(0) and got.state in ("S", "R")
    finally:
        child.kill()
    deadline = time.monotonic() + 10
    while reaper.read_proc(child.pid).state != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert reaper._a_thread_runs(child.pid) is False
    child.wait()
    assert reaper.read_proc(child.pid) is None and reaper._a_thread_runs(child.pid) is False
    assert reaper._task_state(os.getpid(), "999999999") == b""
    grouped = subprocess.Popen(["sleep", "30"], process_group=0)  # a group of its own in our session
    try:
        got = reaper.read_proc(grouped.pid)
        assert (got.pgid, got.sid) == (grouped.pid, os.getsid(0)) and got.pgid != got.sid
    finally:
        grouped.kill()
        grouped.wait()
    assert reaper._task_state(os.getpid(), str(os.getpid())) in (b"R", b"S")
