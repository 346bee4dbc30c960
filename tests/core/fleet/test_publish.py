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
    a_person_pushes_after_the_first_fetch,
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


def test_a_result_published_without_chain_claims_nothing_more(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    notes = clones["a"] / "docs" / "HUMAN_NOTES.md"
    notes.write_text(notes.read_text() + "\nA line this host's tick wrote.\n")
    assert fleet.publish.publish(a, TaskResult("T-1", True)).passed  # the tick stops after its task
    assert git(bare, "show", "main:docs/HUMAN_NOTES.md").endswith("A line this host's tick wrote.\n")  # pushed with it
    assert (a.fleet.task, a.fleet.queued, a.fleet.claims) == ("", [], {})
    assert [t.status for t in remote_plan(bare).tasks] == ["x", " ", " "]
    assert claim_refs(bare) == []


def test_a_chained_claim_takes_one_task_unless_told_the_tick_has_room_for_more(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    from ..test_fleet import commit_the_result, context

    bare, clones = make_fleet(tmp_path, ["a"], 4, max_tasks=4, parallel=True)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    commit_the_result(clones["a"])
    a.fleet.contended = True  # this host's pushes lose races: a claim may take its share of the phase
    try:
        assert fleet.publish.publish(a, TaskResult("T-1", True), chain=True).passed
    finally:
        a.fleet.stop_beating()
    assert len(a.fleet.claims) == 1 and a.fleet.queued == [a.fleet.task]
    assert [t.status for t in remote_plan(bare).tasks].count("~") == 1


def test_a_result_of_no_claim_held_is_handed_back_with_nothing_pushed(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    from ..test_fleet import context

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)  # its claim was forgotten (the pending file keeps it)
    fetches = counted_fetches(monkeypatch)
    before = git(bare, "for-each-ref")
    result = TaskResult("T-1", True)
    assert fleet.publish.publish(a, result, chain=True) is result
    assert fetches == [] and git(bare, "for-each-ref") == before


def test_an_attempt_that_never_reached_the_plan_gives_its_task_back_and_stops_its_heartbeat(tmp_path, monkeypatch):
    import threading

    from memento_core.tick.context import TaskResult

    from ..test_fleet import context

    bare, clones = make_fleet(tmp_path, ["a"], 2)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))  # its heartbeat thread runs
    plan = clones["a"] / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))  # the attempt's claim step, then refused
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", False, "the claim step was refused"))
        assert not [t for t in threading.enumerate() if t.name == "claim-ref-T-1" and t.is_alive()]
    finally:
        a.fleet.stop_beating()
    assert not result.passed
    assert [(t.status, t.retries) for t in remote_plan(bare).tasks] == [(" ", 0), (" ", 0)]
    assert claim_refs(bare) == []


