"""tick/recovery.py (step 4): a stale attempt found by the tick's own record (a dead pid, never a
claim's word alone), reset with its work rolled back and a retry counted; the temp files a killed
writer left removed. A real claim and record made as a tick makes them, the dead tick a real process
that has ended."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace

import pytest

from memento_core import status_log
from memento_core.attempt_record import read_record, save_record
from memento_core.plan.scan import parse_plan
from memento_core.state import read_claim, write_claim
from memento_core.tick.claim import claim_task
from memento_core.tick.context import TickContext
from memento_core.tick.record import write_record
from memento_core.tick.recovery import clean_leftovers, recover_stale_claims, stale_reason
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


def _ctx(ws) -> TickContext:
    ctx = tick_context(ws)
    return ctx


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.fixture
def claimed(tmp_path, git_identity):
    """T-1 claimed by a tick whose process is gone, its agent's half-done file left behind."""
    ws = make_ws(tmp_path, "true")
    ctx = _ctx(ws)
    task = ctx.plan().task("T-1")
    base = git(ws.root, "rev-parse", "HEAD").strip()
    rec = write_record(ws, task, 1, base, set(), 3)
    claim = claim_task(ctx, task, base, set())
    dead = _dead_pid()
    save_record(ws, replace(rec, pid=dead, pid_start=1))
    write_claim(ws, replace(claim, pid=dead))
    (ws.root / "hello.txt").write_text("half done\n")
    return ws, dead


def test_the_records_dead_pid_makes_the_attempt_stale_and_this_processs_own_too(claimed):
    ws, dead = claimed
    rec, claim = read_record(ws, "T-1"), read_claim(ws, "T-1")
    assert stale_reason(ws, claim, rec, 900) == f"worker pid {dead} is gone"
    forged = replace(claim, pid=os.getpid(), heartbeat=time.time())  # a claim the agent rewrote
    assert stale_reason(ws, forged, rec, 900) == f"worker pid {dead} is gone"  # the record decides
    assert stale_reason(ws, claim, replace(rec, pid=os.getpid()), 900) == \
        "left behind by an earlier tick of this process"
    fresh = replace(claim, pid=os.getpid(), heartbeat=time.time())
    assert stale_reason(ws, fresh, None, 900) is None  # no record: the claim's heartbeat decides
    assert stale_reason(ws, replace(fresh, heartbeat=time.time() - 1000), None, 900) is not None


def test_a_stale_attempt_is_reset_rolled_back_and_counted(claimed):
    ws, _dead = claimed
    ctx = _ctx(ws)
    plan = recover_stale_claims(ctx, ctx.plan())
    task = plan.task("T-1")
    assert (task.status, task.retries) == (" ", 1) and parse_plan(ws.plan_path).task("T-1").retries == 1
    assert not (ws.root / "hello.txt").exists() and read_claim(ws, "T-1") is None
    assert read_record(ws, "T-1") is None
    events = [e.field("Event") for e in status_log.parse_status(ws.status_path)]
    assert "⚠️ STALE — Stale [~] detected on T-1, reset to [ ]" in events, events


def test_a_killed_writers_temp_files_go_a_live_writers_fresh_one_stays(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    orphan = ws.plan_path.parent / f".{ws.plan_path.name}.x1.tmp"
    orphan.write_text("half a plan")
    old, fresh = ws.memento_dir / ".state.json.a.tmp", ws.memento_dir / ".state.json.b.tmp"
    old.write_text("{")
    fresh.write_text("{")
    os.utime(old, (time.time() - 120, time.time() - 120))
    clean_leftovers(_ctx(ws))
    assert not orphan.exists() and not old.exists() and fresh.exists()
