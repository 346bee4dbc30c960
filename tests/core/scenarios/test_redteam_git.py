"""Red team, without a sandbox (SPEC §13): git's internals and Memento's own files.

Each hostile agent under tests/agents/ does its task (so the tick would pass)
and also attacks git or Memento's files. Every test judges the outcome on disk
and in git: the hostile change is in no commit (the next tick's commits
included), it is not left in the work tree nor in `.git/`, every file and ref
a person owns is byte-identical, and the next honest tick works.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core.git import state as git_state
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.modes import MODES

from .test_engine import agent, entries, git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


CHECKED = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `sh check.sh`
  - context_files: [hello.txt]
  - guard_files: [guarded.txt]
  - retries: 0
"""


def hostile_ws(tmp_path: Path, command: str, sandbox: str = "none") -> Workspace:
    """A workspace with what a person owns in git: a branch, an annotated tag, two stashes, hooks."""
    ws = make_ws(tmp_path, command, tasks=CHECKED, sandbox=sandbox)
    root = ws.root
    (root / "check.sh").write_text("grep -q done hello.txt\n")
    git(root, "add", "check.sh")
    git(root, "commit", "-qm", "the check")
    git(root, "branch", "feature")
    git(root, "tag", "-a", "v1", "-m", "release one")
    for n in (1, 2):
        (root / "other.txt").write_text(f"a person's stashed work {n}\n")
        git(root, "stash", "push", "-q", "-m", f"stash {n}", "--", "other.txt")
    hook = root / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\n# a person's own hook\nexit 0\n")
    hook.chmod(0o755)
    return ws


def git_owned(root: Path) -> dict[str, bytes]:
    """What a person owns in .git: the refs but HEAD's branch, HEAD, the stash list, config, info, hooks."""
    out = {"refs": git(root, "for-each-ref", "--format=%(objectname) %(refname)").encode(),
           "HEAD": (root / ".git" / "HEAD").read_bytes(),
           "stash": git(root, "stash", "list", "--format=%H %gs").encode(),
           "flags": git(root, "ls-files", "-v").encode()}
    out["refs"] = b"\n".join(ln for ln in out["refs"].splitlines() if not ln.endswith(b" refs/heads/main"))
    for rel in ("config", "info", "hooks"):
        base = root / ".git" / rel
        for p in sorted(base.rglob("*")) if base.is_dir() else [base]:
            if p.is_file():
                out[p.relative_to(root).as_posix()] = p.read_bytes() + oct(p.stat().st_mode).encode()
    return out


def work_tree(root: Path) -> dict[str, bytes]:
    """Every file outside .git and Memento's own folders and documents, with its bytes."""
    skip = (".git", "logs", ".memento", "memory", "docs")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).parts[0] not in skip}


def all_committed(root: Path, since: str) -> dict[str, set[bytes]]:
    """Every version of every path in the commits after ``since`` on any branch or tag (the stash holds a person's work)."""
    seen: dict[str, set[bytes]] = {}
    for sha in git(root, "rev-list", "--branches", "--tags", f"^{since}").split():
        for path in git(root, "show", "--name-only", "--format=", sha).split():
            blob = subprocess.run(["git", "show", f"{sha}:{path}"], cwd=root, capture_output=True).stdout
            seen.setdefault(path, set()).add(blob)
    return seen


def honest_tick_works(ws: Workspace) -> None:
    """A person fixes the agent; the next tick passes T-1 and commits exactly the task's file."""
    text = ws.config_path.read_text().splitlines(keepends=True)
    text = [ln if not ln.startswith("command =") else f'command = """{agent("does_task.py", "hello.txt", "done")}"""\n'
            for ln in text]
    ws.config_path.write_text("".join(text))
    git(ws.root, "commit", "-qm", "an honest agent", "--", "memento.toml")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert files - {"docs/HUMAN_NOTES.md"} == {"hello.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md",
                                              "docs/CURRENT_STATE.md"}
    assert all(ln[3:].startswith("docs/") for ln in git(ws.root, "status", "--porcelain").splitlines())


