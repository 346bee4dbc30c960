"""fleet/integrate.py (SPEC §12 "Across machines"): this host's commits brought onto the
remote's branch: git's rebase, the replay in memory, HEAD moved after the push, a replay
killed half way.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from memento_core import fleet
from memento_core.fleet import claims, host, integrate, publish, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.plan.scan import parse_plan_text
from tests.core.git_calls import watch_git

from ..test_fleet import (
    PY,
    claim_refs,
    context,
    env_for,
    git,
    make_fleet,
    remote_plan,
    subjects,
    tick_all,
    two_hosts_a_holding_t1,
)


def test_a_submodule_both_sides_moved_stops_the_rebase_naming_it(tmp_path, monkeypatch):
    # A gitlink's stages are commits of another repository, not blobs this one can read.
    import hashlib

    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root, b_root = clones["a"], clones["b"]

    def move_submodule(root: Path, to: str, message: str) -> None:
        sha = hashlib.sha1(to.encode()).hexdigest()
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/lib")
        git(root, "commit", "-qm", message)

    move_submodule(b_root, "first", "vendor/lib at first")
    git(b_root, "push", "-q", "origin", "main")
    git(a_root, "pull", "-q", "--ff-only", "origin", "main")
    move_submodule(a_root, "a's", "vendor/lib at a's")
    move_submodule(b_root, "b's", "vendor/lib at b's")
    git(b_root, "push", "-q", "origin", "main")
    mine = git(a_root, "rev-parse", "HEAD")
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    with pytest.raises(fleet.host.FleetConflict) as raised:
        fleet.integrate.integrate(ctx, remote.remote_head(ctx))
    assert raised.value.paths == ["vendor/lib"]
    assert git(a_root, "rev-parse", "HEAD") == mine  # the rebase aborted: a's commit as it was
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert git(a_root, "ls-files", "-u") == ""


def test_two_histories_with_nothing_in_common_have_no_merge_base_and_no_error(tmp_path, monkeypatch):
    # A remote a person re-made from scratch: git merge-base exits 1, which is an answer (none).
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    head = git(clones["a"], "rev-parse", "HEAD").strip()
    orphan = git(clones["a"], "commit-tree", "-m", "a history of its own",
                 "4b825dc642cb6eb9a060e54bf8d69288fbee4904").strip()  # the empty tree
    assert fleet.integrate._merge_base(a, orphan, head) is None
    assert fleet.integrate._merge_base(a, head, head) == head


def _is_ancestor(root: Path, ancestor: str, rev: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", ancestor, rev], cwd=root).returncode == 0


def _unpushed_result(root: Path, task: str) -> str:
    """A host's result of ``task`` committed here but not pushed: out/<N>.txt and the plan's [x],
    then its SUCCESS entry (naming the result's commit) as `memento: sync docs`."""
    n = task.split("-")[1]
    (root / "out").mkdir(exist_ok=True)
    (root / "out" / f"{n}.txt").write_text(f"{task}\n")
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace(f"- [ ] `{task}`", f"- [x] `{task}`"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"memento: complete {task} Write out/{n}.txt")
    sha = git(root, "rev-parse", "HEAD").strip()
    status = root / "docs" / "TICK_STATUS.md"
    status.write_text(status.read_text() + f"\n## [2026-12-03 14:00:00] Tick #7 — {task}\n"
                      f"- **Status**: ✅ SUCCESS\n- **Git Commit**: `{sha[:7]}` — \"memento: complete {task}\"\n")
    git(root, "commit", "-qam", "memento: sync docs")
    return sha


def test_the_replay_of_a_hosts_results_is_what_git_rebase_made_of_them(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    old = _unpushed_result(clones["a"], "T-2")
    twin = tmp_path / "a-twin"  # the same host's clone, copied: one integrates each way
    subprocess.run(["cp", "-a", str(clones["a"]), str(twin)], check=True)
    tick_all({"b": clones["b"]})  # meanwhile the remote gets T-1: the plan and the log change there
    runs = {}
    for name, root, replays in (("replayed", clones["a"], True), ("rebased", twin, False)):
        ctx = context(root, "a", monkeypatch)
        calls = []
        real = fleet.integrate.replay
        monkeypatch.setattr(fleet.integrate, "replay",
                            lambda *a, real=real, replays=replays, calls=calls: calls.append(1) or (real(*a) if replays else None))
        remote.fetch(ctx)
        fleet.integrate.integrate(ctx, remote.remote_head(ctx))
        assert calls == [1], name
        assert git(root, "status", "--porcelain") == "", name
        head = git(root, "rev-parse", "HEAD").strip()
        moved = git(root, "log", "-1", "--format=%H", "--grep", "^memento: complete T-2", head).strip()
        assert moved != old and _is_ancestor(root, git(bare, "rev-parse", "main").strip(), head), name
        status = git(root, "show", "HEAD:docs/TICK_STATUS.md")
        assert f"`{moved[:7]}`" in status and f"`{old[:7]}`" not in status, name  # the entry follows its commit
        runs[name] = {"subjects": git(root, "log", "--format=%s", head).splitlines(),
                      "plan": git(root, "show", "HEAD:docs/MASTER_PLAN.md"),
                      "status": status.replace(moved[:7], "<sha>"),
                      "files": git(root, "ls-tree", "-r", "--format=%(objectname) %(path)", "HEAD", "out")}
    assert runs["replayed"] == runs["rebased"]
    assert parse_plan_text(runs["replayed"]["plan"]).task("T-1").status == "x"
    assert parse_plan_text(runs["replayed"]["plan"]).task("T-2").status == "x"


def test_the_replay_keeps_a_persons_uncommitted_edit_and_will_not_overwrite_their_new_file(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    (a_root / "person.txt").write_text("a person's file\n")
    git(a_root, "add", "person.txt")
    git(a_root, "commit", "-qm", "a person's commit")
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})  # the remote gets T-1 and its out/1.txt
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    upstream = remote.remote_head(ctx)
    # A person's edit of a tracked file the remote did not change: kept, byte for byte, unstaged.
    edited = a_root / "person.txt"
    mine = b"a person's file\r\nwith words not committed yet\n"
    edited.write_bytes(mine)
    # ... and a file of theirs where the remote now has out/1.txt: nothing may overwrite it.
    (a_root / "out" / "1.txt").write_bytes(b"the person's own file\n")
    local = git(a_root, "rev-parse", "HEAD").strip()
    with pytest.raises(remote.MementoError) as raised:
        fleet.integrate.integrate(ctx, upstream)
    # git's words for the rebase it would not start (nothing to abort after it)
    assert str(raised.value).startswith("git rebase failed: ") and "unstaged changes" in str(raised.value)
    assert (a_root / "out" / "1.txt").read_bytes() == b"the person's own file\n"
    assert edited.read_bytes() == mine
    assert git(a_root, "rev-parse", "HEAD").strip() == local  # the replay's move undone, git's rebase refused
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    (a_root / "out" / "1.txt").unlink()
    head = fleet.integrate.integrate(ctx, upstream)
    assert head != local and _is_ancestor(a_root, upstream, head)
    assert edited.read_bytes() == mine and git(a_root, "status", "--porcelain").split() == ["M", "person.txt"]
    assert "a person's commit" in git(a_root, "log", "--format=%s", f"{upstream}..HEAD")
    assert (a_root / "out" / "1.txt").read_text() == git(bare, "show", "main:out/1.txt")


_INTEGRATE = """
import sys
from pathlib import Path
from memento_core.config.load import load_config
from memento_core.fleet import integrate, remote
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace
ctx = TickContext(Workspace(Path(sys.argv[1])))
ctx.config = load_config(ctx.ws.config_path)
remote.fetch(ctx)
integrate.integrate(ctx, remote.remote_head(ctx))
"""


@pytest.mark.parametrize("point", ["replay:before-ref", "replay:before-files"])
def test_a_replay_killed_half_way_is_finished_or_dropped_by_the_next_tick(tmp_path, monkeypatch, point):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})  # the remote moves on: a's commits must be replayed onto it
    local = git(a_root, "rev-parse", "HEAD").strip()
    killed = subprocess.run([PY, "-c", _INTEGRATE, str(a_root)], env=env_for("a", MEMENTO_CRASH_AT=point),
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    journal = a_root / ".memento" / "fleet_replay.json"
    assert journal.exists()
    moved = git(a_root, "rev-parse", "HEAD").strip()
    assert (moved == local) == (point == "replay:before-ref")
    ctx = context(a_root, "a", monkeypatch)
    fleet.integrate.clean_leftovers(ctx)  # what the next tick does first
    assert not journal.exists()
    assert git(a_root, "rev-parse", "HEAD").strip() == moved
    assert git(a_root, "status", "--porcelain", "--untracked-files=no") == ""  # index and files are HEAD's
    assert subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=a_root).returncode == 0
    upstream = git(bare, "rev-parse", "main").strip()
    said = (a_root / "logs" / "cron.log").read_text() if (a_root / "logs" / "cron.log").exists() else ""
    if point == "replay:before-files":  # HEAD had moved onto the remote's: the files follow it
        assert (a_root / "out" / "1.txt").read_text() == git(bare, "show", "main:out/1.txt")
        assert _is_ancestor(a_root, upstream, "HEAD")
        assert f"finished moving the files to {moved[:12]}, which a killed tick had left behind HEAD" in said
    else:
        assert "finished moving" not in said and "HEAD is at" not in said  # a move never begun is dropped
    remote.fetch(ctx)
    fleet.integrate.integrate(ctx, remote.remote_head(ctx))  # and the sync goes on from there
    assert _is_ancestor(a_root, upstream, "HEAD")
    assert git(a_root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_result_replayed_onto_the_remote_is_pushed_before_head_and_the_files_move(tmp_path, monkeypatch):
    """The window from a fetch to the end of its push is where another host's push loses this
    one its race: the replayed commits are pushed as objects, and HEAD, the index and the files
    move to them after the push (with the documents' commit), not inside the window."""
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    fleet.sync.sync(b)
    assert fleet.claims.claim(b, b.plan().task("T-2"))  # the remote moves on: a's result must be replayed
    b.fleet.stop_beating()
    started = watch_git(monkeypatch, [], full=True, where=clones["a"])
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    finally:
        a.fleet.stop_beating()
    assert result.passed, result.reason
    ran = [next(arg for arg in args if not arg.startswith("-") and "=" not in arg) for args in started]
    window = ran[ran.index("fetch"):ran.index("push") + 1]
    assert "read-tree" not in window and "update-ref" not in window and "merge" not in window, window
    assert "read-tree" in ran[ran.index("push"):]  # the files moved, after the push
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1 and "memento: claim T-3 on a" in log
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")  # the chained claim held
    # The files are the pushed ones', but the chained claim's `[~]`, which the work tree's plan
    # never gets (the attempt's own claim step marks it).
    shown = git(clones["a"], "diff", "HEAD", "--", ".").splitlines()
    assert git(clones["a"], "status", "--porcelain") == " M docs/MASTER_PLAN.md\n"
    assert [line for line in shown if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "-- [~] `T-3` Write out/3.txt", "+- [ ] `T-3` Write out/3.txt"]
    assert (clones["a"] / "out" / "1.txt").read_text() == "T-1\n"
    assert a.fleet.task == "T-3"
    assert [t.status for t in remote_plan(bare).tasks] == ["x", "~", "~"]


def test_a_person_s_file_in_the_way_after_the_push_keeps_head_and_the_next_sync_follows(tmp_path, monkeypatch):
    """The replayed result landed, but a person's new file stands where the remote now has one:
    nothing of theirs is overwritten, HEAD stays, cron.log says why, and once the file is gone
    the next sync brings the work tree to the remote."""
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    tick_all({"b": clones["b"]})  # b completes T-2 and T-3: out/2.txt and out/3.txt on the remote
    a_root = clones["a"]
    for n in (2, 3):
        (a_root / "out" / f"{n}.txt").write_bytes(b"the person's own file\n")
    local = git(a_root, "rev-parse", "HEAD").strip()
    upstream = git(bare, "rev-parse", "main").strip()
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True))
    finally:
        a.fleet.stop_beating()
    assert result.passed, result.reason
    assert subjects(bare).count("memento: complete T-1 Write out/1.txt") == 1  # the push landed
    assert claim_refs(bare) == []
    assert git(a_root, "rev-parse", "HEAD").strip() == local
    assert (a_root / "out" / "2.txt").read_bytes() == b"the person's own file\n"
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert f"the work tree could not follow the commits replayed onto {upstream[:12]}: " in (
        a_root / "logs" / "cron.log").read_text()  # the remote's commit, as git shows it (12 digits)
    for n in (2, 3):
        (a_root / "out" / f"{n}.txt").unlink()
    fleet.sync.sync(a, take_over=False)
    assert git(a_root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert git(a_root, "status", "--porcelain") == ""
    assert [t.status for t in remote_plan(bare).tasks] == ["x", "x", "x"]


def test_a_chained_claim_is_held_when_the_replay_leaves_plan_notes_and_the_notes_reach_the_remote(
        tmp_path, monkeypatch):
    """The replay's plan notes become a status entry committed after the push: on top of the
    chained claim, which is held first (not left to go stale), and pushed by the next push."""
    from memento_core.git.replay import replay
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    fleet.sync.sync(b)
    assert fleet.claims.claim(b, b.plan().task("T-2"))
    b.fleet.stop_beating()
    real = replay

    def with_a_note(*args, **kw):
        out = real(*args, **kw)
        remote.fleet(a).plan_notes.append("T-1: changed here and on the remote; the remote's stands")
        return out

    monkeypatch.setattr(fleet.integrate, "replay", with_a_note)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
        assert result.passed, result.reason
        assert a.fleet.task == "T-3" and a.fleet.ref == git(bare, "rev-parse", "refs/memento/claims/T-3").strip()
        remote_main = git(bare, "rev-parse", "main").strip()
        assert git(clones["a"], "rev-parse", "HEAD~1").strip() == remote_main  # the entry's commit on the claim
        assert "PLAN MERGE" in git(clones["a"], "show", "HEAD:docs/TICK_STATUS.md")
        log = clones["a"] / "logs" / "cron.log"
        assert not log.exists() or "goes stale" not in log.read_text()
        assert "- [~] `T-3`" in git(clones["a"], "show", "HEAD:docs/MASTER_PLAN.md")  # the claim never undone
        fleet.sync.sync(a, take_over=False)  # the next push carries it
        assert "PLAN MERGE" in git(bare, "show", "main:docs/TICK_STATUS.md")
        assert a.fleet.task == "T-3"
    finally:
        a.fleet.stop_beating()


def _person_pushes(root: Path, name: str, text: str) -> str:
    """A person's commit of ``name`` pushed from clone ``root``: the remote's new commit."""
    (root / name).write_text(text)
    git(root, "add", name)
    git(root, "commit", "-qm", f"a person's {name}")
    git(root, "push", "-q", "origin", "main")
    return git(root, "rev-parse", "HEAD").strip()


def test_no_remote_head_the_same_commit_or_a_remote_behind_leaves_head_where_it_is_and_answers_it(
        tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a_root = clones["a"]
    ctx = context(a_root, "a", monkeypatch)
    local = git(a_root, "rev-parse", "HEAD").strip()
    assert fleet.integrate.integrate(ctx, None) == local  # a remote with no branch yet
    assert fleet.integrate.integrate(ctx, local) == local
    (a_root / "mine.txt").write_text("this host's, not pushed\n")
    git(a_root, "add", "mine.txt")
    git(a_root, "commit", "-qm", "this host's commit")
    ahead = git(a_root, "rev-parse", "HEAD").strip()
    remote.fetch(ctx)
    assert remote.remote_head(ctx) == local
    assert fleet.integrate.integrate(ctx, remote.remote_head(ctx)) == ahead  # nothing new on the remote
    assert git(a_root, "rev-parse", "HEAD").strip() == ahead
    assert git(a_root, "status", "--porcelain") == ""


def test_a_host_behind_the_remote_fast_forwards_to_it_and_keeps_a_persons_uncommitted_edit(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root, b_root = clones["a"], clones["b"]
    _person_pushes(a_root, "person.txt", "a person's file\n")
    git(b_root, "pull", "-q", "--ff-only", "origin", "main")
    upstream = _person_pushes(b_root, "other.txt", "another person's file\n")
    mine = b"a person's file\nwith words not committed yet\n"
    (a_root / "person.txt").write_bytes(mine)  # git's rebase would refuse to start with it
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    assert fleet.integrate.integrate(ctx, remote.remote_head(ctx)) == upstream
    assert git(a_root, "rev-parse", "HEAD").strip() == upstream  # no commit of this host's on top
    assert (a_root / "person.txt").read_bytes() == mine
    assert git(a_root, "status", "--porcelain") == " M person.txt\n"
    assert (a_root / "other.txt").read_text() == "another person's file\n"


def test_integrate_later_with_nothing_to_replay_integrates_now_and_calls_what_follows_at_once(tmp_path, monkeypatch):
    """No remote head, the remote's commit, a remote behind or ahead (a fast-forward), a remote
    re-made from scratch (git's rebase, nothing in common to replay from): HEAD is where the
    push starts from before it, and the callable given back runs what follows the push at once."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root, b_root = clones["a"], clones["b"]
    ctx = context(a_root, "a", monkeypatch)
    local = git(a_root, "rev-parse", "HEAD").strip()
    ran: list[str] = []

    def then_at(expected: str, answer) -> None:
        tip, arrive = answer
        assert tip == expected and git(a_root, "rev-parse", "HEAD").strip() == expected
        arrive(lambda: ran.append(git(a_root, "rev-parse", "HEAD").strip()))
        assert ran[-1] == expected and git(a_root, "rev-parse", "HEAD").strip() == expected

    then_at(local, fleet.integrate.integrate_later(ctx, None))
    then_at(local, fleet.integrate.integrate_later(ctx, local))
    upstream = _person_pushes(b_root, "other.txt", "another person's file\n")
    remote.fetch(ctx)
    then_at(upstream, fleet.integrate.integrate_later(ctx, remote.remote_head(ctx)))  # a fast-forward
    ahead = _person_pushes(a_root, "mine.txt", "this host's\n")
    (a_root / "later.txt").write_text("not pushed\n")
    git(a_root, "add", "later.txt")
    git(a_root, "commit", "-qm", "this host's commit, not pushed")
    remote.fetch(ctx)
    assert remote.remote_head(ctx) == ahead
    then_at(git(a_root, "rev-parse", "HEAD").strip(), fleet.integrate.integrate_later(ctx, ahead))
    # A person re-makes the remote from scratch: a history of one commit, a file of its own.
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=b_root, input="from scratch\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=b_root, input=f"100644 blob {blob}\tscratch.txt\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    scratch = git(b_root, "commit-tree", "-m", "the remote made again", tree).strip()
    git(b_root, "push", "-q", "--force", "origin", f"{scratch}:refs/heads/main")
    mine = git(a_root, "log", "--format=%s").splitlines()
    remote.fetch(ctx)
    assert fleet.integrate._merge_base(ctx, git(a_root, "rev-parse", "HEAD").strip(), scratch) is None
    tip, arrive = fleet.integrate.integrate_later(ctx, remote.remote_head(ctx))
    assert tip == git(a_root, "rev-parse", "HEAD").strip() and _is_ancestor(a_root, scratch, tip)
    assert git(a_root, "log", "--format=%s", f"{scratch}..HEAD").splitlines() == mine  # every commit of this host's on it
    assert (a_root / "scratch.txt").read_text() == "from scratch\n" and (a_root / "later.txt").exists()
    arrive(lambda: ran.append("after the rebase"))
    assert ran[-1] == "after the rebase"


def test_what_follows_the_push_runs_once_whether_head_reaches_the_replayed_commits_or_a_file_is_in_the_way(
        tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})  # the remote gets T-1 and its out/1.txt: a's commits are replayed
    twin = tmp_path / "a-twin"
    subprocess.run(["cp", "-a", str(a_root), str(twin)], check=True)
    local = git(a_root, "rev-parse", "HEAD").strip()
    for root, in_the_way in ((a_root, True), (twin, False)):
        ctx = context(root, "a", monkeypatch)
        remote.fetch(ctx)
        upstream = remote.remote_head(ctx)
        tip, arrive = fleet.integrate.integrate_later(ctx, upstream)
        assert tip != local and _is_ancestor(root, upstream, tip)
        assert git(root, "rev-parse", "HEAD").strip() == local  # objects only, until the push is done
        if in_the_way:
            (root / "out" / "1.txt").write_bytes(b"the person's own file\n")
        seen: list[str] = []
        arrive(lambda root=root, seen=seen: seen.append(git(root, "rev-parse", "HEAD").strip()))
        if in_the_way:
            assert seen == [local] and git(root, "rev-parse", "HEAD").strip() == local
            assert (root / "out" / "1.txt").read_bytes() == b"the person's own file\n"
        else:
            assert seen == [tip] and _is_ancestor(root, tip, "HEAD")
            assert (root / "out" / "1.txt").read_text() == git(bare, "show", "main:out/1.txt")
            assert git(root, "status", "--porcelain") == ""


def test_a_replay_commits_the_plan_a_person_edited_meanwhile_with_the_other_documents(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root = clones["a"]
    upstream = _person_pushes(clones["b"], "other.txt", "another person's file\n")
    (a_root / "mine.txt").write_text("this host's, not pushed\n")
    git(a_root, "add", "mine.txt")
    git(a_root, "commit", "-qm", "this host's commit")
    plan = a_root / "docs" / "MASTER_PLAN.md"
    edited = plan.read_text().replace("Write out/1.txt", "Write out/1.txt, one line")
    plan.write_text(edited)  # neither side's commits touch the plan: the replay leaves it as it is
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    head = fleet.integrate.integrate(ctx, remote.remote_head(ctx))
    assert head == git(a_root, "rev-parse", "HEAD").strip() and _is_ancestor(a_root, upstream, head)
    assert git(a_root, "log", "--format=%s", f"{upstream}..HEAD").splitlines() == [
        "memento: sync docs", "this host's commit"]
    assert git(a_root, "show", "HEAD:docs/MASTER_PLAN.md") == edited
    assert git(a_root, "status", "--porcelain") == ""


def test_a_persons_commit_made_while_the_push_is_on_its_way_is_rebased_onto_the_replayed_commits(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    upstream = remote.remote_head(ctx)
    tip, arrive = fleet.integrate.integrate_later(ctx, upstream)
    (a_root / "person.txt").write_text("a person's file\n")  # HEAD moves on from the commit the replay began at
    git(a_root, "add", "person.txt")
    git(a_root, "commit", "-qm", "a person's commit")
    seen: list[str] = []
    arrive(lambda: seen.append(git(a_root, "rev-parse", "HEAD").strip()))
    assert git(a_root, "log", "--format=%s", f"{tip}..HEAD").splitlines() == ["a person's commit"]
    assert git(a_root, "rev-parse", "HEAD~1").strip() == tip  # this host's commits as pushed, not twice
    assert seen == [git(a_root, "rev-parse", "HEAD").strip()]
    assert git(a_root, "status", "--porcelain") == ""
    assert (a_root / "out" / "1.txt").read_text() == git(bare, "show", "main:out/1.txt")
    assert not (a_root / ".memento" / "fleet_replay.json").exists()


def test_files_a_killed_replay_left_behind_that_a_persons_file_now_blocks_stay_and_the_tick_goes_on(
        tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})  # the remote gets out/1.txt
    killed = subprocess.run([PY, "-c", _INTEGRATE, str(a_root)], env=env_for("a", MEMENTO_CRASH_AT="replay:before-files"),
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    moved = git(a_root, "rev-parse", "HEAD").strip()
    (a_root / "out" / "1.txt").write_bytes(b"the person's own file\n")  # where HEAD's commits have out/1.txt
    fleet.integrate.clean_leftovers(context(a_root, "a", monkeypatch))
    assert not (a_root / ".memento" / "fleet_replay.json").exists()
    assert git(a_root, "rev-parse", "HEAD").strip() == moved
    assert (a_root / "out" / "1.txt").read_bytes() == b"the person's own file\n"
    assert (f"HEAD is at {moved[:12]} but the files could not be moved there (`git status` shows what differs): "
            "a killed tick left them half way") in (a_root / "logs" / "cron.log").read_text()


@pytest.mark.parametrize("journal", [b"{\"from\": \"abc\"", b"{\"from\": \"abc\"}", b"[1, 2]"])
def test_a_replay_journal_that_does_not_read_is_removed_and_nothing_moves(tmp_path, monkeypatch, journal):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a_root = clones["a"]
    local = git(a_root, "rev-parse", "HEAD").strip()
    path = a_root / ".memento" / "fleet_replay.json"
    path.parent.mkdir()
    path.write_bytes(journal)  # cut short by a full disk, say
    fleet.integrate.clean_leftovers(context(a_root, "a", monkeypatch))
    assert not path.exists()
    assert git(a_root, "rev-parse", "HEAD").strip() == local and git(a_root, "status", "--porcelain") == ""


@pytest.mark.parametrize("backend", ["--merge", "--apply"])  # .git/rebase-merge, .git/rebase-apply
def test_a_rebase_a_killed_tick_left_half_done_is_aborted_by_the_next_and_none_is_not(tmp_path, monkeypatch, backend):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root = clones["a"]
    ctx = context(a_root, "a", monkeypatch)
    log = a_root / "logs" / "cron.log"
    fleet.integrate.clean_leftovers(ctx)  # nothing left half done: nothing to say
    assert not log.exists() or "aborted a rebase" not in log.read_text()
    _person_pushes(clones["b"], "shared.txt", "the remote's line\n")
    (a_root / "shared.txt").write_text("this host's line\n")
    git(a_root, "add", "shared.txt")
    git(a_root, "commit", "-qm", "this host's shared.txt")
    mine = git(a_root, "rev-parse", "HEAD").strip()
    git(a_root, "fetch", "-q", "origin")
    stopped = subprocess.run(["git", "rebase", backend, "origin/main"], cwd=a_root, capture_output=True, text=True)
    assert stopped.returncode != 0 and git(a_root, "ls-files", "-u") != ""  # stopped on its conflict, as a kill would leave it
    fleet.integrate.clean_leftovers(ctx)
    assert git(a_root, "rev-parse", "HEAD").strip() == mine
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert git(a_root, "status", "--porcelain") == "" and (a_root / "shared.txt").read_text() == "this host's line\n"
    assert log.read_text().count("aborted a rebase a killed tick left half done") == 1


def test_is_ancestor_answers_for_two_commits_and_no_for_a_missing_one(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a_root = clones["a"]
    ctx = context(a_root, "a", monkeypatch)
    old = git(a_root, "rev-parse", "HEAD").strip()
    (a_root / "mine.txt").write_text("mine\n")
    git(a_root, "add", "mine.txt")
    git(a_root, "commit", "-qm", "mine")
    new = git(a_root, "rev-parse", "HEAD").strip()
    assert fleet.integrate._is_ancestor(ctx, old, new) and fleet.integrate._is_ancestor(ctx, new, new)
    assert not fleet.integrate._is_ancestor(ctx, new, old)
    assert not fleet.integrate._is_ancestor(ctx, None, new) and not fleet.integrate._is_ancestor(ctx, old, None)
    assert not fleet.integrate._is_ancestor(ctx, None, None)


def test_git_rebase_stopped_by_a_persons_file_with_no_conflict_is_aborted_and_says_gits_words(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root = clones["a"]
    _person_pushes(clones["b"], "other.txt", "another person's file\n")
    for step, act in (("add", lambda: (a_root / "w.txt").write_text("for a while\n")), ("rm", lambda: None)):
        act()
        git(a_root, step, "w.txt")
        git(a_root, "commit", "-qm", f"this host's {step} w.txt")
    local = git(a_root, "rev-parse", "HEAD").strip()
    (a_root / "w.txt").write_text("a person's w.txt\n")  # where the first commit, picked again, writes one
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    with pytest.raises(remote.MementoError) as raised:
        fleet.integrate.rebase(ctx, remote.remote_head(ctx))  # git's rebase, as when the replay cannot
    assert not isinstance(raised.value, fleet.host.FleetConflict)
    assert str(raised.value).startswith("git rebase failed: ") and "w.txt" in str(raised.value)
    assert git(a_root, "rev-parse", "HEAD").strip() == local
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert (a_root / "w.txt").read_text() == "a person's w.txt\n"


def test_git_rebase_still_stopping_after_the_rounds_it_may_take_is_aborted_and_said(tmp_path, monkeypatch):
    """Each round settles one commit's conflict in Memento's documents; a rebase that still stops
    once they are spent (a thousand; one here, for two conflicted commits) is given up whole."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    status = a_root / "docs" / "TICK_STATUS.md"
    status.write_text(status.read_text() + "\n## [2026-12-03 14:00:00] Tick #7 — T-3\n- **Status**: ⏭️ SKIPPED\n")
    git(a_root, "commit", "-qam", "memento: sync docs")  # conflicts with the remote's entries
    plan = a_root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [ ] `T-1` Write out/1.txt", "- [ ] `T-1` Write out/1.txt, one line"))
    git(a_root, "commit", "-qam", "a person's plan edit")  # then with the remote's [x] of T-1
    local = git(a_root, "rev-parse", "HEAD").strip()
    tick_all({"b": clones["b"]})
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    monkeypatch.setattr(fleet.integrate, "REBASE_ROUNDS", 1)
    with pytest.raises(remote.MementoError, match="^git rebase did not finish$"):
        fleet.integrate.rebase(ctx, remote.remote_head(ctx))
    assert git(a_root, "rev-parse", "HEAD").strip() == local
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert git(a_root, "status", "--porcelain") == ""
    monkeypatch.setattr(fleet.integrate, "REBASE_ROUNDS", 2)
    fleet.integrate.rebase(ctx, remote.remote_head(ctx))
    assert git(a_root, "log", "--format=%s", "-2").splitlines() == ["a person's plan edit", "memento: sync docs"]
    assert _is_ancestor(a_root, git(bare, "rev-parse", "main").strip(), "HEAD")


def test_a_commit_whose_subject_has_a_tab_is_rebased_by_git_and_its_status_entry_follows_it(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root = clones["a"]
    upstream = _person_pushes(clones["b"], "other.txt", "another person's file\n")
    (a_root / "mine.txt").write_text("this host's\n")
    git(a_root, "add", "mine.txt")
    git(a_root, "commit", "-qm", "memento: complete T-1\tWrite out/1.txt")  # git keeps the tab in %s
    old = git(a_root, "rev-parse", "HEAD").strip()
    status = a_root / "docs" / "TICK_STATUS.md"
    status.write_text(status.read_text() + "\n## [2026-12-03 14:00:00] Tick #7 — T-1\n"
                      f"- **Status**: ✅ SUCCESS\n- **Git Commit**: `{old[:7]}` — \"memento: complete T-1\"\n")
    git(a_root, "commit", "-qam", "memento: sync docs")
    ctx = context(a_root, "a", monkeypatch)
    monkeypatch.setattr(fleet.integrate, "replay", lambda *a: None)  # git's rebase, as when the replay cannot
    remote.fetch(ctx)
    fleet.integrate.integrate(ctx, remote.remote_head(ctx))
    moved = git(a_root, "log", "-1", "--format=%H", "--grep", "^memento: complete T-1", "HEAD").strip()
    assert git(a_root, "log", "--format=%s", f"{upstream}..HEAD").splitlines() == [  # the entry's fix on top
        "memento: sync docs", "memento: sync docs", "memento: complete T-1\tWrite out/1.txt"]
    assert moved != old and f"`{moved[:7]}`" in git(a_root, "show", "HEAD:docs/TICK_STATUS.md")
    assert f"`{old[:7]}`" not in status.read_text() and git(a_root, "status", "--porcelain") == ""
