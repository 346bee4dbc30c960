"""fleet/stale.py (SPEC §12 "Across machines"): when another host's claim is stale, and never this host's own.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import time

from memento_core import fleet
from memento_core.fleet import claims, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

from ..test_fleet import claim_refs, context, git, make_fleet, remote_plan, subjects


def test_a_claim_seen_before_its_ref_is_judged_by_the_claim_commits_time(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    git(bare, "update-ref", "-d", "refs/memento/claims/T-1")  # b reads the branch, not (yet) the ref
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b)
    assert remote_plan(bare).task("T-1").status == "~"  # a fresh claim commit: left alone
    assert not any("taken over" in s for s in subjects(bare))
    later = time.time() + 3600  # an hour on, the claim commit is older than stale_lock_timeout
    monkeypatch.setattr(remote, "_now", lambda: later)
    fleet.sync.sync(b)
    assert remote_plan(bare).task("T-1").status == " "
    assert "memento: T-1 taken over from a lost claim (retry 1/3)" in subjects(bare)


def test_a_host_never_takes_over_its_own_claim_however_old_its_heartbeat(tmp_path, monkeypatch):
    # a's own claim is its local stale recovery's (its claim file and record say what to undo), never
    # a take-over through the remote; b, another host, takes the same old claim over.
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    from memento_core.state import Claim, write_claim

    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    # as the attempt writes it (tick/record.py, from attempt.attempt_task), by a tick of a that is gone now
    write_claim(a.ws, Claim(task="T-1", pid=2 ** 22 + 1, host="a", started="2026-12-06T00:00:00Z",
                            heartbeat=time.time(), tick=1, base=git(clones["a"], "rev-parse", "HEAD").strip()))
    plan = a.ws.plan_path
    plan.write_text(plan.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
    later = time.time() + 3600  # an hour on: the heartbeat ref is older than stale_lock_timeout
    monkeypatch.setattr(remote, "_now", lambda: later)
    fleet.sync.sync(a)
    assert remote_plan(bare).task("T-1").status == "~", subjects(bare)
    assert not any("taken over" in s for s in subjects(bare))
    assert claim_refs(bare) == ["refs/memento/claims/T-1"]
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b)
    assert "memento: T-1 taken over from a (retry 1/3)" in subjects(bare)