def attack(tmp_path: Path, command: str, *, expect: str, sandbox: str = "none"):
    """Run one tick with the hostile agent; judge git and the work tree; return the workspace.

    Unconfined the attack happens and the guards catch it (``expect`` is in the reason);
    in the sandbox `.git/` is read-only, the attack fails, and the tick may pass the task."""
    ws = hostile_ws(tmp_path, command, sandbox)
    root = ws.root
    start = git(root, "rev-parse", "HEAD").strip()
    owned, tree = git_owned(root), work_tree(root)
    outcome = run_tick(root)
    (result,) = outcome.results
    if sandbox == "none":
        assert not result.passed
        assert expect in result.reason, result.reason
    else:
        assert "git's own state" not in result.reason, result.reason  # nothing in .git/ to restore
    assert git_owned(root) == owned
    now = work_tree(root)
    if result.passed:
        assert now.pop("hello.txt") == b"done\n"
    assert now == tree
    assert git(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    for sha in git(root, "rev-list", f"{start}..HEAD").split():  # only Memento's bookkeeping (and T-1)
        files = git(root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") or (result.passed and f == "hello.txt") for f in files), files
    if not result.passed:
        honest_tick_works(ws)
    committed = all_committed(root, start)
    assert set(committed) <= {"hello.txt", "memento.toml", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md",
                              "docs/HUMAN_NOTES.md", "docs/CURRENT_STATE.md"}, committed.keys()
    assert committed["hello.txt"] == {b"done\n"}
    return ws


@pytest.mark.parametrize("mode", MODES)
def test_hooks_the_agent_plants_never_run_and_are_removed(tmp_path, mode):
    marker = tmp_path / "hooks-ran.txt"
    attack(tmp_path, agent("git_hooks.py", str(marker)), expect="wrote .git/hooks/post-checkout", sandbox=mode)
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
def test_hooks_path_fsmonitor_and_signing_set_by_the_agent_are_never_used(tmp_path, mode):
    marker = tmp_path / "git-ran-it.txt"
    ws = attack(tmp_path, agent("git_config_hooks_fsmonitor.py", str(marker)), expect="wrote .git/config",
                sandbox=mode)
    assert not marker.exists()
    assert subprocess.run(["git", "config", "--get", "core.hooksPath"], cwd=ws.root).returncode == 1


@pytest.mark.parametrize("mode", MODES)
def test_index_flags_hide_no_gutted_guard_file_or_test(tmp_path, mode):
    ws = attack(tmp_path, agent("git_index_flags.py", "guarded.txt", "check.sh"),
                expect="guard file changed: guarded.txt", sandbox=mode)
    (entry,) = [e for e in entries(ws) if e.status == "FAILED"]
    if mode == "none":  # in the sandbox the guard file is read-only: the agent died at its first write
        assert "changed files outside context_files: check.sh" in entry.field("Reason")
    assert (ws.root / "guarded.txt").read_text() == "do not touch\n"


@pytest.mark.parametrize("mode", MODES)
def test_info_exclude_hides_no_new_file(tmp_path, mode):
    ws = attack(tmp_path, agent("git_info_exclude.py"), expect="changed files outside context_files: conftest.py",
                sandbox=mode)
    assert not (ws.root / "conftest.py").exists()


@pytest.mark.parametrize("mode", MODES)
def test_deleted_branch_tag_and_stash_are_restored(tmp_path, mode):
    attack(tmp_path, agent("git_deletes_refs.py", "feature", "v1"),
           expect="deleted refs/heads/feature, refs/stash, refs/tags/v1", sandbox=mode)


@pytest.mark.parametrize("mode", MODES)
def test_head_moved_to_a_branch_of_the_agents_is_put_back(tmp_path, mode):
    attack(tmp_path, agent("git_moves_head.py", "x"),
           expect="moved HEAD from refs/heads/main to refs/heads/x; created refs/heads/x", sandbox=mode)


@pytest.mark.parametrize("mode", MODES)
def test_an_edited_git_config_is_restored(tmp_path, mode):
    attack(tmp_path, agent("git_edits_config.py"), expect="changed git's own state: wrote .git/config (restored)",
           sandbox=mode)


# ---------------------------------------------------------------- Memento's own files as symlinks


@pytest.mark.parametrize("rel", ["docs/TICK_STATUS.md", ".memento/state.json", "logs/cron.log",
                                 "docs/MASTER_PLAN.md", "logs"])
@pytest.mark.parametrize("mode", MODES)
def test_a_memento_file_replaced_by_a_symlink_is_never_written_through(tmp_path, rel, mode):
    outside = tmp_path / "a-persons-files"
    outside.mkdir()
    target = outside / "diary.txt"
    target.write_bytes(b"a person's diary\n## [2026-01-01T00:00:00Z] Tick #9\n")
    if rel == "logs":
        target = outside
    listing = {p.name: p.read_bytes() for p in outside.iterdir()}
    ws = hostile_ws(tmp_path, agent("links_own_file.py", rel, str(target)), sandbox=mode)
    start = git(ws.root, "rev-parse", "HEAD").strip()
    status_before = ws.status_path.read_bytes()
    outcome = run_tick(ws.root)
    (result,) = outcome.results
    assert not result.passed
    if mode == "none":
        assert f"replaced Memento's own files by symbolic links: {rel}" in result.reason, result.reason
    else:  # read-only in the sandbox: the link could not be made, the agent died trying
        assert result.reason == "agent exited with code 1", result.reason
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == listing  # nothing written outside
    assert not (ws.root / rel).is_symlink()
    assert ws.status_path.read_bytes().startswith(status_before.rstrip(b"\n"))
    assert [e.status for e in entries(ws)] == ["FAILED"]
    assert not (ws.root / "hello.txt").exists()
    honest_tick_works(ws)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == listing
    # No commit since the start records a symbolic link, nor the diary's words.
    for sha in git(ws.root, "rev-list", f"{start}..HEAD").split():
        assert "120000" not in git(ws.root, "ls-tree", "-r", sha)
        assert b"a person's diary" not in subprocess.run(["git", "show", sha], cwd=ws.root,
                                                           capture_output=True).stdout


# ---------------------------------------------------------------- what is committed is what verify checked


def test_a_daemon_rewriting_a_file_after_verify_does_not_get_it_committed(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    ws = hostile_ws(tmp_path, agent("daemon_rewrites_after_verify.py", "hello.txt", "forged-never-verified",
                                    str(pidfile)))
    try:
        outcome = run_tick(ws.root)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (pidfile.exists() and pidfile.read_text().endswith(" done")):
            time.sleep(0.01)
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
            except ProcessLookupError:
                pass
    (result,) = outcome.results
    # However the race went, the commit holds what verify passed on, never the daemon's text.
    for sha in git(ws.root, "rev-list", "HEAD").split():
        blob = subprocess.run(["git", "show", f"{sha}:hello.txt"], cwd=ws.root, capture_output=True).stdout
        assert b"forged" not in blob
    if result.passed:
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"


def test_the_commit_is_made_of_the_hashed_blobs_not_the_files(tmp_path):
    from memento_core.git.commit import commit_paths
    from memento_core.git.objects import GONE, hash_blobs

    ws = make_ws(tmp_path, "true")
    root = ws.root
    (root / "hello.txt").write_text("verified\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "link").symlink_to("hello.txt")
    blobs = hash_blobs(root, ["hello.txt", "run.sh", "link", "guarded.txt", "missing.txt"])
    (root / "hello.txt").write_text("rewritten afterwards\n")
    (root / "guarded.txt").unlink()
    sha = commit_paths(root, ["hello.txt"], "m", blobs=blobs)
    assert git(root, "show", f"{sha}:hello.txt") == "verified\n"
    assert "100755 blob" in git(root, "ls-tree", sha, "run.sh")
    assert git(root, "ls-tree", sha, "link").startswith("120000 blob")
    assert git(root, "show", f"{sha}:guarded.txt") == "do not touch\n"  # hashed while it was there
    assert blobs["missing.txt"] == GONE
    # The real index agrees with the commit; the rewritten file shows as a change on disk.
    assert set(git(root, "status", "--porcelain", "--", "hello.txt", "guarded.txt").splitlines()) == {" M hello.txt", " D guarded.txt"}


# ---------------------------------------------------------------- Memento's documents forged during the run

TWO = CHECKED + """- [ ] `T-2` [MODULE:two] Second
  - verify: `true`
  - context_files: [two.txt]
  - retries: 0
"""


@pytest.mark.parametrize(("mode", "reason"), [
    ("entry", "the agent wrote into docs/TICK_STATUS.md (only Memento appends to it)"),
    ("note", "the agent wrote 1 note(s) by hand in docs/HUMAN_NOTES.md"),
    ("read", "the agent changed the read mark of 1 note(s) in docs/HUMAN_NOTES.md"),
    ("plan", "the agent marked T-2 [x]; edited the definition of T-2 in docs/MASTER_PLAN.md"),
    ("meta", "the agent changed Meta max_diff_lines in docs/MASTER_PLAN.md"),
])
@pytest.mark.parametrize("sandbox", MODES)
def test_documents_forged_during_the_run_are_in_no_commit_and_not_on_disk(tmp_path, mode, reason, sandbox):
    from memento_core.notes import add_note, parse_notes

    ws = make_ws(tmp_path, agent("forges_documents.py", mode), tasks=TWO, sandbox=sandbox)
    (ws.root / "check.sh").write_text("grep -q done hello.txt\n")
    add_note(ws.notes_path, "a person's note for T-2", target="T-2")
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "the check and a note")
    start = git(ws.root, "rev-parse", "HEAD").strip()
    outcome = run_tick(ws.root)
    (result,) = outcome.results
    assert not result.passed
    if sandbox == "bwrap":  # docs/ is read-only in the sandbox: the forgery failed, the agent with it
        reason = "agent exited with code 1"
    assert reason in result.reason, result.reason
    honest_tick_works(ws)

    def forged_anywhere() -> list[str]:
        hits = [p.name for p in (ws.root / "docs").iterdir() if p.is_file() and "FORGED" in p.read_text()]
        history = git(ws.root, "log", "-p", f"{start}..HEAD")
        return hits + (["a commit"] if "FORGED" in history or "max_diff_lines: 1000000" in history else [])

    assert forged_anywhere() == []
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-2").status == " " and plan.task("T-2").context_files == ("two.txt",)
    assert plan.meta.max_diff_lines == 50
    assert [n.read for n in parse_notes(ws.notes_path) if n.text == "a person's note for T-2"] == [False]
    assert [e.task_id for e in entries(ws) if e.status == "SUCCESS"] == ["T-1"]


def test_files_git_writes_itself_are_not_the_agents(tmp_path):
    from memento_core.tick.guards import git_damage

    ws = hostile_ws(tmp_path, "true")
    before = git_state.capture(ws.root)
    git(ws.root, "gc", "-q")  # packs refs, writes .git/info/refs and objects/info/packs
    assert git_damage(before, git_state.capture(ws.root)) == ""


# ---------------------------------------------------------------- .git after a tick killed mid-attempt


def _tick_killed_while_the_agent_runs(root: Path) -> str:
    """Start a cron-like tick, wait until its agent says it planted, kill -9 the tick; the agent's line."""
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    tick = subprocess.Popen([sys.executable, "-m", "memento_core.tick", "--project", str(root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and tick.poll() is None:
            said = [ln for log in (root / "logs").glob("tick_*.log")
                    for ln in log.read_text(errors="replace").splitlines() if ln.startswith("PLANTED ")]
            if said:
                return said[0]
            time.sleep(0.02)
        raise AssertionError(f"the agent never said PLANTED (tick exit {tick.poll()})")
    finally:
        tick.kill()
        tick.wait()


@pytest.mark.parametrize("mode", MODES)
def test_git_state_the_agent_planted_before_its_tick_was_killed_is_restored_by_the_recovery(tmp_path, mode):
    """Hooks, config, a moved branch and tag and a dropped stash do not outlive a kill -9 of the tick:
    the recovery restores `.git/` from the tick's own copy of it, taken at the snapshot."""
    marker = tmp_path / "hooks-ran.txt"
    ws = hostile_ws(tmp_path, agent("plants_git_and_waits.py", "feature", "v1", str(marker)), sandbox=mode)
    root = ws.root
    start = git(root, "rev-parse", "HEAD").strip()
    owned, tree = git_owned(root), work_tree(root)
    planted = _tick_killed_while_the_agent_runs(root)
    agent_pid = int(planted.split()[1])
    try:
        if mode == "none":  # it did plant all of it (read on disk: a git command would run its fsmonitor)
            assert "/tmp/agent-hooks" in (root / ".git" / "config").read_text()
            assert (root / ".git" / "hooks" / "post-checkout").exists()
            assert not (root / ".git" / "refs" / "stash").exists()
        assert (root / ".memento" / "records" / "T-1.git").is_file()  # the tick's copy, made at the snapshot
        recovered = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(root)],
                                   capture_output=True, text=True, timeout=120)
        assert recovered.returncode in (0, 1) and "Traceback" not in recovered.stderr, recovered.stderr
        if mode == "none":
            assert not _alive(agent_pid)  # the recovery killed the agent its dead tick left
    finally:
        if mode == "none" and _alive(agent_pid):
            os.kill(agent_pid, signal.SIGKILL)
    assert [e.status for e in entries(ws)] == ["STALE", "FAILED"]
    assert git_owned(root) == owned  # config, info/, hooks, branch, tag, both stashes, index flags
    for key in ("core.hooksPath", "core.fsmonitor"):
        assert subprocess.run(["git", "config", "--get", key], cwd=root).returncode == 1
    assert not (root / ".git" / "hooks" / "post-checkout").exists() and not marker.exists()
    assert git(root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert work_tree(root) == tree
    assert not list((root / ".memento" / "records").glob("T-1.*"))  # the copy is gone with the attempt
    for sha in git(root, "rev-list", f"{start}..HEAD").split():  # only Memento's bookkeeping
        assert all(f.startswith("docs/") for f in git(root, "show", "--name-only", "--format=", sha).split())
    honest_tick_works(ws)
    assert not marker.exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_bytes() if Path(f"/proc/{pid}/stat").exists() else b") Z"
    return stat[stat.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


def test_the_kept_copy_of_git_round_trips_and_a_tampered_one_is_refused(tmp_path):

    ws = hostile_ws(tmp_path, "true")
    (ws.root / ".git" / "info" / "odd\udcff name").write_bytes(b"\x00\xffbytes\n")
    snap = git_state.capture(ws.root)
    again = git_state.from_bytes(git_state.to_bytes(snap), ws.root)
    assert again == snap and again.index == snap.index and again.stash_log == snap.stash_log
    tampered = git_state.to_bytes(snap).replace(b'"hooks/pre-push"', b'"hooks/../../../evil"')
    assert git_state.from_bytes(tampered, ws.root) is None
    assert git_state.from_bytes(b"not json", ws.root) is None


def test_a_link_where_the_git_copy_goes_is_removed_not_written_through(tmp_path):
    from memento_core.attempt_record import read_record, records_dir
    from memento_core.tick.record import recorded_git, save_git, write_record

    ws = hostile_ws(tmp_path, "true")
    task = parse_plan(ws.plan_path).task("T-1")
    write_record(ws, task, 1, git(ws.root, "rev-parse", "HEAD").strip(), set(), 3)
    target = tmp_path / "a-persons-file.txt"
    target.write_text("a person's\n")
    (records_dir(ws) / "T-1.git").symlink_to(target)
    snap = git_state.capture(ws.root)
    save_git(ws, "T-1", snap)
    assert target.read_text() == "a person's\n"
    assert not (records_dir(ws) / "T-1.git").is_symlink()
    assert recorded_git(ws, read_record(ws, "T-1")) == snap


@pytest.mark.parametrize("how", ["gitfile", "folder"])
def test_a_decoy_repository_put_where_git_was_is_moved_aside_and_the_real_one_put_back(tmp_path, how):
    # The agent moves the real .git to .git-real and puts a decoy in its place (a gitfile naming a
    # copy with a hook planted, or the copy itself): every later git command would work in the
    # decoy. The guards see the swap by the git folder's inode before asking git anything, put the
    # real folder back and the decoy aside; the failure is then recorded in the real repository.
    ws = hostile_ws(tmp_path, agent("swaps_git_dir.py", how))
    root = ws.root
    inode = os.stat(root / ".git").st_ino
    head = git(root, "rev-parse", "HEAD").strip()
    outcome = run_tick(root)
    (result,) = outcome.results
    assert not result.passed
    assert "replaced the repository's .git (the real git folder put back from .git-real" in result.reason, result.reason
    assert not (root / "hooked").exists()  # no hook of the decoy's ran
    assert (root / ".git").is_dir() and os.stat(root / ".git").st_ino == inode  # the real one, back
    assert not (root / ".git-real").exists()
    (aside,) = (root / "logs" / "rollback").glob("*-T-1-git")
    assert (aside / "git").exists() and not (aside / "git").is_symlink()  # the decoy (or its gitfile)
    assert (aside / "git" / "hooks" / "pre-commit").exists() if how == "folder" else \
        (aside / "git").read_text() == "gitdir: .decoy\n"
    # The failure is committed in the real repository, on top of what it had; nothing of the agent's.
    assert git(root, "rev-parse", "HEAD~1").strip() == head
    assert git(root, "log", "-1", "--format=%s").startswith("memento: T-1 failed")
    reachable = git(root, "log", "--all", "--format=%H").split()
    assert all("hello.txt" not in git(root, "show", "--name-only", "--format=", sha).split() for sha in reachable)
    assert "feature" in git(root, "branch", "--format=%(refname:short)").split()  # the person's refs, intact


def test_a_repository_moved_out_of_the_project_leaves_no_decoy_for_git_and_nothing_committed(tmp_path):
    # The real .git goes beside the project, where Memento does not look; the decoy stands at
    # .git. Nothing may be committed anywhere: the decoy is moved aside (so no later git command
    # reaches it or its hook), the real repository is left exactly as the agent left it.
    ws = hostile_ws(tmp_path, agent("swaps_git_dir.py", "away"))
    root = ws.root
    head = git(root, "rev-parse", "HEAD").strip()
    refs = git(root, "for-each-ref", "--format=%(objectname) %(refname)")
    tick = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert tick.returncode == 2, tick  # could not run: no repository to record the attempt in
    assert "the repository's .git was moved away during the run" in tick.stderr
    assert not (root / "hooked").exists()
    assert not os.path.lexists(root / ".git")  # no repository for git to find here: no decoy either
    (aside,) = (root / "logs" / "rollback").glob("*-T-1-git")
    assert (aside / "git" / "hooks" / "pre-commit").exists()  # the decoy, kept for the person to read
    decoy_head = git(aside / "git", "rev-parse", "HEAD").strip()
    assert decoy_head == head  # the copy was never committed to
    real = tmp_path / "proj-real-git"
    assert git(tmp_path, f"--git-dir={real}", "rev-parse", "HEAD").strip() == head
    assert git(tmp_path, f"--git-dir={real}", "for-each-ref", "--format=%(objectname) %(refname)") == refs
    assert "the repository's .git was moved away during the run" in (root / "logs" / "cron.log").read_text()


def test_an_agent_that_swaps_git_and_fails_leaves_the_decoy_in_logs_rollback(tmp_path):
    # The agent's own failure skips the guards: the swap is first seen by the rollback, and its
    # decoy goes to logs/rollback/ like the guards' (never a new folder in the work tree).
    ws = hostile_ws(tmp_path, agent("swaps_git_dir.py", "folder", "fail"))
    root = ws.root
    inode = os.stat(root / ".git").st_ino
    (result,) = run_tick(root).results
    assert not result.passed and "exit" in result.reason.lower(), result.reason
    assert os.stat(root / ".git").st_ino == inode and not (root / ".git-real").exists()
    (aside,) = (root / "logs" / "rollback").glob("*-T-1-git")
    assert (aside / "git" / "hooks" / "pre-commit").exists()
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".git")) == [".git", ".gitignore"]
    assert not (root / "hooked").exists()
