"""fleet/publish.py (SPEC §12 "Across machines"): the result's push, and the next claim chained in it.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import os
import subprocess
import time

from memento_core import fleet
from memento_core.fleet import claims, pending, pick, publish, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

from ..test_fleet import (
    claim_refs,
    count_pushes,
    counted_fetches,
    git,
    make_fleet,
    remote_plan,
    subjects,
    tick_all,
    two_hosts_a_holding_t1,
)


def test_a_tick_that_goes_on_claims_its_next_task_in_the_push_of_its_result(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 3, max_tasks=3)
    pushes = count_pushes(bare, tmp_path)
    out = tick_all(clones)["a"]
    assert all(f"T-{i} passed" in out for i in (1, 2, 3)), out
    lines = pushes.read_text().splitlines()
    # The first claim; then result+claim, result+claim; then the last result (today: 6 pushes).
    assert len(lines) == 4, lines
    assert "refs/memento/claims/T-2" in lines[1] and "refs/memento/claims/T-3" in lines[2], lines
    plan = remote_plan(bare)
    assert [t.status for t in plan.tasks] == ["x", "x", "x"]
    log = subjects(bare)
    for i in (1, 2, 3):
        assert log.count(f"memento: complete T-{i} Write out/{i}.txt") == 1
        assert log.count(f"memento: claim T-{i} on a") == 1
    assert claim_refs(bare) == []
    assert not (clones["a"] / ".memento" / "fleet_pending.json").exists()
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert git(clones["a"], "status", "--porcelain") == ""


def test_a_chained_claim_that_loses_its_race_still_lands_the_result_and_claims_another_task(tmp_path, monkeypatch):
    from memento_core.tick import run
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)

    def b_claims_t2():  # between a's fetch and its push: b wins T-2
        fleet.sync.sync(b)
        assert fleet.claims.claim(b, b.plan().task("T-2"))
        b.fleet.stop_beating()

    fetches = counted_fetches(monkeypatch, b_claims_t2)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
        assert result.passed, result.reason
        assert fetches.count("a") == 2  # a's first push lost the race and went round again
        log = subjects(bare)
        assert log.count("memento: complete T-1 Write out/1.txt") == 1
        assert log.count("memento: claim T-2 on b") == 1 and not any(s.startswith("memento: claim T-2 on a") for s in log)
        assert log.count("memento: claim T-3 on a") == 1
        assert [t.status for t in remote_plan(bare).tasks] == ["x", "~", "~"]
        owners = {ref: git(bare, "log", "-1", "--format=%s", ref).strip() for ref in claim_refs(bare)}
        assert owners == {"refs/memento/claims/T-2": "memento: claim T-2 on b",
                          "refs/memento/claims/T-3": "memento: claim T-3 on a"}
        assert a.fleet.task == "T-3" and a.fleet.ref == git(bare, "rev-parse", "refs/memento/claims/T-3").strip()
        assert fleet.pending.read_pending(a) == ("T-3", a.fleet.ref)
        assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
        # The next pick is the chained claim: no fetch, no claim push.
        before = len(fetches)
        picked = fleet.pick.pick(a, run.pick_task, run.afterwards, 1)
        assert not isinstance(picked, run.Outcome), picked
        assert picked[1].id == "T-3" and len(fetches) == before
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()


def test_a_stale_claim_of_another_host_is_not_chained_over_but_taken_over_by_the_next_pick(tmp_path, monkeypatch):
    from memento_core.tick import run
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    fleet.sync.sync(b)
    assert fleet.claims.claim(b, b.plan().task("T-2"))
    b.fleet.stop_beating()
    # b died long ago: its heartbeat ref is an hour old.
    env = {**os.environ, "GIT_COMMITTER_DATE": f"@{int(time.time()) - 3600} +0000"}
    old = subprocess.run(["git", "commit-tree", "-m", "memento: claim T-2 on b",
                          "4b825dc642cb6eb9a060e54bf8d69288fbee4904"], cwd=bare, env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    git(bare, "update-ref", "refs/memento/claims/T-2", old)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
        assert result.passed, result.reason
        assert a.fleet.task == "" and a.fleet.chained == ""  # not chained: T-3 is not claimed
        assert not any(s.startswith("memento: claim T-3") for s in subjects(bare))
        assert claim_refs(bare) == ["refs/memento/claims/T-2"]
        picked = fleet.pick.pick(a, run.pick_task, run.afterwards, 1)  # the normal pick takes it over
        assert not isinstance(picked, run.Outcome), picked
        assert picked[1].id == "T-2"
        log = subjects(bare)
        assert "memento: T-2 taken over from b (retry 1/3)" in log
        assert log[0] == "memento: claim T-2 on a"
        assert remote_plan(bare).task("T-2").retries == 1
        # With no stale claim left, T-2's result claims T-3 in its push ...
        root = clones["a"]
        a.fleet.stop_beating()
        (root / "out" / "2.txt").write_text("T-2\n")
        plan = root / "docs" / "MASTER_PLAN.md"
        plan.write_text(plan.read_text().replace("- [ ] `T-2`", "- [x] `T-2`"))
        git(root, "add", "out/2.txt", "docs/MASTER_PLAN.md")
        git(root, "commit", "-qm", "memento: complete T-2 Write out/2.txt")
        assert fleet.publish.publish(a, TaskResult("T-2", True), chain=True).passed
        assert a.fleet.chained == "T-3" and claim_refs(bare) == ["refs/memento/claims/T-3"]
        # ... and a tick that stops before attempting it gives it back: `[ ]`, no retry, no ref.
        fleet.sync.finish(a, run.Outcome(0, "interrupted by SIGTERM"))
        assert claim_refs(bare) == [] and a.fleet.task == "" and a.fleet.chained == ""
        t3 = remote_plan(bare).task("T-3")
        assert (t3.status, t3.retries) == (" ", 0)
        assert subjects(bare)[0].startswith("memento: release T-3")
        assert not (root / ".memento" / "fleet_pending.json").exists()
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()