def test_a_failed_result_chains_no_claim(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    root = clones["a"]
    git(root, "reset", "-q", "--hard", "HEAD~1")  # no result: the attempt failed at its last retry
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [~] `T-1`", "- [!] `T-1`"))
    git(root, "commit", "-qam", "memento: T-1 failed (retry 3/3)")
    result = fleet.publish.publish(a, TaskResult("T-1", False, "verify failed"), chain=True)
    assert not result.passed and (a.fleet.task, a.fleet.claims) == ("", {})
    assert not any(s.startswith("memento: claim T-2") for s in subjects(bare))
    assert subjects(bare)[0] == "memento: T-1 failed (retry 3/3)"
    assert claim_refs(bare) == []


def test_a_passed_result_with_its_claims_next_task_queued_waits_here_for_the_push_after_it(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    from ..test_fleet import commit_the_result, context

    bare, clones = make_fleet(tmp_path, ["a"], 3, parallel=True)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    plan = a.plan()
    assert fleet.claims.claim(a, plan.task("T-1"), [plan.task("T-1"), plan.task("T-2")])
    a.fleet.stop_beating()
    commit_the_result(clones["a"])
    before = git(bare, "for-each-ref")
    try:
        assert fleet.publish.publish(a, TaskResult("T-1", True), chain=True).passed
        assert a.fleet._thread.is_alive()  # both claims beaten while T-2 runs
    finally:
        a.fleet.stop_beating()
    assert git(bare, "for-each-ref") == before  # nothing pushed: the push after T-2 carries both
    assert (a.fleet.task, a.fleet.queued, sorted(a.fleet.claims)) == ("T-2", ["T-2"], ["T-1", "T-2"])
    assert fleet.pending.read_pending(a) == ("T-2", a.fleet.claims["T-2"].ref)


def _cron(root) -> str:
    path = root / "logs" / "cron.log"
    return path.read_text() if path.exists() else ""


def test_a_tick_that_stops_after_its_result_releases_the_claims_next_task_in_the_same_push(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    from ..test_fleet import a_holds_two_with_the_first_done

    bare, root, a = a_holds_two_with_the_first_done(tmp_path, monkeypatch)
    pushes = count_pushes(bare, tmp_path)
    assert fleet.publish.publish(a, TaskResult("T-1", True)).passed  # no chain: the tick stops here
    assert len(pushes.read_text().splitlines()) == 1
    assert subjects(bare)[:2] == ["memento: release T-2 (the tick stopped before its attempt)",
                                  "memento: complete T-1 Write out/1.txt"]
    assert [(t.status, t.retries) for t in remote_plan(bare).tasks] == [("x", 0), (" ", 0), (" ", 0)]
    assert claim_refs(bare) == [] and (a.fleet.task, a.fleet.claims, a.fleet.queued) == ("", {}, [])
    assert "released the claim of T-2: the tick stopped before attempting it" in _cron(root)
    assert not (root / ".memento" / "fleet_pending.json").exists()


def test_a_result_the_remote_refuses_stays_committed_here_with_its_claim_kept_for_the_next_sync(tmp_path, monkeypatch):
    from memento_core import status_log
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    root = clones["a"]
    a.number, a.number_saved = 1, True
    ref = a.fleet.ref
    hook = bare / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\necho "protected branch" >&2\nexit 1\n')
    hook.chmod(0o755)
    result = TaskResult("T-1", True)
    assert fleet.publish.publish(a, result) is result
    assert "the result of T-1 is committed here but not pushed (the next sync pushes it if the claim is still " \
           "this host's): the remote 'origin' refused the push" in _cron(root)
    said = dict(status_log.parse_status_text((root / "docs" / "TICK_STATUS.md").read_text())[-1].fields)
    assert said["Event"] == "⚠️ NOT PUSHED — the remote origin refused the result of T-1"
    assert "protected branch" in said["Reason"]
    assert (a.fleet.task, a.fleet.claims) == ("", {})
    assert fleet.pending.read_pending_claims(a) == {"T-1": ref}
    assert "memento: complete T-1 Write out/1.txt" in git(root, "log", "--format=%s")


def test_a_result_that_loses_every_race_is_left_for_the_next_tick(tmp_path, monkeypatch):
    from memento_core.fleet import host, remote
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    root = clones["a"]
    ref = a.fleet.ref
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    rounds = []

    def person_pushes():
        rounds.append(1)
        (person / "persons.txt").write_text(f"a person's {len(rounds)}\n")
        git(person, "add", "persons.txt")
        git(person, "commit", "-qm", f"a person's commit {len(rounds)}")
        git(person, "push", "-q", "origin", "main")

    real_fetch = remote.fetch
    monkeypatch.setattr(remote, "fetch", lambda ctx: (real_fetch(ctx), person_pushes()))
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    result = TaskResult("T-1", True)
    assert fleet.publish.publish(a, result) is result
    assert len(rounds) == host.MAX_RACES
    assert f"the result of T-1 was not pushed after {host.MAX_RACES} races; the next tick does" in _cron(root)
    assert (a.fleet.task, a.fleet.claims) == ("", {})
    assert fleet.pending.read_pending_claims(a) == {"T-1": ref}
    assert "memento: complete T-1 Write out/1.txt" not in subjects(bare)


def test_a_result_whose_claim_was_taken_over_meanwhile_is_set_aside_never_pushed(tmp_path, monkeypatch):
    from memento_core.fleet import remote
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    root = clones["a"]
    later = time.time() + 3600
    monkeypatch.setattr(remote, "_now", lambda: later)
    fleet.sync.sync(b)  # b takes a's hour-old claim over
    assert subjects(bare)[0] == "memento: T-1 taken over from a (retry 1/3)"
    pushes = count_pushes(bare, tmp_path)
    result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    assert not result.passed
    assert result.reason.startswith("claim lost: its claim ref refs/memento/claims/T-1 is gone or another host's "
                                    "(taken over as stale?); the result was set aside in logs/rollback/")
    assert not pushes.exists() and "memento: complete T-1 Write out/1.txt" not in subjects(bare)
    assert (root / result.reason.rsplit(" in ", 1)[1] / "unpushed.patch").read_text().count("Subject: [PATCH") >= 1
    assert (a.fleet.task, a.fleet.claims, a.fleet.lost) == ("", {}, "")


def test_a_result_that_conflicts_with_the_remote_is_pushed_as_a_failure_and_chains_nothing(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    from ..test_fleet import a_person_pushes_their_own_out_1, commit_the_result, context

    bare, clones = make_fleet(tmp_path, ["a"], 3, max_tasks=3, max_retries=1)  # a conflict blocks T-1
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    commit_the_result(clones["a"])
    a_person_pushes_their_own_out_1(tmp_path, bare)
    result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    assert not result.passed and result.reason.startswith("conflict with origin/main in out/1.txt; the work was saved in")
    assert subjects(bare)[0] == "memento: T-1 failed (retry 1/1): conflict"
    assert [(t.status, t.retries) for t in remote_plan(bare).tasks] == [("!", 1), (" ", 0), (" ", 0)]
    assert claim_refs(bare) == [] and (a.fleet.task, a.fleet.claims) == ("", {})
    assert git(bare, "show", "main:out/1.txt") == "a person's own\n"


def test_a_result_without_chain_that_loses_a_race_claims_nothing_on_its_next_try(tmp_path, monkeypatch):
    from memento_core.fleet import remote
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    fetches = a_person_pushes_after_the_first_fetch(tmp_path, bare, monkeypatch)
    assert fleet.publish.publish(a, TaskResult("T-1", True)).passed
    assert len(fetches) == 2  # lost once, landed on the next try
    assert subjects(bare)[:2] == ["memento: complete T-1 Write out/1.txt", "a person's commit"]
    assert claim_refs(bare) == [] and (a.fleet.task, a.fleet.claims) == ("", {})


def test_a_chained_claim_over_a_claim_ref_left_behind_is_leased_on_it_and_lands(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    # A ref of T-2 left behind (a person put the task back by hand); the branch has T-2 `[ ]`.
    left = git(bare, "commit-tree", "-m", "memento: claim T-2 on z", "4b825dc642cb6eb9a060e54bf8d69288fbee4904").strip()
    git(bare, "update-ref", "refs/memento/claims/T-2", left)
    try:
        assert fleet.publish.publish(a, TaskResult("T-1", True), chain=True).passed
    finally:
        a.fleet.stop_beating()
    assert subjects(bare)[:2] == ["memento: claim T-2 on a", "memento: complete T-1 Write out/1.txt"]
    assert git(bare, "rev-parse", "refs/memento/claims/T-2").strip() == a.fleet.ref != left


def test_a_chained_claim_head_cannot_take_is_left_to_go_stale_and_said(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch, n_tasks=5)
    tick_all({"b": clones["b"]})  # b completes T-2, T-3 and T-4 (its max_tasks_per_tick): T-5 is left
    root = clones["a"]
    for n in (2, 3, 4):  # a person's new files where the remote now has b's: the work tree cannot follow
        (root / "out" / f"{n}.txt").write_bytes(b"the person's own file\n")
    local = git(root, "rev-parse", "HEAD").strip()
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    finally:
        a.fleet.stop_beating()
    assert result.passed, result.reason
    assert subjects(bare)[:2] == ["memento: claim T-5 on a", "memento: complete T-1 Write out/1.txt"]
    tip = git(bare, "rev-parse", "main~1").strip()
    assert (f"the claim of T-5 landed but HEAD is not at {tip[:12]} to hold it: its heartbeat ref goes stale "
            "and another host takes it over") in _cron(root)
    assert git(root, "rev-parse", "HEAD").strip() == local and (a.fleet.task, a.fleet.claims) == ("", {})


def test_a_task_a_person_put_back_while_this_host_ran_it_is_not_claimed_again_in_its_results_push(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    plan = person / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [~] `T-1`", "- [ ] `T-1`"))  # by hand, its claim ref left
    git(person, "commit", "-qam", "a person puts T-1 back")
    git(person, "push", "-q", "origin", "main")
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    finally:
        a.fleet.stop_beating()
    # The person's `[ ]` stands over the result's `[x]` (plan_merge: the remote's word), so T-1 is
    # the first pickable task of the plan the result lands on; its claim ref is the one this push
    # deletes: it is not claimed in the same push, nor is any other.
    assert result.passed, result.reason
    assert subjects(bare)[:2] == ["memento: complete T-1 Write out/1.txt", "a person puts T-1 back"]
    assert git(bare, "show", "main:out/1.txt") == "T-1\n"
    assert [t.status for t in remote_plan(bare).tasks] == [" ", " ", " "]
    assert not any(s.startswith("memento: claim") for s in subjects(bare)[:2])
    assert claim_refs(bare) == [] and (a.fleet.task, a.fleet.claims, a.fleet.queued) == ("", {}, [])
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")


def test_a_chained_claim_git_cannot_write_lets_the_result_land_alone_even_after_a_lost_race(tmp_path, monkeypatch):
    from memento_core.fleet import remote
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    root = clones["a"]
    # The object store refuses the claim of T-2 (a full disk, say): a file stands where the folder
    # of its plan blob goes. Every object packed first, so no loose one is in that folder.
    git(root, "gc", "-q", "--prune=now")
    claimed = git(root, "show", "HEAD:docs/MASTER_PLAN.md").replace("- [ ] `T-2`", "- [~] `T-2`")
    blob = subprocess.run(["git", "hash-object", "--stdin"], cwd=root, input=claimed, capture_output=True,
                          text=True, check=True).stdout.strip()
    folder = root / ".git" / "objects" / blob[:2]
    assert not folder.exists()
    folder.write_text("not a folder\n")
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    real_fetch, fetches = remote.fetch, []

    def fetch(ctx):  # the first try loses its race to a person's push; the disk has room again by the next
        fetches.append(1)
        if len(fetches) == 2:
            folder.unlink()
        real_fetch(ctx)
        if len(fetches) == 1:
            (person / "persons.txt").write_text("a person's\n")
            git(person, "add", "persons.txt")
            git(person, "commit", "-qm", "a person's commit")
            git(person, "push", "-q", "origin", "main")

    monkeypatch.setattr(remote, "fetch", fetch)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    finally:
        a.fleet.stop_beating()
    assert result.passed, result.reason
    assert len(fetches) == 2  # lost once, landed on the next try: without a claim, as after the error
    assert subjects(bare)[:2] == ["memento: complete T-1 Write out/1.txt", "a person's commit"]
    assert not any(s.startswith("memento: claim T-2") for s in subjects(bare))
    assert [t.status for t in remote_plan(bare).tasks] == ["x", " ", " "]
    assert claim_refs(bare) == [] and (a.fleet.task, a.fleet.claims, a.fleet.queued) == ("", {}, [])
    assert "the next task was not claimed with the result of T-1: git unpack-objects failed" in _cron(root)
    assert git(root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
