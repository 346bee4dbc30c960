"""Confinement (SPEC §13): the bubblewrap sandbox, judged on disk, in git and in /proc.

The hostile agents of tests/agents/ run through the real `command` preset
under `[sandbox] mode = "bwrap"`; every test of a sandboxed run skips, with
the probe's reason, only where bubblewrap cannot run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from memento_core import sandbox
from memento_core.config.lint import unknown_keys
from memento_core.config.load import config_from_dict, load_config
from memento_core.overview import summarize
from memento_core.plan.scan import parse_plan
from memento_core.sandbox import home as private_home
from memento_core.status_log import parse_status
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.scenarios.test_engine import (
    HELLO,
    MISBEHAVIOURS,
    agent,
    entries,
    git,
    make_ws,
    tree_files,
)

BWRAP = sandbox.bwrap_binary()
WHY_NOT = sandbox.probe(BWRAP) if BWRAP else "bubblewrap (bwrap) is not installed"
needs_bwrap = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot run here: {WHY_NOT}")


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


@pytest.fixture
def outside():
    """A folder outside the project and outside /tmp (which the sandbox makes private), removed after."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="memento-outside-", dir=base))
    (path / "somefile").write_text("a person's file outside the project\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def sandboxed_ws(tmp_path: Path, command: str, *, mode: str = "bwrap", extra: str = "", tasks: str = HELLO,
                 **plan_kw) -> Workspace:
    ws = make_ws(tmp_path, command, tasks=tasks, sandbox=mode, **plan_kw)
    if extra:
        with open(ws.config_path, "a", encoding="utf-8") as fh:
            fh.write(extra)
        git(ws.root, "commit", "-qam", "sandbox settings")
    return ws


def snapshot(paths) -> dict[str, bytes | None]:
    return {str(p): (Path(p).read_bytes() if Path(p).is_file() else None) for p in paths}


