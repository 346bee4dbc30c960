"""fleet/sync.py (SPEC §12 "Across machines"): the local branch brought to the remote's before a
pick (a lost push fetched and pushed again), a paused plan asked of the remote, and Memento's
documents pushed at the end of a tick — no fetch when there is nothing to push, and a remote
that cannot be used said in cron.log, never an exception out of the tick."""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import claims, sync  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.runlog import Outcome
from tests.core.test_fleet import (
    a_person_pushes_after_the_first_fetch,
    context,
    counted_fetches,
    git,
    make_fleet,
    remote_plan,
    subjects,
)


def cron_log(root) -> str:
    path = root / "logs" / "cron.log"
    return path.read_text() if path.exists() else ""


def test_a_sync_that_lost_its_push_to_a_persons_commit_fetches_and_pushes_again(tmp_path, monkeypatch):
    """The host's own commit reaches the remote in the same sync, on top of what beat it."""
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    (clones["a"] / "hosts-own.txt").write_text("a's\n")
    git(clones["a"], "add", "hosts-own.txt")
    git(clones["a"], "commit", "-qm", "a's own commit")
    calls = a_person_pushes_after_the_first_fetch(tmp_path, bare, monkeypatch)
    try:
        fleet.sync.sync(a, take_over=False)
    finally:
        if a.fleet is not None:
            a.fleet.stop_beating()
    assert len(calls) == 2  # the lost push fetched once more
    assert subjects(bare)[:2] == ["a's own commit", "a person's commit"]
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")


