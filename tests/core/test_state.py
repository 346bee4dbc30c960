"""memento_core/state.py: claims, their staleness, the heartbeat thread, and state.json.

The heartbeat tests run the real thread with a short interval and judge the
claim file on disk, the way a recovering tick or the doctor reads it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from memento_core.state import (
    Claim,
    Heartbeat,
    TickState,
    claim_is_stale,
    claim_path,
    read_claim,
    remove_claim,
    this_host,
    write_claim,
)
from memento_core.workspace import Workspace

PY = sys.executable
FAST = 0.02  # seconds between heartbeats in these tests


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / ".memento").mkdir()
    return Workspace(tmp_path)


def make_claim(**changes) -> Claim:
    fields = dict(task="T-1", pid=os.getpid(), host=this_host(), started="2026-01-01T00:00:00Z",
                  heartbeat=time.time(), tick=3, base="0" * 40)
    return Claim(**{**fields, **changes})


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.005)


def on_disk(ws: Workspace) -> Claim:
    claim = read_claim(ws, "T-1")
    assert claim is not None
    return claim


def a_dead_pid() -> int:
    child = subprocess.Popen([PY, "-c", "pass"])
    child.wait()
    return child.pid


# --------------------------------------------------------------------------- claim_is_stale


def test_no_claim_file_is_stale():
    assert claim_is_stale(None, 60) == "no claim file"


def test_a_live_worker_with_a_fresh_heartbeat_is_not_stale():
    assert claim_is_stale(make_claim(heartbeat=1000.0), 60, now=1030.0) is None
    assert claim_is_stale(make_claim(heartbeat=1000.0), 60, now=1060.0) is None  # exactly the limit: still alive


def test_a_dead_worker_on_this_host_is_stale_however_fresh_its_heartbeat():
    pid = a_dead_pid()
    assert claim_is_stale(make_claim(pid=pid, heartbeat=1000.0), 60, now=1000.0) == f"worker pid {pid} is gone"
    assert claim_is_stale(make_claim(pid=0), 60) == "worker pid 0 is gone"


def test_a_zombie_worker_is_gone():
    child = subprocess.Popen([PY, "-c", "pass"])
    try:
        wait_for(lambda: Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z")
        assert claim_is_stale(make_claim(pid=child.pid), 60) == f"worker pid {child.pid} is gone"
    finally:
        child.wait()


def test_a_live_worker_whose_heartbeat_stopped_is_stale():
    assert claim_is_stale(make_claim(heartbeat=1000.0), 60, now=1100.0) == "no heartbeat for 100s"


def test_another_hosts_claim_is_judged_by_its_heartbeat_alone():
    # Its pid means nothing here: a pid that is dead on this machine proves nothing.
    elsewhere = make_claim(host=this_host() + "-elsewhere", pid=a_dead_pid(), heartbeat=1000.0)
    assert claim_is_stale(elsewhere, 60, now=1030.0) is None
    assert claim_is_stale(elsewhere, 60, now=1200.0) == "no heartbeat for 200s"


# --------------------------------------------------------------------------- Heartbeat


def test_the_heartbeat_keeps_refreshing_the_claim_on_disk(ws):
    claim = make_claim(heartbeat=time.time() - 3600)  # written an hour ago: stale by itself
    write_claim(ws, claim)
    assert claim_is_stale(on_disk(ws), 60) == "no heartbeat for 3600s"
    with Heartbeat(ws, claim, every=FAST):
        # The main thread writes nothing: only the heartbeat thread can refresh the file.
        wait_for(lambda: claim_is_stale(on_disk(ws), 60) is None)
        first = on_disk(ws).heartbeat
        wait_for(lambda: on_disk(ws).heartbeat > first)
        second = on_disk(ws).heartbeat
        wait_for(lambda: on_disk(ws).heartbeat > second)
    assert asdict(on_disk(ws)) == asdict(claim)  # the rest of the claim is written as it was


def test_update_writes_the_claim_at_once(ws):
    claim = make_claim(heartbeat=time.time() - 3600)
    write_claim(ws, claim)
    with Heartbeat(ws, claim, every=3600) as beat:  # the thread itself would not write for an hour
        beat.update(stage="running", pgid=4242)
        written = on_disk(ws)
        assert (written.stage, written.pgid) == ("running", 4242)
        assert claim_is_stale(written, 60) is None
        beat.update(stage="committing", commit_paths=["a.txt"], commit_message="memento: complete T-1")
        written = on_disk(ws)
        assert (written.stage, written.commit_paths, written.commit_message) == (
            "committing", ["a.txt"], "memento: complete T-1")
        assert written.pgid == 4242


def test_after_stop_nothing_rewrites_the_claim(ws):
    claim = make_claim(heartbeat=time.time() - 3600)
    write_claim(ws, claim)
    with Heartbeat(ws, claim, every=FAST) as beat:
        wait_for(lambda: claim_is_stale(on_disk(ws), 60) is None)  # it was beating
        beat.stop()
        frozen = claim_path(ws, "T-1").read_bytes()
        stat = claim_path(ws, "T-1").stat()
        beat.update(stage="verifying")  # a late progress mark is dropped too
        time.sleep(FAST * 20)
        assert claim_path(ws, "T-1").read_bytes() == frozen
        assert claim_path(ws, "T-1").stat().st_ino == stat.st_ino  # not even rewritten with the same bytes
        wait_for(lambda: f"heartbeat-{claim.task}" not in {t.name for t in threading.enumerate()})


def test_a_removed_claim_is_never_written_back(ws):
    claim = make_claim()
    write_claim(ws, claim)
    with Heartbeat(ws, claim, every=0.001) as beat:
        time.sleep(0.02)
        beat.stop()
        remove_claim(ws, "T-1")
        time.sleep(0.05)
        assert not claim_path(ws, "T-1").exists()
    assert read_claim(ws, "T-1") is None


def test_the_heartbeat_interval_comes_from_the_environment(tmp_path):
    code = "from memento_core.state import HEARTBEAT_SECONDS, Heartbeat; print(HEARTBEAT_SECONDS)"
    env = {**os.environ, "MEMENTO_HEARTBEAT_SECONDS": "0.25"}
    out = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0.25"


# --------------------------------------------------------------------------- claim files


def test_a_claim_round_trips_through_its_file(ws):
    claim = make_claim(stage="committing", pgid=77, untracked=["notes.txt"], commit_paths=["a.txt"],
                       commit_message="memento: complete T-1 ✓", commit_hashes={"a.txt": "e" * 40},
                       entry="## Tick 3 …")
    write_claim(ws, claim)
    assert claim_path(ws, "T-1") == ws.claims_dir / "T-1.json"
    assert asdict(read_claim(ws, "T-1")) == asdict(claim)
    assert [p.name for p in ws.claims_dir.iterdir()] == ["T-1.json"]  # no temp file left beside it


def test_a_missing_or_damaged_claim_reads_as_none(ws):
    assert read_claim(ws, "T-1") is None
    ws.claims_dir.mkdir(parents=True)
    # Torn, not JSON, JSON but not an object (once a crash of every tick), a field missing, not UTF-8.
    for damaged in (b"", b"{not json", b"[1, 2]", b'"a string"', b'{"task": "T-1"}', b"\xff{}"):
        claim_path(ws, "T-1").write_bytes(damaged)
        assert read_claim(ws, "T-1") is None, damaged


def test_unknown_fields_in_a_claim_are_ignored(ws):
    data = {**asdict(make_claim()), "written_by": "a newer Memento"}
    ws.claims_dir.mkdir(parents=True)
    claim_path(ws, "T-1").write_text(json.dumps(data))
    assert asdict(read_claim(ws, "T-1")) == asdict(make_claim(heartbeat=data["heartbeat"]))


def test_removing_a_claim_twice_is_fine(ws):
    write_claim(ws, make_claim())
    remove_claim(ws, "T-1")
    remove_claim(ws, "T-1")
    assert read_claim(ws, "T-1") is None


# --------------------------------------------------------------------------- state.json


def test_tick_state_round_trips(ws):
    state = TickState(consecutive_failed_ticks=2, breaker_reason="git error", breaker_at="2026-01-01T00:00:00Z",
                      last_event="complete:done", dirty_signature="a.txt", last_tick=41,
                      last_tick_started="2026-01-01T00:00:00Z", last_tick_finished="2026-01-01T00:01:00Z",
                      last_tick_exit=1, last_log="logs/tick_x.log", unsurfaced=[{"task": "T-1", "commit": "abc1234"}])
    state.save(ws)
    assert TickState.load(ws) == state
    assert ws.state_path.read_text(encoding="utf-8").endswith("}\n")


def test_tick_state_keeps_only_the_last_twenty_unsurfaced_results(ws):
    TickState(unsurfaced=[{"task": f"T-{i}"} for i in range(25)]).save(ws)
    assert [r["task"] for r in TickState.load(ws).unsurfaced] == [f"T-{i}" for i in range(5, 25)]


@pytest.mark.parametrize("data", [b"", b"{not json", b"[1, 2]", b"null", b'{"last_tick": 1', b"\xff\xfe{}"])
def test_a_missing_or_corrupt_state_file_loads_as_a_fresh_state(ws, data):
    assert TickState.load(ws) == TickState()
    ws.state_path.write_bytes(data)
    assert TickState.load(ws) == TickState()


def test_unknown_keys_in_state_json_are_ignored(ws):
    ws.state_path.write_text(json.dumps({"last_tick": 7, "from_a_newer_version": True}))
    assert TickState.load(ws) == TickState(last_tick=7)


def test_a_beat_or_a_stage_is_not_synced_but_what_a_commit_is_made_of_is(ws, monkeypatch):
    """fsync is the slow part of a write: a beat or a stage alone is not made durable (a crash
    that loses it makes the claim look older, which it is); the paths, hashes and entry of the
    commit a passed attempt is making are, as when the claim was taken."""
    from memento_core import locks

    synced: list[str] = []
    real = locks.os.fsync

    def counted(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    claim = make_claim()
    write_claim(ws, claim)
    monkeypatch.setattr(locks.os, "fsync", counted)
    with Heartbeat(ws, claim, every=3600) as beat:
        beat.update(stage="running")
        beat.update()
        assert synced == []
        beat.update(stage="committing", commit_paths=["a.txt"], commit_message="m", commit_hashes={}, entry="e")
        assert synced, "the committing stage was not made durable"
    assert on_disk(ws).commit_paths == ["a.txt"]