def marked_processes(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line carries ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            state = Path(f"/proc/{entry.name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def committed_blobs(root: Path) -> set[bytes]:
    """Every blob of every commit reachable from any ref."""
    out = git(root, "rev-list", "--all", "--objects")
    blobs = set()
    for line in out.splitlines():
        sha = line.split()[0]
        if git(root, "cat-file", "-t", sha).strip() == "blob":
            blobs.add(subprocess.run(["git", "cat-file", "blob", sha], cwd=root, capture_output=True).stdout)
    return blobs


# --------------------------------------------------------------------------- resolution and config


def test_mode_none_is_unconfined_with_its_reason():
    found = sandbox.resolve(config_from_dict({"sandbox": {"mode": "none"}}))
    assert found.as_dict() == {"mode": "none", "confined": False,
                               "reason": '[sandbox] mode = "none" in memento.toml'}


def test_auto_without_bwrap_runs_unconfined_and_bwrap_mode_refuses(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    auto = sandbox.resolve(config_from_dict({}))
    assert (auto.mode, auto.confined) == ("none", False) and "not installed" in auto.reason
    strict = sandbox.resolve(config_from_dict({"sandbox": {"mode": "bwrap"}}))
    assert (strict.mode, strict.confined) == ("bwrap", False) and "refuses" in strict.reason


def test_auto_probes_for_real_a_bwrap_that_cannot_run_is_unconfined(monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    # A machine whose files say nothing (the cases they name: tests/core/sandbox/test_reach.py).
    monkeypatch.setenv("MEMENTO_SYSTEM_ROOT", str(tmp_path / "machine"))
    found = sandbox.resolve(config_from_dict({"sandbox": {"mode": "auto"}}))
    assert found.as_dict() == {"mode": "none", "confined": False,
                               "reason": "bubblewrap cannot run here: No permissions to create new namespace",
                               "fix": list(found.fix)}
    assert found.fix and "shows bubblewrap's error" in found.fix[0]
    # what the tests and benches ask before they run anything confined: the same reason
    assert sandbox.probe(str(fake)) == "bubblewrap cannot run here: No permissions to create new namespace"
    broken = tmp_path / "broken" / "bwrap"  # a bwrap the kernel cannot start at all
    broken.parent.mkdir()
    broken.write_bytes(b"\x7fELF\x00not a program")
    broken.chmod(0o755)
    assert sandbox.probe(str(broken)) == f"bubblewrap cannot run here: [Errno 8] Exec format error: '{broken}'"


@needs_bwrap
def test_auto_with_a_working_bwrap_is_confined():
    found = sandbox.resolve(config_from_dict({}))
    assert found.as_dict() == {"mode": "bwrap", "confined": True, "reason": None}


def test_typo_in_the_sandbox_section_is_reported(tmp_path):
    text = '[sandbox]\nmode = "none"\nnetwrok = false\n'
    cfg = config_from_dict(__import__("tomllib").loads(text), text=text)
    assert unknown_keys(cfg, text) == [("[sandbox] netwrok", 3)]


# --------------------------------------------------------------------------- the layout


def test_layout_order_protected_paths_and_skips(tmp_path):
    root = tmp_path / "proj"
    for d in (".git", ".memento", "docs", "logs", "scripts"):
        (root / d).mkdir(parents=True)
    (root / "memento.toml").write_text("")
    (root / ".memento_cleanignore").write_text("")
    (root / "guarded.txt").write_text("g\n")
    for doc in ("docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md", "scripts/tick_worker_system_prompt.md",
                "scripts/review_system_prompt.md"):
        (root / doc).write_text("Memento's\n")
    (root / "docs" / "index.rst").write_text("the project's\n")
    (root / "scripts" / "build.sh").write_text("the project's\n")
    (root / "mine.txt").write_text("a person's\n")
    real = tmp_path / "elsewhere.txt"
    real.write_text("linked\n")
    (root / "link.txt").symlink_to(real)
    home = tmp_path / "home"
    home.mkdir()
    ws = Workspace(root)
    cfg = config_from_dict({"agent": {"preset": "codex"}, "sandbox": {"network": False, "writable": ["~/extra"]}})
    (home / "extra").mkdir()
    whole = sandbox.bwrap_prefix(ws, cfg, binary="bwrap", guard_paths=["guarded.txt", "missing.txt"],
                                 untracked=["mine.txt", "link.txt"], home=str(home))
    # network = false ("none"): proxy.py runs bwrap (it covers /run's sockets), inner.py the command.
    from memento_core.sandbox import network

    assert whole[3].endswith("/sandbox/proxy.py") and whole[-2:] == [network.INSIDE_INNER, "--"]
    argv = whole[whole.index("bwrap"):-5]
    r = os.path.realpath
    assert argv[:10] == ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    private = private_home.project_dir(root, root, str(home))
    assert argv[10:12] == ["--tmpfs", r(private_home.passwd_home())]  # the account's real home, hidden too
    del argv[10:12]
    assert argv[10:16] == ["--bind", str(private / "codex"), r(home), "--bind", str(private / "cache"),
                           r(home / ".cache")]  # the private home (test_home.py)
    del argv[10:16]
    pairs = [(argv[i].removesuffix("-try"), argv[i + 1]) for i in range(len(argv) - 1)
             if argv[i] in ("--bind", "--ro-bind", "--ro-bind-try")]
    assert all(argv[argv.index(flag, 10) + 1] == argv[argv.index(flag, 10) + 2]
               for flag in ("--bind", "--ro-bind", "--ro-bind-try"))
    writable = [p for f, p in pairs if f == "--bind"]
    account = r(private_home.passwd_home()) + "/"  # the tools of PATH there stay readable (test_home.py)
    readonly = [p for f, p in pairs[1:] if f == "--ro-bind" and not p.startswith(account)
                and p not in network.bwrap_args(cfg, root)]
    # docs/ and scripts/ hold Memento's files: bound onto themselves (mount points cannot be renamed).
    assert writable == [r(home / "extra"), r(root), r(root / "docs"), r(root / "scripts"),
                        r(root / ".memento" / "worker")]
    assert (private / "codex" / ".codex").is_dir()  # the preset's folder is made in the private home
    # The link is bound where it leads (never a mount through a link); memory/ and missing.txt do not exist.
    # Memento's files by name, never a project folder: docs/index.rst and scripts/build.sh stay writable.
    assert readonly == [r(root / p) for p in (".git", ".memento", "logs", "docs/MASTER_PLAN.md",
                                              "docs/PROJECT_MAP.md", "memento.toml",
                                              "scripts/tick_worker_system_prompt.md",
                                              "scripts/review_system_prompt.md", ".memento_cleanignore",
                                              "guarded.txt")] + [r(real), r(root / "mine.txt")]
    assert r(root / "docs" / "index.rst") not in argv and r(root / "scripts" / "build.sh") not in argv
    # The work tree comes after the writable extras; the protected paths after the work tree.
    assert argv.index(r(root)) < min(argv.index(p) for p in readonly) < argv.index(r(root / ".memento" / "worker"))
    assert "--unshare-net" in argv and argv[-6:] == ["--setenv", "MEMENTO_SANDBOX", "1", "--chdir", r(root), "--"]
    assert {"--unshare-pid", "--die-with-parent", "--new-session"} <= set(argv)
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert r(root / "memory") not in argv and r(root / "missing.txt") not in argv  # missing: skipped


def test_a_writable_entry_is_the_home_folder_an_absolute_path_or_the_projects(tmp_path):
    root, home = tmp_path / "proj", str(tmp_path / "home")
    assert sandbox.expand("~", root, home) == Path(home)
    assert sandbox.expand("~/extra", root, home) == Path(home) / "extra"
    assert sandbox.expand("/var/cache/tool", root, home) == Path("/var/cache/tool")
    assert sandbox.expand("build", root, home) == root / "build"
    assert sandbox.expand("~other/x", root, home) == root / "~other" / "x"  # no other account's home


def test_a_worker_folder_left_as_a_link_is_replaced_by_a_folder_and_what_it_led_to_is_not_bound(tmp_path):
    root, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    (root / ".memento").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("a person's\n")
    (root / ".memento" / "worker").symlink_to(elsewhere)
    argv = sandbox.bwrap_prefix(Workspace(root), config_from_dict({}), binary="bwrap")
    worker = root / ".memento" / "worker"
    assert worker.is_dir() and not worker.is_symlink()
    assert os.path.realpath(elsewhere) not in argv and (elsewhere / "keep.txt").read_text() == "a person's\n"
    assert argv[argv.index(os.path.realpath(worker)) - 1] == "--bind"


def test_the_folder_of_a_persons_untracked_file_is_pinned_and_a_scratch_folders_is_not(tmp_path):
    """sub/ of a person's sub/.env becomes a mount point (mv sub elsewhere fails); pkg/ of scratch
    (pkg/__pycache__/, which verify rewrites) stays a plain folder of the work tree."""
    root = tmp_path / "proj"
    for folder in ("sub", "pkg/__pycache__"):
        (root / folder).mkdir(parents=True)
    (root / "sub" / ".env").write_text("SECRET=1\n")
    argv = sandbox.bwrap_prefix(Workspace(root), config_from_dict({}), binary="bwrap",
                                untracked=["sub/.env", "pkg/__pycache__/"])
    writable = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "--bind"]
    assert os.path.realpath(root / "sub") in writable and os.path.realpath(root / "pkg") not in writable


def test_a_parallel_workers_sandbox_keeps_the_main_tree_and_the_shared_git_read_only(tmp_path):
    """In bwrap's order (a later mount wins): the main work tree read-only, then the worker's own
    worktree inside it writable, a person's node_modules/ read-only with its .cache/ writable again,
    and the git folder the worktree shares with the project read-only."""
    from memento_core.tick.crew import WorktreeSpace

    main = tmp_path / "proj"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "commit", "-q", "--allow-empty", "-m", "start")
    tree = main / ".memento" / "worktrees" / "T-1"
    git(main, "worktree", "add", "-q", "-b", "memento/T-1", str(tree))
    (tree / "node_modules").mkdir()
    argv = sandbox.bwrap_prefix(WorktreeSpace(tree, main=main), config_from_dict({}), binary="bwrap",
                                untracked=["node_modules/"])
    r = os.path.realpath
    mounts = [(argv[i].removesuffix("-try"), argv[i + 1]) for i in range(len(argv) - 1)
              if argv[i] in ("--bind", "--ro-bind", "--ro-bind-try")]
    at = {pair: k for k, pair in enumerate(mounts)}
    assert at[("--ro-bind", r(main))] < at[("--bind", r(tree))]
    assert at[("--bind", r(tree))] < at[("--ro-bind", r(tree / "node_modules"))] \
        < at[("--bind", r(tree / "node_modules" / ".cache"))]
    assert at[("--bind", r(tree))] < at[("--ro-bind", r(main / ".git"))]


def test_a_persons_link_to_the_work_tree_does_not_make_it_read_only(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "here").symlink_to(root)
    (root / "up").symlink_to(tmp_path)
    argv = sandbox.bwrap_prefix(Workspace(root), config_from_dict({}), binary="bwrap", untracked=["here", "up"])
    ro = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] in ("--ro-bind", "--ro-bind-try")]
    assert os.path.realpath(root) not in ro and os.path.realpath(tmp_path) not in ro