def test_a_plan_in_auto_mode_is_refreshed_without_asking_the_remote(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fetches = counted_fetches(monkeypatch)
    plan = a.plan()
    assert fleet.sync.refresh(a, plan) is plan
    assert fetches == []


def test_a_paused_plan_resumed_on_the_remote_is_read_from_it(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    plan_path = clones["a"] / "docs" / "MASTER_PLAN.md"
    plan_path.write_text(plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    git(clones["a"], "commit", "-qam", "paused here")
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)  # the pause reaches the remote
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    person_plan = person / "docs" / "MASTER_PLAN.md"
    person_plan.write_text(person_plan.read_text().replace("tick_mode: paused", "tick_mode: auto"))
    git(person, "commit", "-qam", "person: resume")
    git(person, "push", "-q", "origin", "main")
    fresh = fleet.sync.refresh(a, a.plan())
    assert fresh.meta.tick_mode == "auto"
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")


def test_a_remote_that_cannot_be_used_leaves_the_plan_as_read_and_says_so(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    plan_path = clones["a"] / "docs" / "MASTER_PLAN.md"
    plan_path.write_text(plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    git(clones["a"], "commit", "-qam", "paused here")
    git(clones["a"], "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    a = context(clones["a"], "a", monkeypatch)
    plan = a.plan()
    assert fleet.sync.refresh(a, plan) is plan
    assert "the remote 'origin' could not be used:" in cron_log(clones["a"])
    fleet.sync.sync_for_architect(a)
    assert "the architect runs on this clone's plan: the remote 'origin' could not be used:" in cron_log(clones["a"])
    outcome = Outcome(0, "ran")
    assert fleet.sync.finish(a, outcome) is outcome
    assert "memento's documents were not pushed to origin:" in cron_log(clones["a"])


def test_finish_pushes_memento_documents_and_fetches_nothing_when_all_is_pushed(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    fetches = counted_fetches(monkeypatch)
    outcome = Outcome(0, "ran")
    assert fleet.sync.finish(a, outcome) is outcome
    assert fetches == []  # HEAD is the remote's branch as last fetched: nothing to push
    notes = clones["a"] / "docs" / "HUMAN_NOTES.md"
    notes.write_text(notes.read_text() + "\nA line this host's tick wrote.\n")
    fleet.sync.push_for_architect(a)
    assert fetches == ["a"]
    assert subjects(bare)[0] == "memento: sync docs"
    assert git(bare, "show", "main:docs/HUMAN_NOTES.md").endswith("A line this host's tick wrote.\n")
    assert remote_plan(bare).task("T-1").status == " "


def _a_person_pushes_after_every_fetch(tmp_path, bare, monkeypatch) -> list:
    """Every fetch of this host is followed by a person's push: each push of the host loses its race."""
    from memento_core.fleet import remote

    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    pushed = []

    def person_pushes():
        pushed.append(len(pushed))
        (person / "persons.txt").write_text(f"a person's {len(pushed)}\n")
        git(person, "add", "persons.txt")
        git(person, "commit", "-qm", f"a person's commit {len(pushed)}")
        git(person, "push", "-q", "origin", "main")

    real_fetch = remote.fetch

    def fetch_then_push(ctx):
        real_fetch(ctx)
        person_pushes()

    monkeypatch.setattr(remote, "fetch", fetch_then_push)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    return pushed


def test_a_sync_that_loses_every_race_gives_up_after_max_races_with_its_commit_kept_here(tmp_path, monkeypatch):
    import pytest

    from memento_core.errors import MementoError
    from memento_core.fleet import host

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    (clones["a"] / "hosts-own.txt").write_text("a's\n")
    git(clones["a"], "add", "hosts-own.txt")
    git(clones["a"], "commit", "-qm", "a's own commit")
    pushed = _a_person_pushes_after_every_fetch(tmp_path, bare, monkeypatch)
    with pytest.raises(MementoError, match=f"^lost the race to the remote {host.MAX_RACES} times$"):
        fleet.sync.sync(a, take_over=False)
    assert len(pushed) == host.MAX_RACES
    assert "a's own commit" not in subjects(bare)
    assert git(clones["a"], "log", "-1", "--format=%s").strip() == "a's own commit"


def test_a_result_an_earlier_tick_could_not_push_goes_with_its_claim_ref_and_its_unattempted_claim_is_released(
        tmp_path, monkeypatch):
    from memento_core.fleet import host, pending
    from tests.core.test_fleet import a_holds_two_with_the_first_done, claim_refs

    bare, root, a = a_holds_two_with_the_first_done(tmp_path, monkeypatch, max_tasks=3)
    # T-1 done here; the tick was killed before T-2 and before its push
    host._forget(a.fleet)
    assert sorted(pending.read_pending_claims(a)) == ["T-1", "T-2"]
    later = context(root, "a", monkeypatch)  # the next tick: no claim held in memory, the file has them
    fleet.sync.sync(later)
    assert subjects(bare)[:2] == ["memento: release T-2 (the tick stopped before its attempt)",
                                  "memento: complete T-1 Write out/1.txt"]
    assert claim_refs(bare) == []
    assert [t.status for t in remote_plan(bare).tasks] == ["x", " ", " "]
    assert pending.read_pending_claims(later) == {}
    assert not (root / ".memento" / "fleet_pending.json").exists()
    assert git(root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")


def test_a_sync_commits_memento_documents_first_and_takes_stale_claims_over_unless_told_not_to(tmp_path, monkeypatch):
    import time

    from memento_core.fleet import remote

    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    b = context(clones["b"], "b", monkeypatch)
    later = time.time() + 3600  # a's claim is an hour old
    monkeypatch.setattr(remote, "_now", lambda: later)
    notes = clones["b"] / "docs" / "HUMAN_NOTES.md"
    notes.write_text(notes.read_text() + "\nA line b's tick wrote.\n")
    fleet.sync.sync(b, take_over=False)
    assert subjects(bare)[0] == "memento: sync docs"
    assert git(bare, "show", "main:docs/HUMAN_NOTES.md").endswith("A line b's tick wrote.\n")
    assert remote_plan(bare).task("T-1").status == "~"  # not taken over when told not to
    fleet.sync.sync(b)
    assert subjects(bare)[0] == "memento: T-1 taken over from a (retry 1/3)"
    assert remote_plan(bare).task("T-1").status == " "


def test_finish_without_a_remote_hands_the_outcome_back_untouched(tmp_path, monkeypatch):
    from memento_core.config.load import load_config
    from memento_core.tick.context import TickContext
    from memento_core.workspace import Workspace

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    toml = clones["a"] / "memento.toml"
    toml.write_text(toml.read_text().replace('[workers]\nremote = "origin"\n', ""))
    ctx = TickContext(Workspace(clones["a"]))
    ctx.config = load_config(toml)
    fetches = counted_fetches(monkeypatch)
    outcome = Outcome(0, "ran")
    assert fleet.sync.finish(ctx, outcome) is outcome
    assert fetches == [] and ctx.fleet is None


def test_finish_gives_back_the_claims_the_tick_never_attempted(tmp_path, monkeypatch):
    from tests.core.test_fleet import claim_refs

    bare, clones = make_fleet(tmp_path, ["a"], 2, parallel=True)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    plan = a.plan()
    assert fleet.claims.claim(a, plan.task("T-1"), [plan.task("T-1"), plan.task("T-2")])
    outcome = Outcome(0, "interrupted by SIGTERM")
    try:
        assert fleet.sync.finish(a, outcome) is outcome
    finally:
        a.fleet.stop_beating()
    assert claim_refs(bare) == []
    assert [(t.status, t.retries) for t in remote_plan(bare).tasks] == [(" ", 0), (" ", 0)]
    assert (a.fleet.task, a.fleet.claims) == ("", {})


def test_finish_says_a_chained_claim_it_could_not_release_and_still_returns_the_outcome(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 2, parallel=True)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    plan = a.plan()
    assert fleet.claims.claim(a, plan.task("T-1"), [plan.task("T-1"), plan.task("T-2")])
    a.fleet.stop_beating()
    pending = clones["a"] / ".memento" / "fleet_pending.json"
    pending.unlink()
    pending.mkdir()  # the pending file cannot be written: the release fails with an OSError
    outcome = Outcome(0, "interrupted by SIGTERM")
    try:
        assert fleet.sync.finish(a, outcome) is outcome
    finally:
        a.fleet.stop_beating()
    assert "a chained claim was not released: [Errno 21] Is a directory" in cron_log(clones["a"])


def test_finish_pushes_the_documents_but_takes_no_stale_claim_over(tmp_path, monkeypatch):
    import time

    from memento_core.fleet import remote

    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b, take_over=False)
    later = time.time() + 3600  # a's claim is an hour old: the next pick's sync takes it over, not the finish
    monkeypatch.setattr(remote, "_now", lambda: later)
    notes = clones["b"] / "docs" / "HUMAN_NOTES.md"
    notes.write_text(notes.read_text() + "\nA line b's tick wrote.\n")
    fleet.sync.finish(b, Outcome(0, "ran"))
    assert subjects(bare)[0] == "memento: sync docs"
    assert remote_plan(bare).task("T-1").status == "~"


def test_a_pending_results_claim_ref_changed_after_the_fetch_is_never_deleted_and_the_result_is_set_aside(
        tmp_path, monkeypatch):
    from memento_core.fleet import host, remote
    from tests.core.test_fleet import commit_the_result

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    commit_the_result(root)
    host._forget(a.fleet)  # the tick was killed before its push: the pending file keeps the claim
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    other = []

    def z_takes_the_ref():  # between this host's fetch and its push, once
        other.append(git(bare, "commit-tree", "-m", "memento: claim T-1 on z",
                         "4b825dc642cb6eb9a060e54bf8d69288fbee4904").strip())
        git(bare, "update-ref", "refs/memento/claims/T-1", other[0])

    later = context(root, "a", monkeypatch)
    counted_fetches(monkeypatch, z_takes_the_ref)
    fleet.sync.sync(later, take_over=False)
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == other[0]  # never deleted
    assert "memento: complete T-1 Write out/1.txt" not in subjects(bare)
    assert "claim lost: its claim ref refs/memento/claims/T-1 is gone or another host's" in cron_log(root)
    assert git(root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
