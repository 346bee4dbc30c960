"""fleet/pick.py (SPEC §12 "Across machines"): the pick with a remote: a paused remote, every race lost.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import claims, host, pick, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

from ..test_fleet import Person, context, counted_fetches, git, make_fleet


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
        alone = fleet.pick.pick(ctx, never, afterwards, 1)
        assert isinstance(alone, Outcome) and alone.exit_code == 0 and ended == []
        ctx.results.append(object())  # a task this tick ran already
        after = fleet.pick.pick(ctx, never, afterwards, 1)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    assert ended == [(0, "tick skipped: tick_mode is paused (the remote's plan)")]
    log = (clones["a"] / "logs" / "cron.log").read_text()
    assert "tick skipped: tick_mode is paused on origin" in log
    assert "tick stopped" not in log  # a pause is no stop that wants a person
    assert after == Outcome(0, "afterwards: tick skipped: tick_mode is paused (the remote's plan)")


def test_a_tick_that_loses_every_race_for_a_claim_ends_saying_so(tmp_path, monkeypatch):
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    ctx = context(clones["a"], "a", monkeypatch)
    tries = []
    monkeypatch.setattr(fleet.claims, "claim", lambda ctx, task, batch=None: tries.append(task.id) or False)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    try:
        ended = fleet.pick.pick(ctx, lambda c: (c.plan(), c.plan().task("T-1")), lambda *a: None, 1)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    assert tries == ["T-1"] * 8  # docs/workers.md: "up to 8 times in a tick, then the next tick tries"
    assert isinstance(ended, Outcome) and ended.exit_code == 1
    assert ended.message == "lost the race to the remote 8 times; the next tick tries again"
    assert "lost the race for T-1 to another host" in (clones["a"] / "logs" / "cron.log").read_text()


def test_a_task_chained_on_the_last_result_is_taken_without_a_sync_or_a_claim_of_its_own(tmp_path, monkeypatch):
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 2)
    ctx = context(clones["a"], "a", monkeypatch)
    f = ctx.fleet
    fetches = counted_fetches(monkeypatch)

    def never(ctx, *args):
        raise AssertionError("a chained task is not picked")

    nothing = Outcome(0, "nothing to pick")
    f.task, f.queued = "T-1", ["T-2"]  # T-2 queued behind the claim in hand: not chained yet
    try:
        assert fleet.pick.pick(ctx, lambda c: nothing, never, 1) is nothing
        assert f.queued == ["T-2"] and fetches == ["a"]
        f.task = "T-2"  # now in hand, chained
        plan, task = fleet.pick.pick(ctx, never, never, 1)
    finally:
        f.stop_beating()
    assert task.id == "T-2" and plan.task("T-2") == task
    assert f.queued == [] and f.task == "T-2" and fetches == ["a"]  # no fetch of its own
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")  # nothing claimed


def test_a_chained_task_the_work_trees_plan_cannot_show_is_released_and_a_normal_pick_follows(tmp_path, monkeypatch):
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 2)
    ctx = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(ctx)
    plan = ctx.plan()
    assert fleet.claims.claim(ctx, plan.task("T-1"), [plan.task("T-1"), plan.task("T-2")])
    f = ctx.fleet
    f.stop_beating()
    assert (f.task, f.queued) == ("T-1", ["T-2"])
    f.task = "T-2"  # T-1's result pushed: T-2 chained
    path = clones["a"] / "docs" / "MASTER_PLAN.md"
    path.write_text(path.read_text().replace("`T-2`", "`T-9`"))  # this host's plan lost T-2 (a person's edit)
    picked = []
    nothing = Outcome(0, "nothing to pick")
    try:
        assert fleet.pick.pick(ctx, lambda c: picked.append(c) or nothing, None, 1) is nothing
    finally:
        f.stop_beating()
    assert picked == [ctx] and f.queued == []
    assert "refs/memento/claims/T-2" not in git(bare, "for-each-ref", "refs/memento/claims/")


def _stops(ctx):
    """pick's answer when the remote cannot be used; no task ran, so no afterwards."""
    def never(ctx, code, message):
        raise AssertionError("no task ran: the tick's state is saved, not its afterwards")

    try:
        return fleet.pick.pick(ctx, lambda c: (c.plan(), c.plan().task("T-1")), never, 1)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()


def test_a_remote_that_cannot_be_used_stops_the_tick_naming_why_and_saves_its_state(tmp_path, monkeypatch):
    from memento_core.state import TickState

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    git(clones["a"], "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    ctx = context(clones["a"], "a", monkeypatch)
    ctx.state.stale_tick = "tick 7 on a"  # what this tick learnt before its pick
    ended = _stops(ctx)
    assert ended.exit_code == 1
    assert ended.message.startswith("the remote 'origin' could not be used: git fetch origin failed:")
    assert f"tick stopped: {ended.message}" in (clones["a"] / "logs" / "cron.log").read_text()
    assert TickState.load(ctx.ws).stale_tick == "tick 7 on a"


def test_a_remote_that_refuses_the_claim_stops_the_tick_with_nothing_claimed(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\necho "protected branch" >&2\nexit 1\n')
    hook.chmod(0o755)
    ctx = context(clones["a"], "a", monkeypatch)
    ended = _stops(ctx)
    assert ended.exit_code == 1 and ended.message.startswith("the remote 'origin' refused the push")
    assert ended.message.endswith("; nothing was claimed, the next tick tries again")
    assert "protected branch" in ended.message


def test_a_commit_that_conflicts_with_the_remote_stops_the_tick_for_a_person(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    person = Person(tmp_path, bare)
    for root, text in ((person.root, "the person's\n"), (clones["a"], "this host's\n")):
        (root / "shared.txt").write_text(text)
        git(root, "add", "shared.txt")
        git(root, "commit", "-qm", "shared.txt")
    git(person.root, "push", "-q", "origin", "main")
    ctx = context(clones["a"], "a", monkeypatch)
    ended = _stops(ctx)
    assert ended.exit_code == 1
    assert ended.message == ("conflict with the remote's branch in shared.txt; rebase or merge by hand, "
                             "then the next tick runs")


def test_without_a_remote_the_pick_is_the_ticks_own(tmp_path, monkeypatch):
    from memento_core.config.load import load_config
    from memento_core.tick.context import TickContext
    from memento_core.workspace import Workspace

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    toml = clones["a"] / "memento.toml"
    toml.write_text(toml.read_text().replace('[workers]\nremote = "origin"\n', ""))
    ctx = TickContext(Workspace(clones["a"]))
    ctx.config = load_config(toml)
    fetches = counted_fetches(monkeypatch)
    picked = (ctx.plan(), ctx.plan().task("T-1"))
    assert fleet.pick.pick(ctx, lambda c: picked, None, 1) is picked
    assert fetches == [] and ctx.fleet is None


def test_a_won_claim_hands_the_task_picked_to_the_attempt(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    ctx = context(clones["a"], "a", monkeypatch)
    ctx.fleet = None  # the tick's first pick: no claim held yet, the sync makes its Fleet
    try:
        plan, task = fleet.pick.pick(ctx, lambda c: (c.plan(), c.plan().task("T-1")), None, 1)
    finally:
        ctx.fleet.stop_beating()
    assert task.id == "T-1" and plan.task("T-2") is not None
    assert git(bare, "log", "-1", "--format=%s", "main").strip() == "memento: claim T-1 on a"
    assert ctx.fleet.task == "T-1" and ctx.fleet.queued == []