# --------------------------------------------------------------------------- hostile agents in the sandbox


PROTECTED_TRIES = ["docs/TICK_STATUS.md", "+docs/TICK_STATUS.md", ".memento/state.json", "memento.toml",
                   "guarded.txt", "notes-to-self.txt", "scripts/tick_worker_system_prompt.md",
                   ".git/config", ".git/hooks/pre-commit", "logs/cron.log", "memory/knowledge/forged.md",
                   "+docs/MASTER_PLAN.md", "+docs/HUMAN_NOTES.md", ".memento_cleanignore"]


@needs_bwrap
def test_a_persons_file_gone_before_the_sandbox_starts_does_not_fail_the_attempt(tmp_path, monkeypatch):
    """An editor's swap file (ignored: vim's .MASTER_PLAN.md.swp), listed to stay read-only, removed
    by the person between that list and bwrap's start (the editor closed): the agent runs and the
    task passes. Before, bwrap refused to bind what was gone ("Can't find source path", exit 1)
    and the attempt failed as "agent exited with code 1", a retry counted (seen in CI's 100-tick
    race of a person and the dashboard, test_concurrency.py)."""
    ws = sandboxed_ws(tmp_path, "sh -c 'echo done > hello.txt'")
    with (ws.root / ".git" / "info" / "exclude").open("a") as fh:
        fh.write("docs/.*.swp\n")
    swap = ws.root / "docs" / ".MASTER_PLAN.md.swp"
    swap.write_text("an editor's swap file\n")
    real, seen = sandbox.bwrap_prefix, []

    def prefix_then_the_editor_closes(*args, **kwargs):
        argv = real(*args, **kwargs)
        seen.append(argv[argv.index(os.path.realpath(swap)) - 1])  # it was listed, read-only
        swap.unlink()
        return argv

    monkeypatch.setattr(sandbox, "bwrap_prefix", prefix_then_the_editor_closes)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    assert (ws.root / "hello.txt").read_text() == "done\n" and not swap.exists()
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert seen == ["--ro-bind-try"]


