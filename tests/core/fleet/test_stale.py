"""fleet/stale.py (SPEC §12 "Across machines"): when another host's claim is stale, and never this host's own.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import time

from memento_core import fleet
from memento_core.fleet import claims, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

from ..test_fleet import (
    a_person_pushes_after_the_first_fetch,
    claim_refs,
    context,
    counted_fetches,
    git,
    make_fleet,
    remote_plan,
    subjects,
)


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


def _a_claims_t1(tmp_path, monkeypatch, n_tasks: int = 2, retries: int = 0):
    """Hosts a and b; a holds T-1's claim (its heartbeat thread stopped) and b has synced it:
    bare, clones, a, b. ``retries``: T-1's on the remote before the claim."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], n_tasks)
    if retries:
        plan = clones["a"] / "docs" / "MASTER_PLAN.md"
        plan.write_text(plan.read_text().replace("  - retries: 0\n", f"  - retries: {retries}\n", 1))
        git(clones["a"], "commit", "-qam", "a person: T-1's retries")
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b, take_over=False)
    return bare, clones, a, b


def test_a_claim_is_stale_only_past_its_timeout_and_only_when_no_claim_or_record_here_is_its(tmp_path, monkeypatch):
    from memento_core.attempt_record import read_record, save_record
    from memento_core.state import Claim, claim_path, write_claim

    bare, clones, a, b = _a_claims_t1(tmp_path, monkeypatch)
    plan, seen = b.plan(), remote._seen(b)
    beat = seen["T-1"]
    assert (beat.host, plan.meta.stale_lock_timeout) == ("a", 900)
    assert fleet.stale.foreign_claims(b, plan) == frozenset({"T-1"})
    assert fleet.stale.stale_claims(b, plan, seen, now=beat.at + 900) == []  # at the timeout: not yet
    assert fleet.stale.stale_claims(b, plan, seen, now=beat.at + 901) == [
        (plan.task("T-1"), beat, "the heartbeat ref of a is 901s old")]
    # Without its ref (a reader may see the branch first), the claim commit's time judges it.
    claimed = int(git(bare, "log", "-1", "--format=%ct", "main"))
    assert fleet.stale.stale_claims(b, plan, {}, now=claimed + 900) == []
    assert fleet.stale.stale_claims(b, plan, {}, now=claimed + 901) == [(plan.task("T-1"), None, "no heartbeat ref")]
    # A claim file here makes it this host's (its local stale recovery's), as does a record alone.
    write_claim(b.ws, Claim(task="T-1", pid=2 ** 22 + 1, host="b", started="2026-12-07T00:00:00Z",
                            heartbeat=0.0, tick=1, base=None))
    assert fleet.stale.foreign_claims(b, plan) == frozenset()
    assert fleet.stale.stale_claims(b, plan, seen, now=beat.at + 901) == []
    claim_path(b.ws, "T-1").unlink()
    save_record(b.ws, _record("T-1"))
    assert read_record(b.ws, "T-1") is not None
    assert fleet.stale.foreign_claims(b, plan) == frozenset()
    assert fleet.stale.stale_claims(b, plan, seen, now=beat.at + 901) == []


def _record(task_id: str):
    from memento_core.attempt_record import Record

    return Record(task=task_id, pid=2 ** 22 + 1, pid_start=None, identity="", host="b", tick=1, base=None,
                  written=0.0, untracked=(), cleanignore=(), max_retries=3, retries=0, plan_sha256="")


def test_the_claim_commit_of_several_tasks_names_each_and_its_host(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    plan = a.plan()
    assert fleet.claims.claim(a, plan.task("T-1"), [plan.task("T-1"), plan.task("T-3")])
    a.fleet.stop_beating()
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b, take_over=False)
    head = git(clones["b"], "rev-parse", "HEAD").strip()
    at = float(git(clones["b"], "log", "-1", "--format=%ct", "HEAD"))
    assert fleet.stale._claim_commit(b, "T-1") == fleet.host.Beat(head, "a", at)
    assert fleet.stale._claim_commit(b, "T-3") == fleet.host.Beat(head, "a", at)
    assert fleet.stale._claim_commit(b, "T-2") is None  # never claimed


