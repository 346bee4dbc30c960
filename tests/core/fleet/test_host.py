"""fleet/host.py (SPEC §12 "Across machines"): this host for one tick — whether there is a fleet
at all, the branch the work tree is on (a detached HEAD refused), one Fleet per tick, and the
claims it holds (the one in hand, the chained one, forgotten when the pending file keeps them)."""

from __future__ import annotations

import threading

import pytest

from memento_core.config.load import load_config
from memento_core.errors import MementoError
from memento_core.fleet import host
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace
from tests.core.test_fleet import context, git, make_fleet


def test_a_fleet_is_enabled_only_by_workers_remote(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    assert host.enabled(a)
    alone = TickContext(Workspace(clones["a"]))
    assert not host.enabled(alone)  # no config read yet: never a fleet
    toml = clones["a"] / "memento.toml"
    toml.write_text(toml.read_text().replace('[workers]\nremote = "origin"\n', ""))
    alone.config = load_config(toml)
    assert not host.enabled(alone)


def test_one_fleet_per_tick_with_this_hosts_remote_branch_and_tracking_ref(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    git(clones["a"], "checkout", "-qb", "work")
    a = context(clones["a"], "runner-7", monkeypatch)
    f = host.fleet(a)
    assert host.fleet(a) is f and a.fleet is f
    assert (f.remote, f.host, f.branch) == ("origin", "runner-7", "work")
    assert f.tracking == "refs/remotes/origin/work"
    assert (f.task, f.ref, f.chained, f.claims, f.queued, f.races) == ("", "", "", {}, [], 0)
    # No push has lost a race yet: a claim takes one task, not this host's share (batch._batch).
    assert (f.contended, f.lost, f.fetched, f.plan_notes) == (False, "", None, [])


def test_a_detached_head_is_refused_naming_why(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    git(clones["a"], "checkout", "-q", "--detach")
    with pytest.raises(MementoError, match=r"not on a branch \(detached HEAD\): the fleet needs one"):
        context(clones["a"], "a", monkeypatch)


def test_the_claim_in_hand_names_its_ref_the_queue_its_chained_task_and_forgetting_drops_both(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    f = host.fleet(context(clones["a"], "a", monkeypatch))
    f.claims = {"T-1": host.Held("1" * 40), "T-2": host.Held("2" * 40, {"3" * 40})}
    f.task, f.queued = "T-1", ["T-2", "T-4"]  # the first queued is chained on the result in hand
    assert (f.ref, f.chained) == ("1" * 40, "T-2")
    f.task = "T-3"  # a task this host holds no claim for
    assert f.ref == ""
    host._forget(f)
    assert (f.task, f.claims, f.queued, f.ref, f.chained) == ("", {}, [], "", "")


def test_stop_beating_stops_and_joins_the_heartbeat_thread(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    f = host.fleet(context(clones["a"], "a", monkeypatch))
    f._thread = threading.Thread(target=f._stop.wait, daemon=True)
    f._thread.start()
    thread = f._thread
    f.stop_beating()
    assert f._stop.is_set() and not thread.is_alive() and f._thread is None
    f.stop_beating()  # twice: nothing left to stop


def test_a_conflict_names_its_paths():
    conflict = host.FleetConflict(["docs/MASTER_PLAN.md", "src/a.py"])
    assert str(conflict) == "conflict with the remote's branch in docs/MASTER_PLAN.md, src/a.py"
    assert conflict.paths == ["docs/MASTER_PLAN.md", "src/a.py"]


def test_the_races_a_tick_may_lose_are_the_ones_docs_workers_md_promises():
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[3] / "docs" / "workers.md").read_text().split())
    assert f"fetches and picks again (up to {host.MAX_RACES} times in a tick, then the next tick tries)" in text