@needs_bwrap
def test_hostile_writes_all_fail_and_the_task_still_passes(tmp_path, outside, monkeypatch):
    home = outside / "home"
    (home / ".cache").mkdir(parents=True)  # the one state folder every preset may write (Memento makes it)
    monkeypatch.setenv("HOME", str(home))
    tries = [*PROTECTED_TRIES, str(outside / "somefile"), str(outside / "new.txt"), "~/planted", str(outside)]
    ws = sandboxed_ws(tmp_path, agent("tries_writes.py", *tries))
    (ws.root / "notes-to-self.txt").write_text("a person's untracked file\n")
    (ws.root / "logs").mkdir(exist_ok=True)
    (ws.root / "logs" / "cron.log").write_text("earlier lines\n")
    # Files Memento itself rewrites during the tick (state, logs, documents) are judged by content.
    own = ("docs/", ".memento/state.json", "logs/")
    watched = [ws.root / p for p in PROTECTED_TRIES if not p.startswith("+") and not p.startswith(own)]
    before = snapshot(watched)
    outside_before = sorted((p.relative_to(outside).as_posix(), p.read_bytes() if p.is_file() else None)
                            for p in outside.rglob("*"))
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    log = (ws.root / entry.log_path).read_text()
    assert "WROTE" not in log.replace(f"WROTE {home}/planted\n", ""), log  # ~ is the private home
    assert snapshot(watched) == before
    assert sorted((p.relative_to(outside).as_posix(), p.read_bytes() if p.is_file() else None)
                  for p in outside.rglob("*")) == outside_before
    for path in (ws.status_path, ws.plan_path, ws.notes_path, ws.state_path, ws.cron_log):
        assert b"pwned" not in path.read_bytes(), path
    assert not any(b"pwned" in blob for blob in committed_blobs(ws.root))
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert "hello.txt" in files and files <= {"hello.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md",
                                              "docs/HUMAN_NOTES.md", "docs/CURRENT_STATE.md"}
    assert parse_plan(ws.plan_path).task("T-1").status == "x"


