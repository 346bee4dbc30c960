"""A host whose pushes lose races claims its share of the free tasks at once (up to four) and
pushes their results together (fleet.batch._batch, SPEC §12): judged on the remote's branch, its
claim refs and its reflog. In a parallel phase a host takes any free task at random
(fleet.batch._spread), never one whose files overlap another host's claim."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memento_core import fleet
from memento_core.fleet import batch, claims, pending, pick, publish, remote, stale, sync  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.plan.scan import parse_plan_text
from memento_core.tick import run
from memento_core.tick.context import TaskResult

from ..test_fleet import (
    Person,
    ceiling_back_off,
    claim_refs,
    context,
    git,
    make_fleet,
    remote_plan,
    subjects,
    tick_all,
)
from .test_remote import hook


def lost_a_race(a, b) -> None:
    """Hosts a and b fetch the same branch; a's claim of T-1 lands, b's of T-2 loses the race
    (b is contended now); b fetches again."""
    fleet.sync.sync(a)
    fleet.sync.sync(b)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    assert fleet.claims.claim(b, b.plan().task("T-2")) is False and b.fleet.contended
    fleet.sync.sync(b)


def done_here(root: Path, task_id: str) -> None:
    """What a passed attempt leaves: its file, the task `[x]` in the work tree's plan, one commit."""
    n = task_id.split("-")[1]
    (root / "out").mkdir(exist_ok=True)
    (root / "out" / f"{n}.txt").write_text(f"{task_id}\n")
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace(f"- [ ] `{task_id}`", f"- [x] `{task_id}`"))
    git(root, "add", f"out/{n}.txt", "docs/MASTER_PLAN.md")
    git(root, "commit", "-qm", f"memento: complete {task_id} Write out/{n}.txt")


