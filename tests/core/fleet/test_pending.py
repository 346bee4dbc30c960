"""fleet/pending.py (SPEC §12 "Across machines"): results the remote has not taken yet: pushed by the next tick with their claim ref,
or set aside when the claim was taken over meanwhile.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote. Its functions first, in
process on a real fleet (the pending file, a claim lost, a conflict, the claims never attempted);
then real ticks.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from memento_core.fleet import pending

from ..test_fleet import (
    claim_refs,
    context,
    git,
    make_fleet,
    remote_plan,
    start_tick,
    subjects,
    tick_all,
    wait_for,
    worker,
)

# --------------------------------------------------------------------------- the pending file, in process

def held_claims(tmp_path, monkeypatch, claims: dict[str, str], task: str = ""):
    """Host a's context on a fleet of three tasks, holding ``claims`` (task -> ref) in memory."""
    from memento_core.fleet.host import Held

    bare, clones = make_fleet(tmp_path, ["a"], 3)
    a = context(clones["a"], "a", monkeypatch)
    a.fleet.claims = {t: Held(ref) for t, ref in claims.items()}
    a.fleet.task = task
    return clones["a"], a


def pending_file(root):
    return root / ".memento" / "fleet_pending.json"


def test_the_pending_file_names_the_claim_in_hand_first_and_every_claim_held(tmp_path, monkeypatch):
    root, a = held_claims(tmp_path, monkeypatch, {"T-1": "1" * 40, "T-2": "2" * 40}, task="T-2")
    pending.save_pending(a)
    assert json.loads(pending_file(root).read_text()) == {"task": "T-2", "ref": "2" * 40,
                                                          "claims": {"T-1": "1" * 40, "T-2": "2" * 40}}
    assert pending.read_pending(a) == ("T-2", "2" * 40)
    a.fleet.task = "T-3"  # not among the claims (its result pushed): the first claim held is named
    pending.save_pending(a)
    assert pending.read_pending(a) == ("T-1", "1" * 40)
    assert pending.read_pending_claims(a) == {"T-1": "1" * 40, "T-2": "2" * 40}


def test_the_pending_file_goes_with_the_last_claim_held(tmp_path, monkeypatch):
    root, a = held_claims(tmp_path, monkeypatch, {"T-1": "1" * 40}, task="T-1")
    pending.save_pending(a)
    assert pending_file(root).is_file()
    a.fleet.claims = {}
    pending.save_pending(a)
    assert not pending_file(root).exists()
    pending.save_pending(a)  # nothing to remove: no error
    assert pending.read_pending(a) is None and pending.read_pending_claims(a) == {}


@pytest.mark.parametrize("body, in_hand, claims", [
    ({"task": "T-1", "ref": "r1"}, ("T-1", "r1"), {"T-1": "r1"}),  # an older Memento's: one claim
    ({"task": "T-1", "ref": "r1", "claims": {"T-1": "r1", "T-2": "r2"}}, ("T-1", "r1"), {"T-1": "r1", "T-2": "r2"}),
    ({"task": "T-1", "ref": "r1", "claims": ["T-1"]}, ("T-1", "r1"), {"T-1": "r1"}),
    ({"task": "T-1", "ref": "r1", "claims": {"T-1": "r1", "T-2": ""}}, ("T-1", "r1"), {"T-1": "r1"}),
    ({"task": "T-1", "ref": "r1", "claims": {"T-1": "r1", "": "r2"}}, ("T-1", "r1"), {"T-1": "r1"}),
    ({"task": "T-1", "ref": "r1", "claims": {"T-1": "r1", "T-2": 2}}, ("T-1", "r1"), {"T-1": "r1"}),
    ({"task": "", "ref": "r1"}, None, {}),
    ({"task": "T-1", "ref": ""}, None, {}),
    ({"task": 1, "ref": "r1"}, None, {}),
    ({"task": "T-1", "ref": 1}, None, {}),
    ({"claims": {}}, None, {}),
    (["T-1", "r1"], None, {}),
    ("not json {", None, {}),
])
def test_a_pending_file_is_read_for_what_it_holds_and_nothing_malformed(tmp_path, monkeypatch, body, in_hand, claims):
    root, a = held_claims(tmp_path, monkeypatch, {})
    pending_file(root).parent.mkdir(exist_ok=True)
    pending_file(root).write_text(body if isinstance(body, str) else json.dumps(body))
    assert pending.read_pending(a) == in_hand
    assert pending.read_pending_claims(a) == claims