@needs_bwrap
@pytest.mark.parametrize("name", sorted(MISBEHAVIOURS))
def test_the_engine_misbehaviours_are_caught_in_the_sandbox_too(tmp_path, name):
    """test_engine's misbehaviours, confined: the reason may differ (a refused write makes the agent
    fail before a guard sees anything), the outcome may not."""
    command, _ = MISBEHAVIOURS[name]
    ws = sandboxed_ws(tmp_path, command, max_retries=2)
    (ws.root / "notes-to-self.txt").write_text("pre-existing untracked file\n")
    head_before = git(ws.root, "rev-parse", "HEAD").strip()
    code_before = {k: v for k, v in tree_files(ws.root).items() if not k.startswith("docs/")}
    map_before = ws.map_path.read_bytes()
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "FAILED"
    assert {k: v for k, v in tree_files(ws.root).items() if not k.startswith("docs/")} == code_before
    assert ws.map_path.read_bytes() == map_before
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.verify) == (" ", 1, "grep -q done hello.txt")
    for sha in git(ws.root, "rev-list", f"{head_before}..HEAD").split():
        files = git(ws.root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") and f != "docs/PROJECT_MAP.md" for f in files), files


@needs_bwrap
def test_the_read_only_mounts_cannot_be_lifted(tmp_path, outside):
    # Run as root (as CI is), bwrap would keep every capability without --cap-drop ALL.
    paths = ["guarded.txt", "docs/TICK_STATUS.md", "memento.toml", str(outside / "somefile")]
    ws = sandboxed_ws(tmp_path, agent("remounts.py", *paths))
    watched = [ws.root / "guarded.txt", ws.root / "memento.toml", outside / "somefile"]
    before = snapshot(watched)
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    log = (ws.root / entry.log_path).read_text()
    assert not any(word in log for word in ("UNMOUNTED", "REMOUNTED", "WROTE")), log
    assert snapshot(watched) == before and b"pwned" not in ws.status_path.read_bytes()
    assert entry.status == "SUCCESS"


@needs_bwrap
def test_a_tmpdir_under_tmp_is_made_inside_the_private_tmp(tmp_path, monkeypatch):
    """The agent's $TMPDIR (under /tmp, as pytest's and many CI runners' are) exists and is writable
    inside the sandbox, and what it writes there stays in the sandbox's private /tmp."""
    tmpdir = Path(tempfile.mkdtemp(prefix="agent-tmp-"))
    try:
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        code = ("import os; open(os.path.join(os.environ['TMPDIR'], 'scratch'), 'w').write('x'); "
                "open('hello.txt', 'w').write('done')")
        ws = sandboxed_ws(tmp_path, f"{sys.executable} -c {shlex.quote(code)}")
        (result,) = run_tick(ws.root).results
        assert result.passed, result.reason
        assert not (tmpdir / "scratch").exists()
    finally:
        shutil.rmtree(tmpdir)


@needs_bwrap
def test_git_internals_cannot_be_touched_from_the_sandbox(tmp_path):
    ws = sandboxed_ws(tmp_path, agent("tampers_with_git.py"))
    git(ws.root, "tag", "person-tag")
    dot_git = ws.root / ".git"
    before = {p.relative_to(dot_git).as_posix(): p.read_bytes()
              for p in dot_git.rglob("*") if p.is_file() and p.parent.name == "hooks" or p.name in ("config", "exclude")}
    guarded = (ws.root / "guarded.txt").read_bytes()
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    log = (ws.root / entries(ws)[0].log_path).read_text()
    # The index flag lands in the agent's private index (sandbox/private_git.py), never in .git/index.
    assert "DID" not in log.replace("DID assume-unchanged\n", ""), log
    after = {p.relative_to(dot_git).as_posix(): p.read_bytes()
             for p in dot_git.rglob("*") if p.is_file() and p.parent.name == "hooks" or p.name in ("config", "exclude")}
    assert after == before
    assert (ws.root / "guarded.txt").read_bytes() == guarded
    assert git(ws.root, "tag", "--list").split() == ["person-tag"]
    assert not (ws.root / "hooked").exists() and not (ws.root / "fsmonitored").exists()
    assert entries(ws)[0].status == "SUCCESS"
    assert git(ws.root, "ls-files", "-v", "guarded.txt").startswith("H ")  # not assume-unchanged ("h")


@needs_bwrap
def test_a_detached_daemon_does_not_outlive_the_agent(tmp_path):
    marker = f"memento-daemon-{os.getpid()}-{tmp_path.name}"
    ws = sandboxed_ws(tmp_path, agent("leaves_marked_daemon.py", marker))
    guarded = (ws.root / "guarded.txt").read_bytes()
    try:
        outcome = run_tick(ws.root)
        assert outcome.exit_code == 0, outcome.message
        assert marked_processes(marker) == []
    finally:
        for pid in marked_processes(marker):
            os.kill(pid, 9)
    assert (ws.root / "guarded.txt").read_bytes() == guarded
    assert not any(b"swapped by the daemon" in blob for blob in committed_blobs(ws.root))
    assert "left a daemon" in (ws.root / entries(ws)[0].log_path).read_text()


@needs_bwrap
def test_a_background_process_left_in_the_group_is_gone_too(tmp_path):
    # leaves_background.py waits for its child's pid file: inside the project, the worker's scratch.
    pidfile = f".memento/worker/bg-{os.getpid()}.pid"
    both = agent("leaves_background.py", pidfile) + " && " + agent("does_task.py", "hello.txt", "done")
    ws = sandboxed_ws(tmp_path, f"sh -c '{both}'")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert entries(ws)[0].status == "SUCCESS", entries(ws)[0].field("Reason")
    assert "left a server running" in (ws.root / entries(ws)[0].log_path).read_text()
    assert marked_processes(pidfile) == []


@needs_bwrap
def test_a_hung_agent_and_its_sigterm_proof_grandchild_are_gone_at_the_timeout(tmp_path):
    pidfile = f".memento/worker/gc-{os.getpid()}.pid"  # unique: the test looks for it in every /proc cmdline
    ws = sandboxed_ws(tmp_path, agent("hangs_with_grandchild.py", pidfile),
                      tasks=HELLO.replace("  - retries: 0", "  - timeout: 2s\n  - retries: 0"))
    try:
        outcome = run_tick(ws.root)
        assert outcome.results[0].reason.startswith("agent timed out after 2s"), outcome.results[0].reason
        assert marked_processes(pidfile) == []
    finally:
        for pid in marked_processes(pidfile):
            os.kill(pid, 9)
    assert "grandchild started" in (ws.root / entries(ws)[0].log_path).read_text()


@needs_bwrap
def test_a_normal_agent_passes_reports_and_the_next_honest_tick_works(tmp_path):
    tasks = HELLO.replace("hello.txt", "hello.py").replace("grep -q done hello.py", "python3 hello.py") + """
- [ ] `T-2` [MODULE:hello] Write hello twice
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt]
  - retries: 0
"""
    ws = sandboxed_ws(tmp_path, agent("reports.py", "hello.py"), tasks=tasks)
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS" and entry.field("Outputs") == "exported greet() from hello.py"
    assert "[memento] sandbox: bwrap" in (ws.root / entry.log_path).read_text()
    ws.config_path.write_text(ws.config_path.read_text().replace("reports.py", "does_task.py").replace(
        "hello.py", "hello.txt done"))
    git(ws.root, "commit", "-qam", "next agent")
    assert run_tick(ws.root).exit_code == 0
    assert [e.status for e in parse_status(ws.status_path)] == ["SUCCESS", "SUCCESS"]
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x"]


@needs_bwrap
def test_network_false_cuts_the_agent_off(tmp_path):
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    probe = (f"python3 -c \"import socket,pathlib; s=socket.socket(); "
             f"r=s.connect_ex(('127.0.0.1', {port})); pathlib.Path('hello.txt').write_text('done' if r else 'net')\"")
    try:
        cut = sandboxed_ws(tmp_path / "cut", probe, extra="network = false\n")
        assert run_tick(cut.root).exit_code == 0
        assert (cut.root / "hello.txt").read_text() == "done" and entries(cut)[0].status == "SUCCESS"
        on = sandboxed_ws(tmp_path / "on", probe, extra="network = true\n")  # the alias of "all"
        run_tick(on.root)
        assert entries(on)[0].status == "FAILED"  # connected: wrote "net", verify fails
    finally:
        server.close()


@needs_bwrap
def test_a_missing_memory_store_is_made_before_the_agent_so_it_cannot_plant_one(tmp_path):
    plant = "mkdir -p memory/.git; printf \"[core]\\n\\thooksPath = /planted\\n\" >> memory/.git/config"
    ws = sandboxed_ws(tmp_path, f"sh -c '{plant}; echo done > hello.txt'")
    shutil.rmtree(ws.memory_dir)
    assert run_tick(ws.root).exit_code == 0
    assert entries(ws)[0].status == "SUCCESS"
    assert "/planted" not in (ws.memory_dir / ".git" / "config").read_text()
    assert git(ws.memory_dir, "rev-parse", "--show-toplevel").strip() == os.path.realpath(ws.memory_dir)


@needs_bwrap
def test_a_report_that_is_a_link_is_not_read(tmp_path):
    secret = tmp_path / "secret.md"  # under /tmp: hidden from the agent by the private /tmp
    secret.write_text("## Outputs\n- the secret is 4711\n")
    ws = sandboxed_ws(tmp_path, f"sh -c 'ln -s {secret} .memento/worker/tick_result.md && echo done > hello.txt'")
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS" and entry.field("Outputs") is None
    assert "4711" not in ws.status_path.read_text() and not ws.tick_result_path.is_symlink()
    assert "was a symbolic link: removed unread" in (ws.root / entry.log_path).read_text()


def test_mode_bwrap_without_a_working_bwrap_fails_the_attempt_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: None)
    ws = sandboxed_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and not (ws.root / "hello.txt").exists()
    assert entry.field("Reason") == ('sandbox: bubblewrap (bwrap) is not installed; '
                                     '[sandbox] mode = "bwrap" refuses to run the agent unconfined')