def test_a_host_that_lost_a_race_claims_two_and_pushes_both_results_in_one_push(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 6, max_tasks=6, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        fleet.sync.sync(a)
        fleet.sync.sync(b)  # both have fetched the same sha
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        plan = b.plan()
        t2 = plan.task("T-2")
        assert [t.id for t in fleet.batch._batch(b, plan, t2, 6)] == ["T-2"]  # no race lost yet: one at a time
        assert fleet.claims.claim(b, t2) is False and b.fleet.contended  # a's push moved the branch
        fleet.sync.sync(b)
        plan = b.plan()
        t2 = plan.task("T-2")
        assert len(fleet.batch._batch(b, plan, t2, 6)) == 3  # six unfinished, two hosts: three each
        batch = fleet.batch._batch(b, plan, t2, 2)  # the tick's room: two
        assert [t.id for t in batch][0] == "T-2" and len(batch) == 2 and batch[1].id not in ("T-1", "T-2")
        assert [t.id for t in fleet.batch._batch(b, plan, t2, 1)] == ["T-2"]  # no room for a second
        other = batch[1].id
        assert fleet.claims.claim(b, t2, batch)

        # One claim commit marks both `[~]`; each has its claim ref, the same heartbeat.
        assert subjects(bare)[0] == "memento: claim T-2 on b"
        assert f"memento: claim {other} on b" in git(bare, "log", "-1", "--format=%B", "main").splitlines()
        assert [remote_plan(bare).task(t).status for t in ("T-2", other)] == ["~", "~"]
        refs = {r.rsplit("/", 1)[1]: git(bare, "rev-parse", r).strip() for r in claim_refs(bare)}
        assert set(refs) == {"T-1", "T-2", other} and refs["T-2"] == refs[other]
        assert (b.fleet.task, b.fleet.queued) == ("T-2", [other])
        assert fleet.stale._claim_commit(b, other).host == "b"  # a claim named on a line of the body counts

        # T-2 passes: with `other` queued its result stays here, claim refs kept.
        claimed_tip = git(bare, "rev-parse", "main").strip()
        b.fleet.stop_beating()
        done_here(clones["b"], "T-2")
        assert fleet.publish.publish(b, TaskResult("T-2", True), chain=True, room=5).passed
        assert git(bare, "rev-parse", "main").strip() == claimed_tip
        assert set(fleet.pending.read_pending_claims(b)) == {"T-2", other} and b.fleet.task == other
        picked = fleet.pick.pick(b, run.pick_task, run.afterwards, 5)  # the queued task, no sync, no push
        assert not isinstance(picked, run.Outcome) and picked[1].id == other
        assert git(bare, "rev-parse", "main").strip() == claimed_tip

        # `other` passes: one push carries both results and the next claim: two, its share (four
        # tasks unfinished, two hosts holding claims).
        b.fleet.stop_beating()
        done_here(clones["b"], other)
        assert fleet.publish.publish(b, TaskResult(other, True), chain=True, room=4).passed
        pushed = git(bare, "log", "--format=%s", f"{claimed_tip}..main").splitlines()
        assert pushed[1:] == [f"memento: complete {other} Write out/{other[2:]}.txt",
                              "memento: complete T-2 Write out/2.txt"], pushed
        assert pushed[0].startswith("memento: claim ") and len(b.fleet.queued) == 2
        nxt = list(b.fleet.queued)
        assert set(r.rsplit("/", 1)[1] for r in claim_refs(bare)) == {"T-1", *nxt}
        assert all(remote_plan(bare).task(t).status == "x" for t in ("T-2", other))

        # The tick stops before attempting them: both go back, `[ ]`, no retry, no ref.
        fleet.sync.finish(b, run.Outcome(0, "interrupted by SIGTERM"))
        assert [r.rsplit("/", 1)[1] for r in claim_refs(bare)] == ["T-1"]
        assert [(remote_plan(bare).task(t).status, remote_plan(bare).task(t).retries) for t in nxt] == [(" ", 0)] * 2
        assert sorted(subjects(bare)[:2]) == sorted(f"memento: release {t} (the tick stopped before its attempt)"
                                                     for t in nxt)
        assert b.fleet.claims == {} and not (clones["b"] / ".memento" / "fleet_pending.json").exists()
        assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()


PERSON_PUSHES_MEANWHILE = """
n=$(cat {count} 2>/dev/null || echo 0)
while read old new ref; do
  if [ "$ref" = refs/heads/main ] && [ "$n" -lt {times} ]; then
    echo $((n + 1)) > {count}
    # A person's push lands between this push's check and its ref update: a lost race.
    unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
    c=$(git commit-tree "$old^{{tree}}" -p "$old" -m "person: pushed meanwhile $n")
    git update-ref refs/heads/main "$c" "$old"
  fi
done
exit 0
"""


def test_a_claim_takes_this_hosts_share_of_the_free_tasks_at_most_four(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b", "c"], 12, max_tasks=12, parallel=True)
    a, b, c = (context(clones[h], h, monkeypatch) for h in ("a", "b", "c"))
    try:
        for ctx in (a, b, c):
            fleet.sync.sync(ctx)
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        assert fleet.claims.claim(b, b.plan().task("T-2")) is False and b.fleet.contended
        fleet.sync.sync(b)
        plan = b.plan()
        # Twelve unfinished tasks, two hosts holding claims (a, and b itself): six each, four at most.
        assert len(fleet.batch._batch(b, plan, plan.task("T-2"), 12)) == 4
        assert len(fleet.batch._batch(b, plan, plan.task("T-2"), 3)) == 3  # the tick's room
        assert fleet.claims.claim(c, c.plan().task("T-3")) is False  # c had fetched before a's claim
        fleet.sync.sync(c)
        assert fleet.claims.claim(c, c.plan().task("T-3"), fleet.batch._batch(c, c.plan(), c.plan().task("T-3"), 12))
        assert len(c.fleet.claims) == 4  # 12 unfinished, a and c: six each, four at most
        fleet.sync.sync(b)
        plan = b.plan()
        # Twelve unfinished, three hosts holding claims: four each, from the seven free.
        free = next(t for t in plan.tasks if t.status == " ")  # c's random four may have taken T-2
        batch = fleet.batch._batch(b, plan, free, 12)
        assert len(batch) == 4 and len({t.id for t in batch}) == 4
        assert all(t.status == " " for t in batch)
        # Done tasks are no one's share: with three of the free ones done, nine are unfinished
        # (a's one, c's four, four free), three each: three of the four free.
        text = (clones["b"] / "docs" / "MASTER_PLAN.md").read_text()
        for t in [t for t in plan.tasks if t.status == " " and t.id != free.id][:3]:
            text = text.replace(f"- [ ] `{t.id}`", f"- [x] `{t.id}`", 1)
        later = parse_plan_text(text)
        assert sum(t.status == " " for t in later.tasks) == 4
        assert len(fleet.batch._batch(b, later, later.task(free.id), 12)) == 3
    finally:
        for ctx in (a, b, c):
            ctx.fleet.stop_beating()


def test_a_tick_that_lost_a_race_does_every_task_once_up_to_four_per_push(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 5, max_tasks=5, parallel=True)
    git(bare, "config", "core.logAllRefUpdates", "always")
    hook(bare, "pre-receive", PERSON_PUSHES_MEANWHILE.format(count=tmp_path / "count", times=1))
    out = tick_all(clones)
    assert "[ok]" in out["a"], out
    log = subjects(bare)
    plan = remote_plan(bare)
    assert all(t.status == "x" for t in plan.tasks), [(t.id, t.status) for t in plan.tasks]
    assert all(log.count(f"memento: complete T-{i} Write out/{i}.txt") == 1 for i in range(1, 6)), log
    assert "person: pushed meanwhile 0" in log and claim_refs(bare) == []
    assert "lost a race" in (clones["a"] / "logs" / "cron.log").read_text()
    # After the lost race the host (the only one holding claims) claimed four at a time, and a
    # push carried four results.
    bodies = git(bare, "log", "--format=%B%x00", "main").split("\0")
    assert any(body.count("memento: claim ") == 4 for body in bodies), bodies
    moves = git(bare, "reflog", "--format=%H", "main").split()
    per_push = [git(bare, "log", "--format=%s", f"{new_old[1]}..{new_old[0]}").count("memento: complete")
                for new_old in zip(moves, moves[1:], strict=False)]
    assert max(per_push) == 4 and sum(per_push) == 5, per_push


def test_killed_between_the_two_tasks_of_a_claim_the_next_tick_pushes_the_first_and_gives_back_the_second(
        tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 5, max_tasks=3, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        lost_a_race(a, b)
        plan = b.plan()
        batch = fleet.batch._batch(b, plan, plan.task("T-2"), 3)  # four free, two hosts: two
        assert fleet.claims.claim(b, batch[0], batch) and [t.id for t in batch][0] == "T-2" and len(batch) == 2
        second = batch[1].id
        b.fleet.stop_beating()
        done_here(clones["b"], "T-2")
        assert fleet.publish.publish(b, TaskResult("T-2", True), chain=True, room=2).passed
        b.fleet.stop_beating()  # kill -9 here: nothing of this tick's runs again
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()
    later = context(clones["b"], "b", monkeypatch)  # the next tick of host b
    try:
        fleet.sync.sync(later, take_over=False)
    finally:
        later.fleet.stop_beating()
    assert subjects(bare).count("memento: complete T-2 Write out/2.txt") == 1
    assert remote_plan(bare).task("T-2").status == "x"
    given_back = remote_plan(bare).task(second)
    assert (given_back.status, given_back.retries) == (" ", 0)
    assert [r.rsplit("/", 1)[1] for r in claim_refs(bare)] == ["T-1"]
    assert not (clones["b"] / ".memento" / "fleet_pending.json").exists()
    assert subjects(bare)[0] == f"memento: release {second} (the tick stopped before its attempt)"  # its claim answered


def test_a_pending_file_naming_another_hosts_claim_never_deletes_it(tmp_path, monkeypatch):
    """An unconfined agent of host b writes b's .memento/fleet_pending.json naming a's claim of
    T-1, its sha copied from refs/memento/seen/: b's next sync must leave a's claim alone (it
    takes the claim for one of its own that was lost, and sets its unpushed commits aside)."""
    import json

    bare, clones = make_fleet(tmp_path, ["a", "b"], 2, max_tasks=2, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        fleet.sync.sync(a)
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        a_ref = git(bare, "rev-parse", "refs/memento/claims/T-1").strip()
        fleet.sync.sync(b)  # b has fetched a's claim ref
        assert git(clones["b"], "rev-parse", "refs/memento/seen/T-1").strip() == a_ref
        forged = {"task": "T-1", "ref": a_ref, "claims": {"T-1": a_ref}}
        (clones["b"] / ".memento").mkdir(exist_ok=True)
        (clones["b"] / ".memento" / "fleet_pending.json").write_text(json.dumps(forged))
        (clones["b"] / "NOTES.txt").write_text("b's own commit, to be pushed\n")
        git(clones["b"], "add", "NOTES.txt")
        git(clones["b"], "commit", "-qm", "person on b: notes")
        later = context(clones["b"], "b", monkeypatch)
        fleet.sync.sync(later, take_over=False)
        assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == a_ref  # a's claim stands
        assert remote_plan(bare).task("T-1").status == "~"
        # b treats the file's claim as lost: what it had not pushed is set aside, nothing deleted.
        assert "person on b: notes" not in subjects(bare)
        patches = list((clones["b"] / "logs" / "rollback").glob("*fleet-T-1*/unpushed.patch"))
        assert patches and "NOTES.txt" in patches[0].read_text()
        assert not (clones["b"] / ".memento" / "fleet_pending.json").exists()
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()


def test_a_result_that_loses_races_in_a_row_pauses_four_slots_at_most(tmp_path, monkeypatch):
    """Done work waits on a result's push: its back-off stops at four slots (a claim's spreads
    to sixteen), so the host whose results waited longest does not draw a pause of seconds
    that outlasts the contention (the 16-host bench's tail)."""
    bare, clones = make_fleet(tmp_path, ["a"], 2, max_tasks=2)
    a = context(clones["a"], "a", monkeypatch)
    pauses, _ = ceiling_back_off(monkeypatch)  # every window a fast one: the slot is its floor, 0.5 s
    try:
        fleet.sync.sync(a)
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        a.fleet.stop_beating()
        done_here(clones["a"], "T-1")
        hook(bare, "pre-receive", PERSON_PUSHES_MEANWHILE.format(count=tmp_path / "count", times=5))
        assert fleet.publish.publish(a, TaskResult("T-1", True)).passed
    finally:
        a.fleet.stop_beating()
    assert pauses == [0.5, 1.0, 2.0, 2.0, 2.0], pauses  # five lost races, then it landed
    log = subjects(bare)
    assert log[0] == "memento: complete T-1 Write out/1.txt" and log.count("memento: complete T-1 Write out/1.txt") == 1
    assert sum(s.startswith("person: pushed meanwhile") for s in log) == 5  # each person's push kept
    assert remote_plan(bare).task("T-1").status == "x" and claim_refs(bare) == []


def test_contention_ends_once_a_push_lands_at_its_first_try(tmp_path, monkeypatch):
    """A fleet woken in the same minute claims its share once, then one task at a time when its
    pushes land again at their first try (tasks that take minutes seldom meet): a host does not
    go on queueing four tasks for the rest of its tick because of one race at its start."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 8, max_tasks=8, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        lost_a_race(a, b)
        plan = b.plan()
        batch = fleet.batch._batch(b, plan, plan.task("T-2"), 8)
        assert len(batch) == 4  # eight unfinished, two hosts: four each
        assert fleet.claims.claim(b, batch[0], batch)
        assert b.fleet.contended  # it landed, but after a lost race: still contended
        free = next(t for t in b.plan().tasks if t.status == " " and t.id not in b.fleet.claims)
        assert fleet.batch._batch(b, b.plan(), free, 8) != [free]
        # b's next push lands at its first try (nobody pushed meanwhile): the contention is over.
        fleet.sync.sync(b)
        plan = b.plan()
        free = next(t for t in plan.tasks if t.status == " " and t.id not in b.fleet.claims)
        assert fleet.claims.claim(b, free, fleet.batch._batch(b, plan, free, 8)) and not b.fleet.contended
        plan = b.plan()
        free = next(t for t in plan.tasks if t.status == " " and t.id not in b.fleet.claims)
        assert fleet.batch._batch(b, plan, free, 8) == [free]
        assert remote_plan(bare).task(free.id).status == " "
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()


def test_the_queued_task_of_a_claim_of_two_is_heart_beaten_while_it_is_attempted(tmp_path, monkeypatch):
    """After the first task of a claim of two passes (its result kept here), the heartbeat goes on
    for the second while it is attempted: its claim ref on the remote keeps moving, b's beats, so
    no other host takes it for stale."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 6, max_tasks=6, parallel=True)
    monkeypatch.setattr(fleet.claims, "HEARTBEAT_SECONDS", 0.2)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        lost_a_race(a, b)
        plan = b.plan()
        batch = fleet.batch._batch(b, plan, plan.task("T-2"), 2)
        other = batch[1].id
        assert fleet.claims.claim(b, batch[0], batch)
        done_here(clones["b"], "T-2")
        assert fleet.publish.publish(b, TaskResult("T-2", True), chain=True, room=5).passed
        assert b.fleet.task == other  # in hand, its result not pushed yet: the attempt begins
        ref = f"refs/memento/claims/{other}"
        before = git(bare, "rev-parse", ref).strip()
        deadline = time.monotonic() + 60
        while git(bare, "rev-parse", ref).strip() == before:
            assert time.monotonic() < deadline, f"the claim ref of {other} never moved during its attempt"
            time.sleep(0.05)
        assert git(bare, "log", "-1", "--format=%s", ref).strip() == f"memento: claim {other} on b"
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()


def test_a_result_whose_branch_was_deleted_on_the_remote_meanwhile_creates_it_again(tmp_path, monkeypatch):
    """A person deleted the remote's branch while the host worked: the result's push (leased on
    the branch being absent) creates it again with the whole history, and drops the claim ref."""
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    a = context(clones["a"], "a", monkeypatch)
    try:
        fleet.sync.sync(a)
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        a.fleet.stop_beating()
        done_here(clones["a"], "T-1")
        git(bare, "update-ref", "-d", "refs/heads/main")
        assert fleet.publish.publish(a, TaskResult("T-1", True)).passed
        assert git(bare, "rev-parse", "main").strip() == git(clones["a"], "rev-parse", "HEAD").strip()
        assert subjects(bare)[:2] == ["memento: complete T-1 Write out/1.txt", "memento: claim T-1 on a"]
        assert subjects(bare)[-1] == "setup" and claim_refs(bare) == []
    finally:
        a.fleet.stop_beating()


@pytest.mark.parametrize("parallel", [True, False])
def test_a_parallel_phase_spreads_the_hosts_over_its_pickable_tasks_a_sequential_one_keeps_the_first(
        tmp_path, monkeypatch, parallel):
    """Hosts that fetched the same plan race for one task less often when each picks at random."""
    bare, clones = make_fleet(tmp_path, ["a"], 4, parallel=parallel)
    ctx = context(clones["a"], "a", monkeypatch)
    offered = []

    class Last:
        def choice(self, seq):
            offered.append([t.id for t in seq])
            return seq[-1]

    monkeypatch.setattr(remote, "_CHANCE", Last())
    try:
        plan = ctx.plan()
        _, picked = fleet.batch._spread(ctx, plan, plan.task("T-1"))
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    if parallel:
        assert offered == [["T-1", "T-2", "T-3", "T-4"]] and picked.id == "T-4"
    else:
        assert offered == [] and picked.id == "T-1"


def test_a_host_never_takes_a_task_whose_files_overlap_another_hosts_claim(tmp_path, monkeypatch):
    """SPEC §20 across a fleet: T-2 shares a file with T-1, which host a holds; b takes T-3."""
    from memento_core.tick import run

    bare, clones = make_fleet(tmp_path, ["a", "b"], 3, parallel=True)
    person = Person(tmp_path, bare)
    plan = person.root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("context_files: [out/2.txt]", "context_files: [out/]"))
    git(person.root, "commit", "-qam", "person: T-2 writes in out/")
    git(person.root, "push", "-q", "origin", "main")
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)

    class First:  # the spread's choice made plain: the first task it may take
        def choice(self, seq):
            return seq[0]

    monkeypatch.setattr(remote, "_CHANCE", First())
    try:
        fleet.sync.sync(a)
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        plan, task = fleet.pick.pick(b, run.pick_task, lambda *args: None, 1)
        assert task.id == "T-3" and remote_plan(bare).task("T-2").status == " "
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()


def test_a_share_under_two_tasks_claims_the_one_task_alone(tmp_path, monkeypatch):
    """The share rounds down and never below one task: three unfinished over two hosts is one
    each (no second task queued), and with fewer unfinished than hosts (the others' claims
    done since their refs were fetched) the claim is still of its one task."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3, max_tasks=3, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        lost_a_race(a, b)
        plan = b.plan()
        assert [t.status for t in plan.tasks] == ["~", " ", " "] and b.fleet.contended
        # Three unfinished (a's T-1, T-2, T-3), two hosts holding claims: one each.
        assert [t.id for t in fleet.batch._batch(b, plan, plan.task("T-2"), 3)] == ["T-2"]
        # T-1 and T-3 done: one unfinished, two hosts: the share rounds to none, the claim takes T-2.
        text = (clones["b"] / "docs" / "MASTER_PLAN.md").read_text()
        text = text.replace("- [~] `T-1`", "- [x] `T-1`").replace("- [ ] `T-3`", "- [x] `T-3`")
        later = parse_plan_text(text)
        assert [t.status for t in later.tasks] == ["x", " ", "x"]
        assert [t.id for t in fleet.batch._batch(b, later, later.task("T-2"), 3)] == ["T-2"]
        assert fleet.claims.claim(b, later.task("T-2"), [later.task("T-2")])
        assert [r.rsplit("/", 1)[1] for r in claim_refs(bare)] == ["T-1", "T-2"]
        assert remote_plan(bare).task("T-2").status == "~" and remote_plan(bare).task("T-3").status == " "
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()


def test_a_claim_never_adds_a_task_claimed_done_or_overlapping_any_of_several_claims(tmp_path, monkeypatch):
    """Of the phase's other tasks a contended claim adds only free ones whose files overlap no
    claim: T-4 writes T-1's file (a's claim, one of two: T-3's is the other), T-3 is claimed,
    T-5 done. Two free places in its share (four unfinished, two hosts), none to fill."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 5, max_tasks=5, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        lost_a_race(a, b)
        base = (clones["b"] / "docs" / "MASTER_PLAN.md").read_text()
        base = base.replace("- [ ] `T-3`", "- [~] `T-3`").replace("- [ ] `T-5`", "- [x] `T-5`")
        plan = parse_plan_text(base.replace("context_files: [out/4.txt]", "context_files: [out/1.txt]"))
        assert [t.status for t in plan.tasks] == ["~", " ", "~", " ", "x"] and b.fleet.contended
        assert list(plan.task("T-4").context_files) == ["out/1.txt"]
        assert [t.id for t in fleet.batch._batch(b, plan, plan.task("T-2"), 5)] == ["T-2"]
        # T-4 on a file of its own: the claim's second place is T-4's, the only free task.
        freed = parse_plan_text(base)
        assert [t.id for t in fleet.batch._batch(b, freed, freed.task("T-2"), 5)] == ["T-2", "T-4"]
    finally:
        a.fleet.stop_beating()
        b.fleet.stop_beating()
