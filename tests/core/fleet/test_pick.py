"""fleet/pick.py (SPEC §12 "Across machines"): the pick with a remote: a paused remote, every race lost.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import host, pick, remote  # noqa: F401 - loaded, so that fleet.<module> resolves

from ..test_fleet import Person, context, git, make_fleet


def test_a_remote_paused_after_this_tick_ran_a_task_ends_the_tick_through_its_afterwards(tmp_path, monkeypatch):
    """What already ran is published and recorded (run.afterwards), never dropped with the stop."""
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 2)
    person = Person(tmp_path, bare)
    plan = person.root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    git(person.root, "commit", "-qam", "person: paused")
    git(person.root, "push", "-q", "origin", "main")
    ctx = context(clones["a"], "a", monkeypatch)
    ended = []

    def afterwards(ctx, code, message):
        ended.append((code, message))
        return Outcome(code, "afterwards: " + message)

    def never(ctx):
        raise AssertionError("a paused remote picks nothing")

    try:
        alone = fleet.pick.pick(ctx, never, afterwards)
        assert isinstance(alone, Outcome) and alone.exit_code == 0 and ended == []
        ctx.results.append(object())  # a task this tick ran already
        after = fleet.pick.pick(ctx, never, afterwards)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    assert ended == [(0, "tick skipped: tick_mode is paused (the remote's plan)")]
    assert after == Outcome(0, "afterwards: tick skipped: tick_mode is paused (the remote's plan)")


def test_a_tick_that_loses_every_race_for_a_claim_ends_saying_so(tmp_path, monkeypatch):
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    ctx = context(clones["a"], "a", monkeypatch)
    tries = []
    monkeypatch.setattr(fleet.claims, "claim", lambda ctx, task, batch=None: tries.append(task.id) or False)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    try:
        ended = fleet.pick.pick(ctx, lambda c: (c.plan(), c.plan().task("T-1")), lambda *a: None)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    assert tries == ["T-1"] * 8  # docs/workers.md: "up to 8 times in a tick, then the next tick tries"
    assert isinstance(ended, Outcome) and ended.exit_code == 1
    assert ended.message == "lost the race to the remote 8 times; the next tick tries again"
    assert "lost the race for T-1 to another host" in (clones["a"] / "logs" / "cron.log").read_text()