# --------------------------------------------------------------------------- memory writes are queued


@needs_bwrap
def test_memory_write_from_the_sandbox_is_queued_and_applied(tmp_path):
    from memento_core.memory import init_store
    from memento_core.memory.store import history

    ws = sandboxed_ws(tmp_path, agent("learns_from_failure.py", "{prompt_file}"))
    init_store(ws)
    run_tick(ws.root)
    (first,) = entries(ws)
    assert first.status == "FAILED"
    log = (ws.root / first.log_path).read_text()
    assert "queued: memory/knowledge/lessons/hello-file.md" in log
    assert "queued memory write" in log and "create memory/knowledge/lessons/hello-file.md" in log
    lesson = ws.memory_dir / "knowledge" / "lessons" / "hello-file.md"
    assert "hello.txt must contain the word done" in lesson.read_text()
    (c,) = [c for c in history(ws) if c.subject == "hello.txt must contain the word done"]
    assert c.source == "T-1"
    assert list((ws.worker_dir / "memory").glob("*.json")) == []
    run_tick(ws.root)
    assert [e.status for e in entries(ws)] == ["FAILED", "SUCCESS"]


# --------------------------------------------------------------------------- visibility


def test_unconfined_is_said_by_doctor_status_and_the_summary(tmp_path):
    from memento_core.doctor import check_workspace

    ws = sandboxed_ws(tmp_path, "true", mode="none")
    found = [f for f in check_workspace(ws) if f.check == "sandbox"]
    assert [str(f) for f in found] == ['[WARNING] sandbox: the agent runs unconfined '
                                       '([sandbox] mode = "none" in memento.toml)']
    doc = summarize(ws, parse_plan(ws.plan_path), [])
    assert doc["sandbox"] == {"mode": "none", "confined": False, "reason": '[sandbox] mode = "none" in memento.toml'}
    out = subprocess.run(["memento", "status"], cwd=ws.root, capture_output=True, text=True).stdout
    assert "[warn] unconfined: the agent runs without a sandbox" in out


@needs_bwrap
def test_confined_is_ok_in_doctor_and_status_is_quiet(tmp_path):
    from memento_core.doctor import check_workspace

    ws = sandboxed_ws(tmp_path, "true", mode="auto")
    (found,) = [f for f in check_workspace(ws) if f.check == "sandbox"]
    assert found.severity == "OK" and "bubblewrap" in found.message
    assert summarize(ws, parse_plan(ws.plan_path), [])["sandbox"] == {"mode": "bwrap", "confined": True,
                                                                      "reason": None}
    out = subprocess.run(["memento", "status"], cwd=ws.root, capture_output=True, text=True).stdout
    assert "unconfined" not in out


def test_tmpdir_is_made_private_under_tmp_bound_elsewhere_and_never_unconfines_home_or_project(tmp_path):
    """CLIs need their $TMPDIR in the sandbox (codex refuses one under /tmp for its helpers)."""
    home, root, other = tmp_path / "home", tmp_path / "proj", Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        home.mkdir()
        root.mkdir()
        r = os.path.realpath
        assert sandbox.temp_dir(root, str(home), str(tmp_path / "t")) == (None, [])  # missing
        (tmp_path / "t").mkdir()
        assert sandbox.temp_dir(root, str(home), str(tmp_path / "t")) == (r(tmp_path / "t"), [])  # in the private /tmp
        assert sandbox.temp_dir(root, str(home), other) == (None, [Path(r(other))])  # bound writable
        for unsafe in ("/", "/tmp", "relative"):
            assert sandbox.temp_dir(root, str(home), unsafe) == (None, [])
        (Path(other) / "home").mkdir()
        (Path(other) / "proj").mkdir()
        for above in ((root, Path(other) / "home"), (Path(other) / "proj", home)):  # a folder above HOME, the project
            assert sandbox.temp_dir(above[0], str(above[1]), other) == (None, [])
        assert sandbox.temp_dir(root, str(Path(other) / "home"), str(Path(other) / "home")) == (None, [])
    finally:
        shutil.rmtree(other, ignore_errors=True)


