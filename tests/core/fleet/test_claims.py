"""fleet/claims.py (SPEC §12 "Across machines"): a claim by compare-and-swap (of two hosts exactly one wins) and its heartbeat ref.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import time

import pytest

from memento_core import fleet
from memento_core.fleet import claims, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

from ..test_fleet import claim_refs, context, git, make_fleet, remote_plan, subjects


def test_of_two_hosts_racing_for_a_task_exactly_one_wins_and_the_loser_picks_again(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 2)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    for ctx in (a, b):
        fleet.sync.sync(ctx)  # both have fetched the same sha
    t1 = a.plan().task("T-1")
    try:
        assert fleet.claims.claim(a, t1) is True
        # HEAD moves to a claim commit only once its push has won: the winner's reflog has it
        # (and its index the claim's plan), the loser's HEAD never moved at all.
        assert git(clones["a"], "reflog", "-1", "--format=%gs", "HEAD").strip() == "commit: memento: claim T-1 on a"
        assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
        reflog, index = git(clones["b"], "reflog", "--format=%H %gs", "HEAD"), git(clones["b"], "ls-files", "-s")
        assert fleet.claims.claim(b, b.plan().task("T-1")) is False  # its lease names the sha it fetched
        # The loser is left as it was: HEAD where it fetched, the plan's T-1 still [ ] here.
        assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main~1")
        assert git(clones["b"], "reflog", "--format=%H %gs", "HEAD") == reflog
        assert git(clones["b"], "ls-files", "-s") == index
        assert git(clones["b"], "status", "--porcelain") == ""
        fleet.sync.sync(b)  # fetch and pick again: T-1 is a's now
        assert b.plan().task("T-1").status == "~"
        assert fleet.claims.claim(b, b.plan().task("T-2")) is True
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()
    plan = remote_plan(bare)
    assert [t.status for t in plan.tasks] == ["~", "~"]
    assert subjects(bare)[:2] == ["memento: claim T-2 on b", "memento: claim T-1 on a"]
    assert claim_refs(bare) == ["refs/memento/claims/T-1", "refs/memento/claims/T-2"]
    owners = {ref: git(bare, "log", "-1", "--format=%s", ref).strip() for ref in claim_refs(bare)}
    assert owners == {"refs/memento/claims/T-1": "memento: claim T-1 on a",
                      "refs/memento/claims/T-2": "memento: claim T-2 on b"}


def test_a_claim_heartbeat_moves_its_ref_and_a_changed_ref_means_the_claim_is_lost(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    monkeypatch.setattr(fleet.claims, "HEARTBEAT_SECONDS", 0.2)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    first = a.fleet.ref
    try:
        deadline = time.monotonic() + 60
        while git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == first:
            assert time.monotonic() < deadline, "the heartbeat ref never moved"
            time.sleep(0.05)
        # Another host rewrites the ref (a takeover): the next beat finds its lease broken.
        other = git(bare, "commit-tree", "-m", "memento: claim T-1 on z", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
        git(bare, "update-ref", "refs/memento/claims/T-1", other.strip())
        while not a.fleet.lost:
            assert time.monotonic() < deadline, "the lost claim was never noticed"
            time.sleep(0.05)
    finally:
        a.fleet.stop_beating()
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == other.strip()  # never overwritten


def test_a_claim_whose_head_moved_during_its_push_is_an_error_not_a_claim_held(tmp_path, monkeypatch):
    # A person's commit lands in the clone while the claim is being pushed: HEAD is not taken
    # from under them, and the tick stops with the reason instead of holding a claim it does not have.
    from memento_core.errors import MementoError

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    root, pushed = clones["a"], remote.push

    def push_then_a_person_commits(ctx, specs, leases):
        won = pushed(ctx, specs, leases)
        (root / "person.txt").write_text("a person's\n")
        git(root, "add", "person.txt")
        git(root, "commit", "-qm", "a person's commit")
        return won

    monkeypatch.setattr(remote, "push", push_then_a_person_commits)
    try:
        with pytest.raises(MementoError, match="HEAD moved while the claim of T-1 was pushed"):
            fleet.claims.claim(a, a.plan().task("T-1"))
    finally:
        if a.fleet is not None:
            a.fleet.stop_beating()
    assert git(root, "log", "-1", "--format=%s").strip() == "a person's commit"
