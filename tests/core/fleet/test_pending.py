"""fleet/pending.py (SPEC §12 "Across machines"): results the remote has not taken yet: pushed by the next tick with their claim ref,
or set aside when the claim was taken over meanwhile.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import os
import signal

from ..test_fleet import (
    claim_refs,
    git,
    make_fleet,
    remote_plan,
    start_tick,
    subjects,
    tick_all,
    wait_for,
    worker,
)


def test_a_slow_host_whose_claim_was_taken_over_never_pushes_its_result(tmp_path):
    # Each host's agent waits for .memento/go in its own clone: b's is there, a's comes later.
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1, command=worker("0", "-", ".memento/go"), stale="3s")
    (clones["b"] / ".memento").mkdir(exist_ok=True)
    (clones["b"] / ".memento" / "go").write_text("")
    a = start_tick(clones["a"], "a", MEMENTO_REMOTE_HEARTBEAT_SECONDS="600")  # a stops heart-beating
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")

        def b_finishes():
            tick_all({"b": clones["b"]})
            return remote_plan(bare).task("T-1").status == "x"

        wait_for(b_finishes, "b to take T-1 over and do it")
        (clones["a"] / ".memento" / "go").write_text("")
        out, _ = a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
    assert b"claim lost" in out, out
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1
    assert "memento: T-1 taken over from a (retry 1/3)" in log
    status = git(bare, "show", "main:docs/TICK_STATUS.md")
    assert "CLAIM LOST — T-1 was taken over while it ran here" in status
    assert list((clones["a"] / "logs" / "rollback").glob("*fleet-T-1*/unpushed.patch"))
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert claim_refs(bare) == []


def test_a_result_not_pushed_is_set_aside_when_its_claim_was_taken_over_meanwhile(tmp_path):
    # a's agent waits for .memento/go; the remote goes away while it runs, so a's result is
    # committed in a's clone but not pushed. b takes the stale claim over and completes T-1.
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1, command=worker("0", "-", ".memento/go"), stale="2s")
    (clones["b"] / ".memento").mkdir(exist_ok=True)
    (clones["b"] / ".memento" / "go").write_text("")
    a = start_tick(clones["a"], "a", MEMENTO_REMOTE_HEARTBEAT_SECONDS="600")
    away = tmp_path / "remote.away"
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")
        bare.rename(away)
        (clones["a"] / ".memento" / "go").write_text("")
        a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
        if away.exists():
            away.rename(bare)
    assert "complete T-1" in git(clones["a"], "log", "--format=%s", "-3")  # committed, not pushed
    assert (clones["a"] / ".memento" / "fleet_pending.json").is_file()

    def b_finishes():
        tick_all({"b": clones["b"]})
        return remote_plan(bare).task("T-1").status == "x"

    wait_for(b_finishes, "b to take T-1 over and do it")
    out = tick_all({"a": clones["a"]})["a"]
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1, (log, out)
    assert "CLAIM LOST — T-1 was taken over before its result was pushed" in git(bare, "show", "main:docs/TICK_STATUS.md")
    assert list((clones["a"] / "logs" / "rollback").glob("*fleet-T-1*/unpushed.patch"))
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert not (clones["a"] / ".memento" / "fleet_pending.json").exists()
    assert claim_refs(bare) == []


def test_a_result_not_pushed_lands_with_its_claim_ref_on_the_next_tick(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 1, command=worker("0", "-", ".memento/go"))
    a = start_tick(clones["a"], "a", MEMENTO_REMOTE_HEARTBEAT_SECONDS="600")
    away = tmp_path / "remote.away"
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")
        bare.rename(away)
        (clones["a"] / ".memento").mkdir(exist_ok=True)
        (clones["a"] / ".memento" / "go").write_text("")
        a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
        if away.exists():
            away.rename(bare)
    assert claim_refs(bare) == ["refs/memento/claims/T-1"]
    tick_all({"a": clones["a"]})
    assert subjects(bare).count("memento: complete T-1 Write out/1.txt") == 1
    assert remote_plan(bare).task("T-1").status == "x"
    assert claim_refs(bare) == []
    assert not (clones["a"] / ".memento" / "fleet_pending.json").exists()