@needs_bwrap
def test_the_architects_sandbox_writes_only_its_documents_folders_and_the_worker_folder(tmp_path):
    """architect_prefix, run for real: the folder of a writable document (docs/, so an edit by
    rename such as `sed -i` works), a name at the project's root alone, and .memento/worker/
    are writable; the source, another root file and the rest of .memento/ stay read-only."""
    ws = make_ws(tmp_path, "true", sandbox="bwrap")
    root = ws.root
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "NOTES.md").write_text("a person's\n")
    (root / "ROADMAP.md").write_text("the roadmap\n")
    config = load_config(ws.config_path)
    argv = sandbox.architect_prefix(ws, config, binary=BWRAP, writable_docs=["docs/MASTER_PLAN.md", "ROADMAP.md"])
    script = ("for f in docs/MASTER_PLAN.md ROADMAP.md src/app.py NOTES.md; do "
              "  (printf 'edited\\n' > $f.new && mv $f.new $f) 2>/dev/null && echo \"WROTE $f\"; done; "
              "printf 'x' > ROADMAP.md 2>/dev/null && echo 'WROTE ROADMAP.md in place'; "
              "printf 'x' > .memento/worker/out 2>/dev/null && echo 'WROTE worker'; "
              "printf 'x' > .memento/elsewhere 2>/dev/null && echo 'WROTE .memento'")
    out = subprocess.run([*argv, "/bin/sh", "-c", script], capture_output=True, text=True, timeout=60)
    said = set(out.stdout.splitlines())
    assert said == {"WROTE docs/MASTER_PLAN.md", "WROTE ROADMAP.md in place", "WROTE worker"}, (said, out.stderr)
    assert ws.plan_path.read_text() == "edited\n" and (root / ".memento" / "worker" / "out").read_text() == "x"
    assert (root / "src" / "app.py").read_text() == "x = 1\n" and (root / "NOTES.md").read_text() == "a person's\n"
    assert not (root / ".memento" / "elsewhere").exists()