def test_a_take_over_at_the_last_retry_blocks_the_task_and_deletes_the_old_claim_ref(tmp_path, monkeypatch):
    from memento_core import status_log

    bare, clones, a, b = _a_claims_t1(tmp_path, monkeypatch, retries=2)
    later = time.time() + 3600
    monkeypatch.setattr(remote, "_now", lambda: later)
    b.number, b.number_saved = 1, True
    fleet.sync.sync(b)
    task = remote_plan(bare).task("T-1")
    assert (task.status, task.retries) == ("!", 3)
    assert (remote_plan(bare).meta.total_tasks, remote_plan(bare).meta.completed_tasks) == (2, 0)
    assert "- total_tasks: 2" in git(bare, "show", "main:docs/MASTER_PLAN.md")  # the counters recomputed
    assert subjects(bare)[0] == "memento: T-1 taken over from a (retry 3/3 — blocked)"
    assert git(bare, "show", "--format=", "--name-only", "main").split() == ["docs/MASTER_PLAN.md",
                                                                            "docs/TICK_STATUS.md"]
    assert claim_refs(bare) == []
    assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    said = dict(status_log.parse_status_text(git(bare, "show", "main:docs/TICK_STATUS.md"))[-1].fields)
    assert said["Event"] == "⚠️ STALE — Stale [~] detected on T-1, reset to [!]"
    assert (said["Claimed By"], said["Retries"]) == ("a", "3/3 — blocked")
    assert said["Reason"].startswith("the heartbeat ref of a is ") and said["Reason"].endswith("s old")
    assert "took over the stale claim of T-1 (the heartbeat ref of a is" in (
        clones["b"] / "logs" / "cron.log").read_text()


def test_a_take_over_that_loses_its_race_is_undone_here_and_made_again_on_the_remotes_branch(tmp_path, monkeypatch):
    bare, clones, a, b = _a_claims_t1(tmp_path, monkeypatch)
    later = time.time() + 3600
    monkeypatch.setattr(remote, "_now", lambda: later)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    calls = a_person_pushes_after_the_first_fetch(tmp_path, bare, monkeypatch)
    fleet.sync.sync(b)
    assert len(calls) == 2  # the lost take-over fetched once more
    assert subjects(bare)[:2] == ["memento: T-1 taken over from a (retry 1/3)", "a person's commit"]
    assert claim_refs(bare) == []
    assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert git(clones["b"], "status", "--porcelain", "--untracked-files=no") == ""


def test_a_lost_commit_is_moved_back_in_head_the_index_and_the_work_tree_unless_head_moved_on(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    base = git(root, "rev-parse", "HEAD").strip()
    plan = root / "docs" / "MASTER_PLAN.md"
    was = plan.read_text()
    plan.write_text(was.replace("- [ ] `T-1`", "- [!] `T-1`"))
    git(root, "commit", "-qam", "memento: T-1 taken over")
    sha = git(root, "rev-parse", "HEAD").strip()
    fleet.stale._move_back(a, sha, base)
    assert git(root, "rev-parse", "HEAD").strip() == base
    assert plan.read_text() == was and git(root, "status", "--porcelain") == ""
    # HEAD moved on past the lost commit (a person's commit): nothing of it is undone.
    git(root, "reset", "-q", "--hard", sha)
    (root / "person.txt").write_text("a person's\n")
    git(root, "add", "person.txt")
    git(root, "commit", "-qm", "a person's commit")
    head = git(root, "rev-parse", "HEAD").strip()
    fleet.stale._move_back(a, sha, base)
    assert git(root, "rev-parse", "HEAD").strip() == head and "- [!] `T-1`" in plan.read_text()


def test_a_claim_commit_with_a_tab_in_its_body_is_still_read(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    git(root, "commit", "-q", "--allow-empty", "-m", "memento: claim T-1 on z\n\nwritten by\ta hand")
    head = git(root, "rev-parse", "HEAD").strip()
    at = float(git(root, "log", "-1", "--format=%ct", "HEAD"))
    assert fleet.stale._claim_commit(a, "T-1") == fleet.host.Beat(head, "z", at)


def test_a_heartbeat_that_lands_between_the_fetch_and_the_take_over_keeps_the_claim_its_hosts(tmp_path, monkeypatch):
    import os
    import subprocess

    bare, clones, a, b = _a_claims_t1(tmp_path, monkeypatch)
    old = remote._seen(b)["T-1"]
    monkeypatch.setattr(remote, "_now", lambda: old.at + 950)  # the beat b fetched is 950 s old: stale
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    beat = []

    def a_beats():  # a is alive after all: its next heartbeat lands, 1000 s after the old one
        env = {**os.environ, "GIT_COMMITTER_DATE": f"@{int(old.at) + 1000} +0000"}
        beat.append(subprocess.run(["git", "commit-tree", "-m", "memento: claim T-1 on a",
                                    "4b825dc642cb6eb9a060e54bf8d69288fbee4904"], cwd=bare, env=env,
                                   capture_output=True, text=True, check=True).stdout.strip())
        git(bare, "update-ref", "refs/memento/claims/T-1", beat[0], old.sha)

    calls = counted_fetches(monkeypatch, a_beats)
    fleet.sync.sync(b)
    assert len(calls) == 2  # the take-over's lease on the old beat lost; fetched again, the claim is fresh
    assert not any("taken over" in s for s in subjects(bare))
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == beat[0]
    assert remote_plan(bare).task("T-1").status == "~"
    assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
