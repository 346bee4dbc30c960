"""agents/reaper.py: a run's baseline of our children, as the kernel lists them."""

from __future__ import annotations

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