@needs_bwrap
def test_a_writable_entry_inside_the_project_is_bound_again_after_the_work_tree_covers_it(tmp_path):
    """`[sandbox] writable = ["docs"]` is bound before the work tree, whose mount covers it: the
    architect's documents folder must still be writable after its read-only work tree, and the
    worker's docs/ still a mount point of its own after its work tree (it cannot be renamed)."""
    ws = make_ws(tmp_path, "true", sandbox="bwrap")
    ws.config_path.write_text(ws.config_path.read_text().replace('mode = "bwrap"', 'mode = "bwrap"\nwritable = ["docs"]'))
    config = load_config(ws.config_path)
    argv = sandbox.architect_prefix(ws, config, binary=BWRAP, writable_docs=["docs/MASTER_PLAN.md"])
    script = "printf 'edited\\n' > docs/MASTER_PLAN.md.new && mv docs/MASTER_PLAN.md.new docs/MASTER_PLAN.md"
    out = subprocess.run([*argv, "/bin/sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and ws.plan_path.read_text() == "edited\n", out.stderr
    argv = sandbox.bwrap_prefix(ws, config, binary=BWRAP)
    out = subprocess.run([*argv, "/bin/sh", "-c", "mv docs docs2"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and ws.plan_path.read_text() == "edited\n" and not (ws.root / "docs2").exists()


@needs_bwrap
def test_the_architects_sandbox_keeps_its_read_only_documents_a_nested_folder_and_no_capabilities(tmp_path):
    """architect_prefix for real, through a link to the project: a nested document makes its own
    folder writable (not the one above), a read-only document stays so inside a writable folder,
    the command starts where the project really is, with no capabilities, in its own PID namespace."""
    ws = make_ws(tmp_path, "true", sandbox="bwrap")
    root = ws.root
    (root / "docs" / "plans").mkdir()
    (root / "docs" / "plans" / "PLAN.md").write_text("nested\n")
    (root / "docs" / "plans" / "NOTES.md").write_text("the drafter's notes\n")
    link = tmp_path / "code"
    link.symlink_to(root)
    argv = sandbox.architect_prefix(Workspace(link), load_config(ws.config_path), binary=BWRAP,
                                    writable_docs=["docs/plans/PLAN.md"], readonly_docs=["docs/plans/NOTES.md"])
    script = ("for f in docs/plans/PLAN.md docs/plans/NOTES.md; do printf 'x' >> $f 2>/dev/null && echo \"WROTE $f\"; done; "
              "printf 'x' > docs/plans/../other.md 2>/dev/null && echo 'WROTE docs/other.md'; "
              "echo \"WHERE $(pwd -P)\"; grep -q 'CapEff:.0000000000000000' /proc/self/status && echo NOCAPS; "
              "[ \"$(ls /proc | grep -c '^[0-9]')\" -lt 10 ] && echo OWNPIDS")
    out = subprocess.run([*argv, "/bin/sh", "-c", script], capture_output=True, text=True, timeout=60)
    said = set(out.stdout.splitlines())
    assert said == {"WROTE docs/plans/PLAN.md", f"WHERE {os.path.realpath(root)}", "NOCAPS",
                    "OWNPIDS"}, (said, out.stderr)


def test_the_status_archive_folder_is_memento_s_and_an_empty_or_dot_one_is_not_the_whole_tree(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    assert root / "docs" / "archive" in sandbox.own_paths(root, "docs/archive/")
    for nothing in ("", ".", "/", None):
        paths = sandbox.own_paths(root, nothing)
        assert root not in paths and root / "." not in paths, nothing


def test_a_missing_nested_cache_folder_is_made_as_a_tool_would_make_it(tmp_path):
    root = tmp_path / "proj"
    (root / "node_modules").mkdir(parents=True)
    umask = os.umask(0o022)
    try:
        made = sandbox.scratch_folders(root, ["node_modules/"])
    finally:
        os.umask(umask)
    assert made == [root / "node_modules" / ".cache", root / "node_modules" / ".vite"]
    assert all(folder.stat().st_mode & 0o7777 == 0o755 for folder in made)
    assert sandbox.scratch_folders(root, ["node_modules/"]) == made  # there already: kept as they are


def test_a_memory_write_is_queued_only_where_the_sandbox_said_so(tmp_path, monkeypatch):
    """The in-process half of the test above (whose `memento` runs inside bwrap, from the installed
    package): MEMENTO_SANDBOX=1, set by the sandbox alone, is what makes a write a queued one."""
    from memento_core.memory.queue import must_queue

    ws = Workspace(tmp_path)
    monkeypatch.delenv(sandbox.SANDBOX_ENV, raising=False)
    assert not sandbox.inside() and not must_queue(ws)
    for value in ("0", "", "yes"):
        monkeypatch.setenv(sandbox.SANDBOX_ENV, value)
        assert not sandbox.inside(), value
    monkeypatch.setenv(sandbox.SANDBOX_ENV, "1")
    assert sandbox.inside() is True and must_queue(ws)  # no memory/ here yet: the tick makes it


def test_the_folders_pinned_as_mount_points_are_real_folders_inside_the_tree_only(tmp_path):
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    (root / "a" / "b").mkdir(parents=True)
    (root / "file").write_text("")
    outside = tmp_path / "outside" / "sub"
    outside.mkdir(parents=True)
    (root / "lnk").symlink_to(tmp_path / "outside")
    paths = [root / "docs" / "MASTER_PLAN.md", root / "a" / "b" / "c.txt", root / "lnk" / "sub" / "x",
             root / "file" / "x", tmp_path / "elsewhere" / "y", root / "top.txt", root / "docs"]
    assert sandbox.pinned_folders(root, paths) == [root / "a", root / "a" / "b"]  # docs/ is bound already
    assert sandbox.pinned_folders(root, [tmp_path / "elsewhere" / "y", root / "a" / "c.txt"]) == [root / "a"]
    linked_root = tmp_path / "proj-link"
    linked_root.symlink_to(root)
    assert sandbox.pinned_folders(linked_root, [linked_root / "a" / "b" / "c.txt"]) == [
        linked_root / "a", linked_root / "a" / "b"]


@needs_bwrap
def test_a_project_reached_through_a_link_is_worked_in_where_it_really_is(tmp_path):
    """~/code a link to a data disk: the agent starts in the project, not at a path that the
    sandbox does not have, and the task passes."""
    ws = sandboxed_ws(tmp_path, "sh -c 'pwd -P > where.txt; echo done > hello.txt'",
                      tasks=HELLO.replace("context_files: [hello.txt]", "context_files: [hello.txt, where.txt]"))
    link = tmp_path / "code"
    link.symlink_to(ws.root)
    outcome = run_tick(link)
    assert [r.passed for r in outcome.results] == [True], (ws.root / entries(ws)[-1].log_path).read_text()
    assert (ws.root / "where.txt").read_text().strip() == os.path.realpath(ws.root)
    assert git(ws.root, "log", "-1", "--format=%s").startswith("memento: complete T-1")


@needs_bwrap
def test_a_workspace_named_through_a_link_starts_its_command_where_the_project_really_is(tmp_path):
    """bwrap_prefix given the link's path itself (not resolved by Workspace.find): the sandbox has
    no such path (its /tmp is private), so the command starts at the real one."""
    ws = sandboxed_ws(tmp_path, "true")
    link = tmp_path / "code"
    link.symlink_to(ws.root)
    config = load_config(ws.root / "memento.toml")
    argv = sandbox.bwrap_prefix(Workspace(link), config, binary=sandbox.resolve(config).binary)
    done = subprocess.run([*argv, "/bin/sh", "-c", "pwd -P"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == os.path.realpath(ws.root)
