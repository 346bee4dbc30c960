"""fleet/claims.py (SPEC §12 "Across machines"): a claim by compare-and-swap (of two hosts exactly one wins) and its heartbeat ref.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import time

import pytest

from memento_core import fleet
from memento_core.fleet import claims, pending, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves

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


def test_a_claim_made_with_gits_own_commands_when_a_date_is_set_claims_the_same(tmp_path, monkeypatch):
    # A date of git's own in the environment: the claim commit is git's commit-tree, not commit_fast's bytes.
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "@1700000000 +0000")
    try:
        assert fleet.claims.claim(a, a.plan().task("T-1")) is True
        a.fleet.stop_beating()
        assert git(bare, "log", "-1", "--format=%s %ct", "main").strip() == "memento: claim T-1 on a 1700000000"
        assert git(root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
        assert (a.fleet.task, a.fleet.queued, a.fleet.ref) == (
            "T-1", [], git(bare, "rev-parse", "refs/memento/claims/T-1").strip())
        assert git(bare, "log", "-1", "--format=%s", "refs/memento/claims/T-1").strip() == "memento: claim T-1 on a"
        assert [t.status for t in remote_plan(bare).tasks] == ["~", " "]
        # T-1 is no longer `[ ]` in the plan HEAD has: no claim made, nothing pushed.
        before = git(bare, "for-each-ref")
        assert fleet.claims.claim(a, a.plan().task("T-1")) is False
        assert git(bare, "for-each-ref") == before
    finally:
        a.fleet.stop_beating()


@pytest.mark.parametrize("gits_own", [False, True], ids=["bytes", "commit-tree"])
def test_a_plan_not_committed_on_the_branch_is_no_claim(tmp_path, monkeypatch, gits_own):
    from memento_core.errors import MementoError

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    task = a.plan().task("T-1")
    git(root, "rm", "-q", "--cached", "docs/MASTER_PLAN.md")
    git(root, "commit", "-qm", "a person: the plan out of git")
    fleet.sync.sync(a)
    if gits_own:
        monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    before = git(bare, "for-each-ref")
    with pytest.raises(MementoError, match="^docs/MASTER_PLAN.md is not committed on main$"):
        fleet.claims.claim(a, task)
    assert git(bare, "for-each-ref") == before


def test_a_claim_of_several_leaves_out_a_task_taken_meanwhile_and_queues_the_rest(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3, parallel=True)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    try:
        fleet.sync.sync(b)
        assert fleet.claims.claim(b, b.plan().task("T-2"))
        fleet.sync.sync(a)
        plan = a.plan()
        t1, t2, t3 = (plan.task(t) for t in ("T-1", "T-2", "T-3"))
        assert fleet.claims.claim(a, t2, [t2, t1]) is False  # the task picked is b's: no claim at all
        assert fleet.claims.claim(a, t1, [t1, t2, t3]) is True
    finally:
        for ctx in (a, b):
            ctx.fleet.stop_beating()
    assert (a.fleet.task, a.fleet.queued, sorted(a.fleet.claims)) == ("T-1", ["T-3"], ["T-1", "T-3"])
    body = git(bare, "log", "-1", "--format=%B", "main")
    assert body.startswith("memento: claim T-1 on a\n\nmemento: claim T-3 on a\n\npid ")
    assert claim_refs(bare) == ["refs/memento/claims/T-1", "refs/memento/claims/T-2", "refs/memento/claims/T-3"]
    assert git(bare, "log", "-1", "--format=%s", "refs/memento/claims/T-3").strip() == "memento: claim T-1, T-3 on a"
    assert [t.status for t in remote_plan(bare).tasks] == ["~", "~", "~"]
    assert fleet.pending.read_pending_claims(a) == {"T-1": a.fleet.ref, "T-3": a.fleet.claims["T-3"].ref}


def test_a_claim_ref_left_by_a_task_a_person_put_back_is_leased_on_as_fetched(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    plan = person / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [~] `T-1`", "- [ ] `T-1`"))
    git(person, "commit", "-qam", "a person: T-1 again")  # the claim ref of a stays on the remote
    git(person, "push", "-q", "origin", "main")
    try:
        fleet.sync.sync(b, take_over=False)
        # a beats once more after b's fetch: b's push, leased on the ref as fetched, loses.
        beat = git(bare, "commit-tree", "-m", "memento: claim T-1 on a", "4b825dc642cb6eb9a060e54bf8d69288fbee4904").strip()
        git(bare, "update-ref", "refs/memento/claims/T-1", beat)
        branch = git(bare, "rev-parse", "main")
        assert fleet.claims.claim(b, b.plan().task("T-1")) is False
        assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == beat and git(bare, "rev-parse", "main") == branch
        fleet.sync.sync(b, take_over=False)  # fetched again: the ref as it is now is b's lease, and b wins
        assert fleet.claims.claim(b, b.plan().task("T-1")) is True
    finally:
        for ctx in (a, b):
            ctx.fleet.stop_beating()
    assert git(bare, "log", "-1", "--format=%s", "refs/memento/claims/T-1").strip() == "memento: claim T-1 on b"
    assert subjects(bare)[0] == "memento: claim T-1 on b"


def test_a_heartbeat_the_remote_cannot_take_is_said_in_cron_log_and_tried_again(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    monkeypatch.setattr(fleet.claims, "HEARTBEAT_SECONDS", 0.2)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    first = a.fleet.ref
    git(root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    log = root / "logs" / "cron.log"
    try:
        deadline = time.monotonic() + 60
        while (log.read_text() if log.exists() else "").count("claim heartbeat not pushed (tried again in 0.2s):") < 2:
            assert time.monotonic() < deadline, "the failed heartbeats were never said"
            time.sleep(0.05)
        assert a.fleet._thread.is_alive() and a.fleet.lost == ""  # an unreachable remote loses no claim
    finally:
        a.fleet.stop_beating()
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == first == a.fleet.ref


def test_a_claim_made_with_gits_own_commands_on_a_commit_that_is_not_head_is_refused(tmp_path, monkeypatch):
    # The result's push chains a claim on the commit it pushes (publish._chain_claim); git's own
    # commands make it on HEAD, so a HEAD elsewhere (the replayed commits not arrived yet) is refused.
    from memento_core.errors import MementoError

    bare, clones = make_fleet(tmp_path, ["a"], 2)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    base = git(root, "rev-parse", "HEAD").strip()
    data = git(root, "show", f"{base}:docs/MASTER_PLAN.md").encode()
    git(root, "commit", "-q", "--allow-empty", "-m", "a commit of this host's")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    with pytest.raises(MementoError, match="^HEAD moved while the claim of T-1 was made$"):
        fleet.claims._make_claim(a, a.plan().task("T-1"), {}, committed=(base, data))
    made = fleet.claims._make_claim(a, a.plan().task("T-1"), {}, committed=(git(root, "rev-parse", "HEAD").strip(), data))
    assert made.tasks == (("T-1", ""),) and made.made.parent == git(root, "rev-parse", "HEAD").strip()


def test_a_process_that_ends_holding_a_claim_is_not_kept_alive_by_its_heartbeat(tmp_path):
    # A tick that stops without publishing (an error, SIGTERM's path) never calls stop_beating:
    # the heartbeat thread must not keep its process from exiting.
    import subprocess
    import sys

    from ..test_fleet import PROJECT, env_for

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    script = (
        "import sys\n"
        "from memento_core import fleet\n"
        "from memento_core.config.load import load_config\n"
        "from memento_core.fleet import claims, remote, sync\n"
        "from memento_core.tick.context import TickContext\n"
        "from memento_core.workspace import Workspace\n"
        "from pathlib import Path\n"
        "ctx = TickContext(Workspace(Path(sys.argv[1])))\n"
        "ctx.config = load_config(ctx.ws.config_path)\n"
        "sync.sync(ctx)\n"
        "assert claims.claim(ctx, ctx.plan().task('T-1'))\n"
        "print('claimed', ctx.fleet._thread.is_alive())\n")
    done = subprocess.run([sys.executable, "-c", script, str(clones["a"])], cwd=PROJECT, env=env_for("a"),
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "claimed True\n"), done.stderr
    assert claim_refs(bare) == ["refs/memento/claims/T-1"]


def test_each_heartbeat_is_leased_on_the_one_before_and_never_loses_a_race_to_itself(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    monkeypatch.setattr(fleet.claims, "HEARTBEAT_SECONDS", 0.2)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    assert fleet.claims.claim(a, a.plan().task("T-2"))  # a second claim of the tick: its thread starts anew
    seen = {a.fleet.claims["T-2"].ref}
    try:
        deadline = time.monotonic() + 60
        while len(seen) < 4:
            assert time.monotonic() < deadline, "the heartbeat ref did not move three times"
            seen.add(git(bare, "rev-parse", "refs/memento/claims/T-2").strip())
            time.sleep(0.05)
    finally:
        a.fleet.stop_beating()
    log = root / "logs" / "cron.log"
    assert "lost a race" not in (log.read_text() if log.exists() else "")
    now = git(bare, "rev-parse", "refs/memento/claims/T-2").strip()
    assert a.fleet.claims["T-2"].ref == now and fleet.pending.read_pending_claims(a)["T-2"] == now


def test_a_claim_forgotten_while_its_beat_waits_for_the_lock_is_not_beaten(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    monkeypatch.setattr(fleet.claims, "HEARTBEAT_SECONDS", 0.2)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    first = git(bare, "rev-parse", "refs/memento/claims/T-1").strip()
    try:
        with a.fleet._lock:  # the beat wakes, lists T-1 and waits here
            time.sleep(1.0)
            a.fleet.claims = {}  # meanwhile the claim is forgotten (its pending file keeps it)
        time.sleep(1.0)
        assert a.fleet._thread.is_alive()
    finally:
        a.fleet.stop_beating()
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == first


def test_two_hosts_of_the_same_name_claiming_in_the_same_second_still_have_one_winner(tmp_path, monkeypatch):
    # Two CI runners named alike make byte-identical claim commits but for the nonce: without it
    # the second push would find the branch already where it pushes, and both would "win".
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a, b = context(clones["a"], "ci", monkeypatch), context(clones["b"], "ci", monkeypatch)
    try:
        for ctx in (a, b):
            fleet.sync.sync(ctx)
        tasks = [ctx.plan().task("T-1") for ctx in (a, b)]
        while time.time() % 1 > 0.3:  # both claims inside one second
            time.sleep(0.01)
        won = [fleet.claims.claim(ctx, task) for ctx, task in zip((a, b), tasks, strict=True)]
    finally:
        for ctx in (a, b):
            ctx.fleet.stop_beating()
    assert won == [True, False]
    assert git(clones["b"], "rev-parse", "HEAD") != git(bare, "rev-parse", "main")  # b holds nothing
