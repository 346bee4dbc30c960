"""fleet/sync.py (SPEC §12 "Across machines"): the local branch brought to the remote's before a
pick (a lost push fetched and pushed again), a paused plan asked of the remote, and Memento's
documents pushed at the end of a tick — no fetch when there is nothing to push, and a remote
that cannot be used said in cron.log, never an exception out of the tick."""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import claims, sync  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.runlog import Outcome
from tests.core.test_fleet import context, counted_fetches, git, make_fleet, remote_plan, subjects


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
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))

    def person_pushes():
        (person / "persons.txt").write_text("a person's\n")
        git(person, "add", "persons.txt")
        git(person, "commit", "-qm", "a person's commit")
        git(person, "push", "-q", "origin", "main")

    calls = counted_fetches(monkeypatch, person_pushes)
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