def test_a_claim_refs_sha_is_adopted_when_it_is_this_hosts_last_beat_or_one_whose_answer_never_came(
        tmp_path, monkeypatch):
    root, a = held_claims(tmp_path, monkeypatch, {"T-1": "1" * 40, "T-2": "2" * 40}, task="T-1")
    f = a.fleet
    f.claims["T-2"].unsure = {"3" * 40}
    assert pending.adopt(f, None) is False and pending.adopt(f, "") is False
    assert pending.adopt(f, "4" * 40) is False and pending.adopt(f, "3" * 40) is False  # T-1's: not its beat
    assert pending.adopt(f, "1" * 40, "T-3") is False  # a claim not held
    assert not pending_file(root).exists()  # nothing adopted, nothing saved
    assert pending.adopt(f, "1" * 40)  # the claim in hand's last beat
    assert pending.read_pending_claims(a) == {"T-1": "1" * 40, "T-2": "2" * 40}
    assert pending.adopt(f, "3" * 40, "T-2")  # a beat whose push answered with an error but landed
    assert (f.claims["T-2"].ref, f.claims["T-2"].unsure) == ("3" * 40, set())
    assert pending.read_pending_claims(a) == {"T-1": "1" * 40, "T-2": "3" * 40}
    assert pending.adopt(f, "3" * 40, "T-2") is True and pending.adopt(f, "2" * 40, "T-2") is False


