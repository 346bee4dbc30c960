"""tick/crew_watch.py: the main work tree judged by time while unconfined workers run. A change
is the worker's whose window holds its ctime; in no window it is a person's, kept; a worker's
own processes are told apart by when they ran. Real files and real git; windows made around
real writes (a ctime cannot be set by hand)."""

from __future__ import annotations

import time

from memento_core.tick.crew_watch import SLACK, MainWatch, Window, changed_at, own_run_at
from tests.core.scenarios.test_engine import git, make_ws


def test_a_window_holds_what_happens_from_its_start_to_its_end_with_the_clocks_slack():
    window = Window(100.0)
    assert window.holds(100.0 - SLACK / 2) and window.holds(1e9)  # open while it runs
    assert not window.holds(100.0 - 2 * SLACK)
    window.end = 200.0
    assert window.holds(200.0 + SLACK / 2) and not window.holds(200.0 + 2 * SLACK)


def test_own_run_at_names_the_agent_first_and_nothing_after_a_runs_end():
    runs = [("verify", 10.0, 20.0), ("agent", 5.0, 15.0)]
    assert own_run_at(12.0, runs) == "agent"  # both ran then: the agent's
    assert own_run_at(18.0, runs) == "verify"
    assert own_run_at(20.0 + SLACK / 2, runs) == ""  # no slack after an end
    assert own_run_at(10.0 - SLACK / 2, [("verify", 10.0, None)]) == "verify"
    assert own_run_at(3.0, runs) == "" and own_run_at(3.0, None) == ""


def test_changed_at_is_the_files_ctime_or_its_folders_when_it_is_gone(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("x")
    assert changed_at(tmp_path / "a" / "f") == (tmp_path / "a" / "f").lstat().st_ctime
    assert changed_at(tmp_path / "a" / "gone" / "deeper") == (tmp_path / "a").lstat().st_ctime


def test_a_change_in_a_running_workers_window_is_undone_and_one_in_none_is_a_persons(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    watch = MainWatch(ws, None)
    status_before = ws.status_path.read_bytes()
    window = Window(time.time())
    ws.status_path.write_bytes(status_before + b"forged entry\n")  # written while T-1 runs
    (ws.root / "conftest.py").write_text("import os\n")  # planted while T-1 runs
    window.end = time.time()
    found = watch.judge({"T-1": window}, "T-1")
    assert ws.status_path.read_bytes() == status_before and not (ws.root / "conftest.py").exists()
    assert any("TICK_STATUS.md" in r and "put back" in r for r in found["T-1"]), found
    assert any("conftest.py" in r and "logs/rollback/" in r for r in found["T-1"]), found
    time.sleep(2 * SLACK)
    (ws.root / "persons.txt").write_text("mine\n")  # after every window: a person's
    assert watch.judge({"T-1": window}, "T-1") == {}
    assert (ws.root / "persons.txt").read_text() == "mine\n"
    later = Window(time.time())
    (ws.root / "persons.txt").write_text("mine, edited\n")  # once known as the person's, never planted
    assert watch.judge({"T-2": later}, "T-2") == {}
    assert (ws.root / "persons.txt").read_text() == "mine, edited\n"


def test_a_change_in_another_workers_window_is_left_to_its_guards(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    watch = MainWatch(ws, None)
    mine, theirs = Window(time.time() + 3600), Window(time.time())
    (ws.root / "planted.py").write_text("x = 1\n")
    assert watch.judge({"T-1": mine, "T-2": theirs}, "T-1") == {}
    assert (ws.root / "planted.py").exists()
    found = watch.judge({"T-1": mine, "T-2": theirs}, "T-2")
    assert list(found) == ["T-2"] and not (ws.root / "planted.py").exists()


def test_a_fresh_worktree_shows_what_someone_wrote_there_and_is_put_back_at_its_base(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    watch = MainWatch(ws, None)
    base = git(ws.root, "rev-parse", "HEAD").strip()
    (ws.root / "guarded.txt").write_text("overwritten\n")
    (ws.root / "new.txt").write_text("new\n")
    paths = watch.foreign_in_fresh(ws.root, base)
    assert paths == ["guarded.txt", "new.txt"]
    watch.clean_fresh("T-2", ws.root, base, paths)
    assert (ws.root / "guarded.txt").read_text() == "do not touch\n" and not (ws.root / "new.txt").exists()
    saved = list((ws.root / "logs" / "rollback").rglob("new.txt")) + list(
        (ws.root / "logs" / "rollback").rglob("guarded.txt"))
    assert len(saved) == 2
    assert watch.foreign_in_fresh(ws.root, base) == []