def a_result_left_unpushed(tmp_path, monkeypatch, hosts=("a",)):
    """Host a claimed T-1 and committed its result, and its tick was killed before the push: the
    pending file keeps the claim. Returns bare, clones, the next tick's context (fetched) and the
    remote's branch as fetched."""
    from memento_core import fleet
    from memento_core.fleet import claims, host, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

    from ..test_fleet import commit_the_result

    bare, clones = make_fleet(tmp_path, list(hosts), 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    commit_the_result(clones["a"])
    host._forget(a.fleet)
    later = context(clones["a"], "a", monkeypatch)
    remote.fetch(later)
    return bare, clones, later, remote.remote_head(later)


def set_aside(root) -> list:
    return sorted((root / "logs" / "rollback").glob("*fleet-T-1*"))


def test_a_pending_claim_still_this_hosts_is_pushed_with_its_result(tmp_path, monkeypatch):
    bare, clones, later, upstream = a_result_left_unpushed(tmp_path, monkeypatch)
    ref = git(bare, "rev-parse", "refs/memento/claims/T-1").strip()
    head = git(clones["a"], "rev-parse", "HEAD")
    assert pending._pending_claims(later, upstream) == {"T-1": ref}
    assert git(clones["a"], "rev-parse", "HEAD") == head and set_aside(clones["a"]) == []
    assert pending.read_pending_claims(later) == {"T-1": ref}


def test_no_pending_claim_is_read_while_the_tick_holds_claims_of_its_own(tmp_path, monkeypatch):
    from memento_core.fleet.host import Held

    bare, clones, later, upstream = a_result_left_unpushed(tmp_path, monkeypatch)
    later.fleet.claims = {"T-9": Held("9" * 40)}
    assert pending._pending_claims(later, upstream) == {}
    assert set_aside(clones["a"]) == [] and pending_file(clones["a"]).is_file()


def test_a_pending_claim_whose_ref_another_beat_replaced_is_lost_and_its_result_set_aside(tmp_path, monkeypatch):
    bare, clones, later, upstream = a_result_left_unpushed(tmp_path, monkeypatch)
    root = clones["a"]
    body = json.loads(pending_file(root).read_text())
    body["ref"] = body["claims"]["T-1"] = "0" * 40  # a beat of this host's, but not the ref's now
    pending_file(root).write_text(json.dumps(body))
    assert pending._pending_claims(later, upstream) == {}
    [saved] = set_aside(root)
    assert "out/1.txt" in (saved / "unpushed.patch").read_text()
    assert git(root, "rev-parse", "HEAD~1").strip() == upstream  # the documents' commit on the remote's branch
    assert git(root, "log", "-1", "--format=%s").strip() == "memento: sync docs"
    assert "CLAIM LOST — T-1 was taken over before its result was pushed from here" in \
        (root / "docs" / "TICK_STATUS.md").read_text()
    assert f"the result was set aside in logs/rollback/{saved.name}" in (root / "logs" / "cron.log").read_text()
    assert not pending_file(root).exists()
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() != "0" * 40  # never deleted


def test_a_pending_claim_whose_heartbeat_names_another_host_is_lost_here(tmp_path, monkeypatch):
    bare, clones, later, upstream = a_result_left_unpushed(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMENTO_HOST", "b")  # the same clone, another host's name: its ref is a's
    b = context(clones["a"], "b", monkeypatch)
    from memento_core.fleet import remote

    remote.fetch(b)
    assert pending._pending_claims(b, upstream) == {}
    assert len(set_aside(clones["a"])) == 1 and not pending_file(clones["a"]).exists()


@pytest.mark.parametrize("where", ["at the remote's branch", "behind the remote's branch"])
def test_a_lost_pending_claim_with_nothing_unpushed_sets_nothing_aside(tmp_path, monkeypatch, where):
    bare, clones, later, upstream = a_result_left_unpushed(tmp_path, monkeypatch)
    root = clones["a"]
    git(root, "reset", "-q", "--hard", upstream if where == "at the remote's branch" else f"{upstream}~1")
    git(bare, "update-ref", "-d", "refs/memento/claims/T-1")  # the claim is gone
    from memento_core.fleet import remote

    remote.fetch(later)
    status = (root / "docs" / "TICK_STATUS.md").read_text()
    assert pending._pending_claims(later, upstream) == {}
    assert set_aside(root) == [] and not pending_file(root).exists()
    assert (root / "docs" / "TICK_STATUS.md").read_text() == status  # no event


# --------------------------------------------------------------------------- a result that cannot land

def a_claim_of_two_that_conflicts(tmp_path, monkeypatch, max_retries: int):
    """Host a holds T-1 and T-2 (one claim), has committed T-1's result, and a person pushed their own
    out/1.txt meanwhile. Returns the bare remote, a's root, its context and the remote's branch as fetched."""
    from memento_core.fleet import remote

    from ..test_fleet import a_holds_two_with_the_first_done, a_person_pushes_their_own_out_1

    bare, root, a = a_holds_two_with_the_first_done(tmp_path, monkeypatch, max_tasks=3, max_retries=max_retries)
    a_person_pushes_their_own_out_1(tmp_path, bare)
    remote.fetch(a)
    return bare, root, a, remote.remote_head(a)


@pytest.mark.parametrize("max_retries, status, said, blocked", [(2, " ", "❌ FAILED (retry 1/2)", False),
                                                                 (1, "!", "🚫 BLOCKED (retry 1/1)", True)])
def test_a_conflicting_result_is_a_failed_attempt_naming_the_paths_its_work_set_aside(
        tmp_path, monkeypatch, max_retries, status, said, blocked):
    from memento_core.plan.scan import parse_plan
    from memento_core.tick.context import TaskResult

    bare, root, a, upstream = a_claim_of_two_that_conflicts(tmp_path, monkeypatch, max_retries)
    result = pending._conflicted(a, TaskResult("T-1", True, "", 2.5), upstream, ["out/1.txt", "docs/x.md"])
    [saved] = sorted((root / "logs" / "rollback").glob("*fleet-T-1*"))
    assert result == TaskResult("T-1", False, "conflict with origin/main in out/1.txt, docs/x.md; the work was "
                                f"saved in logs/rollback/{saved.name}", 2.5, None, blocked)
    assert "out/1.txt" in (saved / "unpushed.patch").read_text()
    assert git(root, "rev-parse", "HEAD~1").strip() == upstream  # the failure's commit on the remote's branch
    assert git(root, "log", "-1", "--format=%s").strip() == f"memento: T-1 failed (retry 1/{max_retries}): conflict"
    assert git(root, "show", "HEAD:out/1.txt") == "a person's own\n"
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    # T-2, claimed with it and never attempted: `[ ]` again, no retry counted.
    assert [(t.status, t.retries) for t in plan.tasks] == [(status, 1), (" ", 0), (" ", 0)]
    entry = (root / "docs" / "TICK_STATUS.md").read_text().rsplit("\n## ", 1)[-1]
    assert f"{said}" in entry and "(set aside)" in entry and "(none — conflict)" in entry


def test_a_conflicting_result_of_a_task_no_longer_in_the_plan_fails_and_edits_nothing(tmp_path, monkeypatch):
    from memento_core.tick.context import TaskResult

    bare, root, a, upstream = a_claim_of_two_that_conflicts(tmp_path, monkeypatch, 3)
    result = pending._conflicted(a, TaskResult("T-7", True, "", 1.0), upstream, ["out/1.txt"])
    assert (result.task_id, result.passed, result.blocked) == ("T-7", False, False)
    assert result.reason.startswith("conflict with origin/main in out/1.txt; the work was saved in logs/rollback/")
    assert git(root, "rev-parse", "HEAD").strip() == upstream  # set aside, nothing committed


def test_a_claimed_task_a_person_changed_meanwhile_keeps_their_edit(tmp_path, monkeypatch):
    from memento_core.plan.scan import parse_plan
    from memento_core.tick.context import TaskResult

    bare, root, a, upstream = a_claim_of_two_that_conflicts(tmp_path, monkeypatch, 3)
    person = tmp_path / "person"
    plan_path = person / "docs" / "MASTER_PLAN.md"
    plan_path.write_text(plan_path.read_text().replace("- [~] `T-2`", "- [x] `T-2`"))
    git(person, "commit", "-qam", "person: T-2 done by hand")
    git(person, "push", "-q", "origin", "main")
    from memento_core.fleet import remote

    remote.fetch(a)
    upstream = remote.remote_head(a)
    result = pending._conflicted(a, TaskResult("T-1", True), upstream, ["out/1.txt"])
    assert not result.passed
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    assert [(t.status, t.retries) for t in plan.tasks] == [(" ", 1), ("x", 0), (" ", 0)]
    assert plan.meta.completed_tasks == 1  # the counters, counted again


def test_with_no_remote_branch_nothing_is_set_aside_or_reset(tmp_path, monkeypatch):
    bare, root, a, upstream = a_claim_of_two_that_conflicts(tmp_path, monkeypatch, 3)
    head = git(root, "rev-parse", "HEAD")
    saved = pending._set_aside(a, "T-1", None)
    assert saved.startswith("logs/rollback/") and saved.endswith("-fleet-T-1")
    assert not (root / saved).exists() and git(root, "rev-parse", "HEAD") == head
    git(root, "reset", "-q", "--hard", upstream)
    saved = pending._set_aside(a, "T-1", upstream)  # nothing unpushed: no patch
    assert not (root / saved).exists() and git(root, "rev-parse", "HEAD").strip() == upstream


# --------------------------------------------------------------------------- claims never attempted

def test_the_claims_an_earlier_tick_never_attempted_are_those_pending_no_unpushed_commit_names(tmp_path, monkeypatch):
    bare, root, a, _ = a_claim_of_two_that_conflicts(tmp_path, monkeypatch, 3)
    upstream = git(root, "rev-parse", "HEAD~1").strip()  # the claim's commit, before T-1's result
    plan_path = root / "docs" / "MASTER_PLAN.md"
    plan_path.write_text(plan_path.read_text().replace("- [ ] `T-3`", "- [~] `T-3`"))
    claimed = {"T-1": "1" * 40, "T-2": "2" * 40, "T-3": "3" * 40, "T-9": "9" * 40}
    assert pending._never_attempted(a, claimed, None) == []
    # T-1 is `[x]` here, T-3 `[~]`, T-9 not in the plan: T-2 alone was never attempted.
    assert pending._never_attempted(a, claimed, upstream) == ["T-2"]
    plan_path.write_text(plan_path.read_text().replace("- [~] `T-3`", "- [ ] `T-3`"))
    git(root, "commit", "-q", "--allow-empty", "-m", "notes on T-20, xT-2 and T-2x")
    assert pending._never_attempted(a, claimed, upstream) == ["T-2", "T-3"]
    git(root, "commit", "-q", "--allow-empty", "-m", "memento: T-3 failed (retry 1/3)")
    assert pending._never_attempted(a, claimed, upstream) == ["T-2"]


def test_each_claim_never_attempted_is_released_by_a_commit_of_its_own(tmp_path, monkeypatch):
    from memento_core import fleet
    from memento_core.fleet import claims, sync  # noqa: F401 - loaded, so that fleet.<module> resolves
    from memento_core.plan.scan import parse_plan_text

    bare, clones = make_fleet(tmp_path, ["a"], 3, max_tasks=3, parallel=True)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    plan = a.plan()
    assert fleet.claims.claim(a, plan.task("T-1"), [plan.task("T-1"), plan.task("T-2"), plan.task("T-3")])
    a.fleet.stop_beating()
    claim = git(root, "rev-parse", "HEAD").strip()  # the plan committed has them `[~]`, the work tree's `[ ]`
    pending._release_commits(a, ["T-2", "T-3"])
    assert git(root, "log", "--format=%s", "-2").splitlines() == [
        "memento: release T-3 (the tick stopped before its attempt)",
        "memento: release T-2 (the tick stopped before its attempt)"]
    assert git(root, "rev-parse", "HEAD~2").strip() == claim
    released = parse_plan_text(git(root, "show", "HEAD~1:docs/MASTER_PLAN.md"))
    assert [t.status for t in released.tasks] == [" ", " ", " "]
    assert git(root, "diff", "--name-only", "HEAD~1", "HEAD") == ""  # the second changes nothing but says so
    assert git(root, "status", "--porcelain", "docs/MASTER_PLAN.md") == ""


def test_a_release_on_a_branch_with_no_commit_yet_makes_none(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    git(root, "checkout", "-q", "--orphan", "fresh")
    git(root, "rm", "-fq", "docs/MASTER_PLAN.md")  # no plan to commit, no HEAD to commit on
    pending._release_commits(a, ["T-1"])
    assert git(root, "rev-parse", "-q", "--verify", "HEAD", check=False) == ""


def test_the_pending_file_is_written_in_a_clone_that_has_no_memento_folder_yet(tmp_path, monkeypatch):
    import shutil

    root, a = held_claims(tmp_path, monkeypatch, {"T-1": "1" * 40}, task="T-1")
    shutil.rmtree(root / ".memento", ignore_errors=True)  # a CI runner's fresh clone
    pending.save_pending(a)
    assert pending.read_pending_claims(a) == {"T-1": "1" * 40}


@pytest.mark.parametrize("others", [[], ["T-1"]])
def test_a_claim_lost_while_its_task_ran_sets_aside_its_result_and_those_done_before_it(tmp_path, monkeypatch, others):
    from memento_core.fleet import remote
    from memento_core.tick.context import TaskResult

    bare, clones, a, upstream = a_result_left_unpushed(tmp_path, monkeypatch)
    root = clones["a"]
    held = {"T-2": "2" * 40, "T-3": "3" * 40, **{t: "1" * 40 for t in others}}
    from memento_core.fleet.host import Held

    # The claim of T-2 (in hand) and T-3 (queued); with T-1 in it, T-1's result was done here before.
    a.fleet.claims = {t: Held(ref) for t, ref in held.items()}
    a.fleet.task, a.fleet.queued = "T-2", ["T-3"]
    a.fleet.lost = "its claim ref refs/memento/claims/T-2 is gone"
    pending.save_pending(a)
    remote.fetch(a)
    result = pending._claim_lost(a, TaskResult("T-2", True, "", 3.0), upstream)
    [saved] = sorted((root / "logs" / "rollback").glob("*fleet-T-2*"))
    assert result == TaskResult("T-2", False, "claim lost: its claim ref refs/memento/claims/T-2 is gone; the result "
                                f"was set aside in logs/rollback/{saved.name}"
                                + (", with the results of T-1 done here before it" if others else ""), 3.0)
    assert "out/1.txt" in (saved / "unpushed.patch").read_text()
    assert git(root, "rev-parse", "HEAD").strip() == upstream
    assert (a.fleet.task, a.fleet.claims, a.fleet.queued, a.fleet.lost) == ("", {}, [], "")
    assert not pending_file(root).exists()
    entry = (root / "docs" / "TICK_STATUS.md").read_text().rsplit("\n## ", 1)[-1]
    assert "CLAIM LOST — T-2 was taken over while it ran here" in entry and result.reason in entry


# --------------------------------------------------------------------------- real ticks

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
