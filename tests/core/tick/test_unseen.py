"""Red team (SPEC §13 "Either way" and "Without a sandbox"): what git itself does not show.

A repository the agent nests below the work tree (a `.git` folder or `gitdir:` file, anywhere,
in a tracked, untracked or ignored folder), a file it plants in `.git/`, a path too deep for git:
each is a guard failure naming the path, removed by the rollback (saved under logs/rollback/),
never committed; the proof is on disk (a person's `git status` there afterwards runs nothing of
the agent's: its command would write a marker outside the project) and the next tick works.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from memento_core.git import state as git_state
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.modes import MODES
from tests.core.scenarios.test_engine import agent, entries, git, make_ws
from tests.core.scenarios.test_redteam_git import (
    _tick_killed_while_the_agent_runs,
    git_owned,
    honest_tick_works,
    hostile_ws,
    work_tree,
)


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


# ---------------------------------------------------------------- files planted in .git/


@pytest.mark.parametrize("mode", MODES)
def test_files_planted_in_the_git_folder_are_removed_saved_and_fail_the_task(tmp_path, mode):
    marker = tmp_path / "planted-ran.txt"
    ws = hostile_ws(tmp_path, agent("plants_in_git_dir.py", str(marker)), sandbox=mode)
    root = ws.root
    (root / ".git" / "persons-tool.json").write_text('{"a person\'s": "own file"}\n')  # not git's: kept
    owned, tree = git_owned(root), work_tree(root)
    mine = (root / ".git" / "persons-tool.json").read_bytes()
    outcome = run_tick(root)
    (result,) = outcome.results
    planted = (".git/fsmonitor-watch", ".git/agent/run.sh", ".git/worktrees/helper.sh")
    if mode == "none":
        assert not result.passed
        for rel in planted:
            assert rel in result.reason, result.reason
        saved = [p for p in (root / "logs" / "rollback").rglob("*") if p.name in ("fsmonitor-watch", "run.sh")]
        assert len(saved) == 2 and all(not os.access(p, os.X_OK) for p in saved), saved
    for rel in planted:
        assert not os.path.lexists(root / rel), rel
    assert not (root / ".git" / "agent").exists()
    assert (root / ".git" / "persons-tool.json").read_bytes() == mine
    now, found = work_tree(root), git_owned(root)
    if result.passed:  # confined: .git/ was read-only, nothing was planted, the task is done
        assert now.pop("hello.txt") == b"done\n"
        assert found.pop("flags").replace(b"H hello.txt\n", b"") == owned.pop("flags")
    assert found == owned
    assert now == tree
    if not result.passed:
        honest_tick_works(ws)
    assert not marker.exists()


def test_what_git_and_memento_write_in_the_git_folder_is_not_a_plant(tmp_path):
    """Commits, a merge's and a rebase's leftovers, gc, a stash, a worktree made and removed (a
    parallel worker's), a submodule's fetch: none of it is the agent's."""

    ws = hostile_ws(tmp_path, "true")
    root = ws.root
    before = git_state.capture(root)
    (root / "hello.txt").write_text("one\n")
    git(root, "add", "hello.txt")
    git(root, "commit", "-qm", "one")  # COMMIT_EDITMSG, logs/, objects/
    git(root, "reset", "-q", "--hard", "HEAD~1")  # ORIG_HEAD
    git(root, "worktree", "add", "-q", str(root / ".memento" / "worktrees" / "T-9"), "-b", "memento/T-9")
    wt = root / ".memento" / "worktrees" / "T-9"
    (wt / "x.txt").write_text("x\n")
    git(wt, "add", "x.txt")
    git(wt, "commit", "-qm", "x")
    git(root, "gc", "-q")
    git(root, "pack-refs", "--all")
    (root / ".git" / "index.lock").write_text("")  # a git command killed mid-way (put back: removed)
    now = git_state.capture(root)
    assert now.files == before.files  # (the refs are compared on their own: a worker's branch is Memento's)
    assert git_state.from_bytes(git_state.to_bytes(now), root) == now
    git(root, "worktree", "remove", "--force", str(wt))
    (root / ".git" / "index.lock").unlink()
    assert git_state.capture(root).files == before.files


# ---------------------------------------------------------------- repositories nested below the work tree

NESTING = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt, src/**, build/**, third_party/**]
  - retries: 0
"""


def nesting_ws(tmp_path: Path, command: str, sandbox: str) -> Workspace:
    """A project with src/ tracked, build/ and third_party/ ignored, and a person's own nested
    clone in third_party/lib/ (its config runs nothing: it must stay as it is)."""
    ws = make_ws(tmp_path, command, tasks=NESTING, sandbox=sandbox)
    root = ws.root
    (root / "src").mkdir()
    (root / "src" / "mod.py").write_text("VALUE = 1\n")
    (root / ".gitignore").write_text((root / ".gitignore").read_text() + "build/\nthird_party/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "src")
    lib = root / "third_party" / "lib"
    lib.mkdir(parents=True)
    git(lib, "init", "-q")
    (lib / "lib.py").write_text("LIB = 1\n")
    git(lib, "add", "lib.py")
    git(lib, "commit", "-qm", "a person's clone")
    return ws


def repositories_below(root: Path) -> list[str]:
    """Every `.git` below the work tree (links not followed), but the project's and memory/'s."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        found += [f"{rel}/.git".lstrip("./") for name in (*dirs, *files) if name == ".git"]
        dirs[:] = [d for d in dirs if d != ".git"]
    return sorted(p for p in found if p not in (".git", "memory/.git", "git"))


def gitlinks_since(root: Path, start: str) -> list[str]:
    """The gitlinks (mode 160000) any commit after ``start`` added or changed."""
    out = git(root, "log", "--format=", "--raw", "--no-abbrev", f"{start}..HEAD")
    return [ln for ln in out.splitlines() if " 160000 " in ln]


def aged(monkeypatch, ws: Workspace) -> None:
    """The project's folders older than the snapshot by more than unseen.RACY_NS (0 here, a
    clock tick later): the walks after the agent take every unchanged folder from the snapshot."""
    import time

    from memento_core.tick import unseen

    monkeypatch.setattr(unseen, "RACY_NS", 0)
    time.sleep(0.05)
    assert len(unseen.look(ws.root).marks) > 10


@pytest.mark.parametrize("age", ["fresh", "aged"])
@pytest.mark.parametrize("how", ["folder", "tracked", "gitfile", "ignored"])
@pytest.mark.parametrize("mode", MODES)
def test_a_repository_the_agent_nests_is_refused_removed_and_runs_nothing_later(tmp_path, how, mode, age,
                                                                                monkeypatch):
    marker = tmp_path / "fsmonitor-ran.txt"
    ws = nesting_ws(tmp_path, agent("nests_a_repository.py", how, str(marker)), mode)
    root = ws.root
    if age == "aged":
        aged(monkeypatch, ws)
    start = git(root, "rev-parse", "HEAD").strip()
    lib_config = (root / "third_party" / "lib" / ".git" / "config").read_bytes()
    outcome = run_tick(root)
    (result,) = outcome.results
    where = {"folder": "src/vendor/.git", "tracked": "src/.git", "gitfile": "src/lib/.git",
             "ignored": "build/out/.git"}[how]
    assert not result.passed
    assert f"left git repositories of its own below the work tree: {'src/.cache-repo, ' * (how == 'gitfile')}" \
           f"{where} (removed" in result.reason, result.reason
    assert repositories_below(root) == ["third_party/lib/.git"]  # the person's clone, and nothing else
    assert (root / "third_party" / "lib" / ".git" / "config").read_bytes() == lib_config
    # A person's git command in each folder the agent used runs nothing of the agent's.
    for folder in ("src/vendor", "src", "src/lib", "build/out", "src/.cache-repo"):
        if (root / folder).is_dir():
            subprocess.run(["git", "status"], cwd=root / folder, capture_output=True, timeout=30)
            subprocess.run(["git", "log", "-1"], cwd=root / folder, capture_output=True, timeout=30)
    assert not marker.exists()
    assert not (root / "src" / "vendored.py").exists() and not (root / "src" / "vendor").exists()
    assert (root / "src" / "mod.py").read_text() == "VALUE = 1\n"
    (saved,) = (root / "logs" / "rollback").glob("*-T-1-unseen/removed.tar")
    with tarfile.open(saved) as tar:  # saved, inert: no git reads a repository inside a tar
        config = next(m for m in tar.getmembers() if m.name.endswith("config") and ".git" in m.name
                      or m.name == "src/.cache-repo/config")
        assert b"fsmonitor" in tar.extractfile(config).read()
    honest_tick_works(ws)
    assert gitlinks_since(root, start) == []
    assert repositories_below(root) == ["third_party/lib/.git"]
    assert not marker.exists()


def test_a_persons_nested_repository_the_agent_commits_is_never_committed_as_a_gitlink(tmp_path):
    """Unconfined, `git add third_party/lib` and a commit of its own make a person's clone a gitlink:
    the commit is folded back (a failure) and no gitlink reaches any commit; the clone stays."""
    ws = nesting_ws(tmp_path, "true", "none")
    root = ws.root
    (root / ".gitignore").write_text((root / ".gitignore").read_text().replace("third_party/\n", ""))
    git(root, "commit", "-qam", "third_party/ no longer ignored")
    cmd = (f"{sys.executable} -c \"import subprocess, pathlib; pathlib.Path('hello.txt').write_text('done\\\\n'); "
           "subprocess.run(['git', 'add', 'third_party/lib', 'hello.txt'], check=True); "
           "subprocess.run(['git', 'commit', '-qm', 'vendored'], check=True)\"")
    text = ws.config_path.read_text().splitlines(keepends=True)
    ws.config_path.write_text("".join(ln if not ln.startswith("command =") else f'command = """{cmd}"""\n'
                                      for ln in text))
    git(root, "commit", "-qm", "the agent", "--", "memento.toml")
    start = git(root, "rev-parse", "HEAD").strip()
    outcome = run_tick(root)
    (result,) = outcome.results
    assert not result.passed
    assert "made 1 commit(s) of its own" in result.reason, result.reason
    assert gitlinks_since(root, start) == []
    assert git(root, "ls-files", "--stage", "third_party") == ""  # not staged either
    assert (root / "third_party" / "lib" / "lib.py").read_text() == "LIB = 1\n"
    assert repositories_below(root) == ["third_party/lib/.git"]


def test_a_folder_in_the_change_is_a_gitlink_only_where_the_task_names_it(tmp_path):
    from memento_core.git.changes import FileChange
    from memento_core.tick.unseen import gitlink_reason

    (tmp_path / "lib").mkdir()
    (tmp_path / "a.py").write_text("")
    touched = [FileChange("lib", 1, 0, "added"), FileChange("a.py", 0, 0, "created")]
    assert gitlink_reason(tmp_path, touched, ["lib/**", "a.py"]) == (
        "the agent would commit nested repositories as gitlinks the task does not name: lib (a task adds a "
        "submodule only where its context_files name that exact path)")
    assert gitlink_reason(tmp_path, touched, ["lib", "a.py"]) == ""


def test_a_repository_nested_before_the_tick_was_killed_is_removed_by_the_recovery(tmp_path):
    """kill -9 of the tick while its agent waits, a repository nested: the next tick's recovery
    removes it by the tick's own list of what was there at the snapshot (the person's clone stays)."""
    marker = tmp_path / "fsmonitor-ran.txt"
    ws = nesting_ws(tmp_path, agent("nests_a_repository.py", "tracked", str(marker), "wait"), "none")
    root = ws.root
    planted = _tick_killed_while_the_agent_runs(root)
    try:
        assert (root / "src" / ".git").is_dir()
        assert (root / ".memento" / "records" / "T-1.unseen").is_file()
        recovered = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(root)],
                                   capture_output=True, text=True, timeout=120)
        assert recovered.returncode in (0, 1) and "Traceback" not in recovered.stderr, recovered.stderr
    finally:
        _kill(int(planted.split()[1]))
    stale = [e for e in entries(ws) if e.status == "STALE"]
    assert stale and "src/.git" in stale[0].field("Rollback"), stale
    assert repositories_below(root) == ["third_party/lib/.git"]
    subprocess.run(["git", "status"], cwd=root / "src", capture_output=True, timeout=30)
    assert not marker.exists()
    assert not (root / ".memento" / "records" / "T-1.unseen").exists()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- paths too deep for git


def longest_path(root: Path) -> int:
    """The longest path below ``root`` (from its top, in bytes), walked through folder descriptors
    (a full path past 4,096 bytes is refused by the system, so nothing else can see that far)."""
    longest = 0
    stack = [(os.open(root, os.O_RDONLY | os.O_DIRECTORY), 0)]
    try:
        while stack:
            fd, length = stack.pop()
            try:
                with os.scandir(fd) as it:
                    for item in it:
                        here = length + 1 + len(os.fsencode(item.name))
                        longest = max(longest, here)
                        if item.is_dir(follow_symlinks=False) and item.name != ".git":
                            stack.append((os.open(item.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                                  dir_fd=fd), here))
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)
    return longest


@pytest.mark.parametrize("how", ["long", pytest.param("many", marks=pytest.mark.slow),  # many: 2,468 rmdirs
                                 "long-aged"])
@pytest.mark.parametrize("mode", MODES)
def test_a_path_too_deep_for_git_fails_the_attempt_and_is_removed(tmp_path, how, mode, monkeypatch):
    how, _, age = how.partition("-")
    ws = nesting_ws(tmp_path, agent("goes_too_deep.py", how), mode)
    root = ws.root
    if age:
        aged(monkeypatch, ws)
    assert longest_path(root) < 1000
    outcome = run_tick(root)
    (result,) = outcome.results
    assert not result.passed
    first = {"long": "src/deep/" + "d" * 31, "many": "src/a/a/a/a/a/a/a/a/a/a/a/a/a"}[how]
    assert f"left paths too long for git or any check to see (over 4096 bytes from /): {first}" in result.reason, \
        result.reason
    assert "characters)" in result.reason  # the path is named shortened, with its length
    assert longest_path(root) < 1000  # nothing of it left, at any depth
    assert not os.path.lexists(root / "src" / ("deep" if how == "long" else "a"))
    (saved,) = (root / "logs" / "rollback").glob("*-T-1-unseen/removed.tar")
    with tarfile.open(saved) as tar:
        (payload,) = [m for m in tar.getmembers() if m.name.endswith("/payload.py")]
        assert len(payload.name) >= 4936 - 20 and b"run by the agent" in tar.extractfile(payload).read()
    honest_tick_works(ws)
    assert longest_path(root) < 1000


def test_a_persons_own_deep_path_stays(tmp_path):
    """A path too long for git that was there before the task (a person's) is theirs: kept."""
    ws = nesting_ws(tmp_path, agent("does_task.py", "hello.txt", "done"), "none")
    root = ws.root
    fd = os.open(root / "third_party", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(25):
        os.mkdir("p" * 200, dir_fd=fd)
        child = os.open("p" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    before = longest_path(root)
    outcome = run_tick(root)
    assert [r.passed for r in outcome.results] == [True], outcome.results
    assert longest_path(root) == before


def test_a_tree_deeper_than_any_limit_is_removed_with_a_few_descriptors(tmp_path):
    """1,500 nested folders (deeper than Python's recursion, past PATH_MAX) go with at most a
    handful of descriptors open: the soft limit is set just above what is open now."""
    import resource

    from memento_core.tick.unseen import remove

    base = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else tmp_path))  # rmdir is fast there
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(1500):
            os.mkdir("a", dir_fd=fd)
            child = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.symlink("/etc", "link", dir_fd=fd)  # removed as a link, never followed
        os.close(fd)
        assert longest_path(base) > 3000
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
        try:
            remove(base, "a")
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert os.listdir(base) == [] and os.path.isdir("/etc")
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------- the walks after the snapshot


def _tree(root: Path) -> None:
    """Folders a few deep, a person's nested clone, a bare repository, an ignored cache."""
    for rel in ("src/pkg/sub", "src/other", "docs/a/b/c", "vendor/clone", ".venv/lib/site/pkg", "empty"):
        (root / rel).mkdir(parents=True)
        (root / rel / "f.txt").write_text("x\n")
    (root / "vendor" / "clone" / ".git").mkdir()
    for part in ("objects", "refs"):
        (root / "bare.git" / part).mkdir(parents=True)
    (root / "bare.git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "old").mkdir()
    _deep(root, "old")  # a person's own path too long for git, in a folder nothing changes


def _deep(root: Path, folder: str) -> None:
    """A path too long for any system call below ``folder``, made a folder at a time."""
    fd = os.open(root / folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(4096 // 200 + 2):
            os.mkdir("d" * 200, dir_fd=fd)
            child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


CHANGES = {
    "a .git folder deep in an unchanged tree": lambda r: (r / "src/pkg/sub/.git").mkdir(),
    "a gitdir: file": lambda r: (r / "docs/a/b/c/.git").write_text("gitdir: /elsewhere\n"),
    "a folder made a bare repository": lambda r: [(r / "src/other" / p).mkdir() for p in ("objects", "refs")]
    and (r / "src/other/HEAD").write_text("x\n"),
    "a bare repository that is one no more": lambda r: (r / "bare.git/refs").rmdir(),
    "a new tree holding a repository": lambda r: (r / "empty/new/deeper/.git").mkdir(parents=True),
    "a tree renamed in from outside": lambda r: (r.parent / "outside/x/.git").mkdir(parents=True)
    or os.rename(r.parent / "outside", r / ".venv/lib/outside"),
    "a folder renamed": lambda r: os.rename(r / "docs/a", r / "docs/z"),
    "a folder removed": lambda r: shutil.rmtree(r / "src/pkg"),
    "a folder replaced by a link": lambda r: shutil.rmtree(r / "docs/a/b/c") or os.symlink("/", r / "docs/a/b/c"),
    "the person's clone gone": lambda r: shutil.rmtree(r / "vendor/clone/.git"),
    "a path too deep": lambda r: _deep(r, "src/pkg/sub"),
    "a file only": lambda r: (r / "src/pkg/sub/g.txt").write_text("y\n"),
    "times set back on a changed folder": lambda r: (r / "src/pkg/sub/.git").mkdir()
    or os.utime(r / "src/pkg/sub", ns=(0, 0)),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_walk_since_the_snapshot_finds_what_a_whole_walk_finds(tmp_path, monkeypatch, change):
    """Differential: after each change an agent could make, the walk that takes the unchanged
    folders from the snapshot answers what a whole walk answers, listing only what changed."""
    import time

    from memento_core.tick import unseen

    root = tmp_path / "p"
    root.mkdir()
    _tree(root)
    monkeypatch.setattr(unseen, "RACY_NS", 0)
    time.sleep(0.05)  # a clock tick at least: every folder's ctime is older than the snapshot
    snap = unseen.look(root)
    assert snap.repos == {"vendor/clone/.git", "bare.git"} and set(snap.marks) >= {b"", b"src/pkg/sub"}
    assert "bare.git/objects" not in snap.folders  # a repository's insides are not walked
    assert [p.count("/") for p in snap.deep] == [max(f.count("/") for f in snap.folders if f.startswith("old/")) + 1]
    CHANGES[change](root)
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(unseen.os, "scandir", lambda path: listed.append(path) or real_scandir(path))
    since = unseen.look(root, snap)
    monkeypatch.setattr(unseen.os, "scandir", real_scandir)
    whole = unseen.look(root)
    assert (since.repos, since.deep, since.folders) == (whole.repos, whole.deep, whole.folders)
    top = os.fsencode(root)

    def changed(rel: bytes) -> bool:
        st = os.lstat(top + b"/" + rel if rel else top)
        return rel not in snap.marks or snap.marks[rel][0] != (st.st_dev, st.st_ino, st.st_ctime_ns)

    expected = {rel for rel in [b"", *map(os.fsencode, whole.folders)] if changed(rel)}
    assert {p[len(top) + 1:] for p in listed} == expected and 0 < len(expected) < len(whole.folders)


def test_a_folder_changed_just_before_the_snapshot_or_off_a_local_file_system_is_listed_every_time(
        tmp_path, monkeypatch):
    """A change time within RACY_NS of the walk may share its clock tick with a later change; a
    network file system may answer a stat from a cache: neither is taken from the snapshot."""
    from memento_core.tick import unseen

    root = tmp_path / "p"
    root.mkdir()
    _tree(root)
    assert unseen.look(root).marks == {}  # made just now: every folder within two seconds
    assert unseen._local(b"/proc") == 0 and unseen._local(os.fsencode(root)) != 0
    monkeypatch.setattr(unseen, "RACY_NS", 0)
    monkeypatch.setattr(unseen, "LOCAL_FILE_SYSTEMS", frozenset())
    assert unseen.look(root).marks == {}
    monkeypatch.undo()
    monkeypatch.setattr(unseen, "RACY_NS", 0)
    assert unseen.look(root).marks


def test_a_folder_that_cannot_be_listed_adds_nothing_of_its_own(tmp_path, monkeypatch):
    """Its entries unknown, none are made up from another folder's: the rest is as a whole walk has it."""
    from memento_core.tick import unseen

    root = tmp_path / "p"
    root.mkdir()
    _tree(root)
    whole = unseen.look(root)
    real_scandir = os.scandir
    refused = os.fsencode(root / "src" / "pkg")

    def scandir(path):
        if path == refused:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(unseen.os, "scandir", scandir)
    for since in (None, whole):
        seen = unseen.look(root, since)
        assert seen.folders == whole.folders - {"src/pkg/sub"} and seen.repos == whole.repos
        assert seen.deep == whole.deep


def test_a_path_is_too_deep_from_exactly_path_max_bytes_its_nul_included(tmp_path):
    """The last byte a system call takes: a full path of PATH_MAX - 1 bytes is walked, one of
    PATH_MAX is named too deep (made here through folder descriptors)."""
    from memento_core.tick import unseen

    root = tmp_path / "p"
    root.mkdir()
    top = len(os.fsencode(os.path.abspath(root)))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    rel = ""
    try:
        while unseen.PATH_MAX - (top + 1 + len(rel) + 1) > 250:  # until a name can fill the rest
            name = "d" * min(200, unseen.PATH_MAX - (top + 1 + len(rel) + 1) - 150)
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            rel = f"{rel}/{name}".lstrip("/")
        room = unseen.PATH_MAX - (top + 1 + len(rel) + 1)  # bytes left for a name in this folder
        fits, too_long = "f" * (room - 1), "g" * room
        for name in (fits, too_long):
            os.close(os.open(name, os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    finally:
        os.close(fd)
    assert top + 1 + len(f"{rel}/{fits}") == unseen.PATH_MAX - 1
    seen = unseen.look(root)
    assert seen.deep == {f"{rel}/{too_long}"} and rel in seen.folders


def test_mementos_memory_repository_made_during_the_attempt_is_not_the_agents(tmp_path):
    """memory/.git is Memento's, made whenever it needs it: never removed as one the agent nested."""
    from memento_core.tick import unseen

    root = tmp_path / "p"
    (root / "memory").mkdir(parents=True)
    before = unseen.look(root)
    subprocess.run(["git", "init", "-q", str(root / "memory")], check=True)
    (root / "src" / ".git").mkdir(parents=True)
    done = unseen.settle(root, before, root / "logs" / "rollback" / "x")
    assert done.repos == ("src/.git",)
    assert (root / "memory" / ".git" / "HEAD").is_file() and not (root / "src" / ".git").exists()


def test_the_file_system_a_path_is_on_is_read_as_the_kernel_lists_its_mounts():
    """mount_type on mountinfo lines: the longest mount point that is a whole-folder prefix, the
    last of two on one point (mounted over the first), octal escapes in a point, odd lines skipped."""
    from memento_core.tick.unseen import mount_type

    info = b"\n".join([
        b"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw",
        b"30 22 0:40 / /home rw shared:2 - nfs server:/home rw",
        b"31 22 0:41 / /home2 rw shared:3 - tmpfs tmpfs rw",
        b"32 22 0:42 / /mnt/my\\040disk rw shared:4 - xfs /dev/vdb rw",
        b"33 22 0:43 / /srv rw shared:5 - ext4 /dev/vdc rw",
        b"34 33 0:44 / /srv rw shared:6 - cifs //host/share rw",
        b"35 22 0:45 / /odd rw shared:7 - ",
        b"36 22 0:46 / /short - btrfs /dev/vdd rw",
        b"37 22 0:47 / /six rw - xfs /dev/vde rw",
        b"not a mount line at all",
    ])
    assert mount_type(b"/work/p", info) == "ext4"
    assert mount_type(b"/home/me/p", info) == "nfs" and mount_type(b"/home", info) == "nfs"
    assert mount_type(b"/home2/p", info) == "tmpfs"  # /home is not a prefix of /home2
    assert mount_type(b"/mnt/my disk/p", info) == "xfs"
    assert mount_type(b"/srv/p", info) == "cifs"  # mounted over the ext4 one
    assert mount_type(b"/odd/p", info) == "ext4"  # a line that names no type: the one below it
    assert mount_type(b"/short/p", info) == "ext4"  # no options before the separator: not a mount line
    assert mount_type(b"/six/p", info) == "xfs"  # no optional fields: one
    assert mount_type(b"/work/p", b"") == ""


BARE_SHAPES = {  # name: what the folder holds (a dict of entry -> "dir", "file", or "->target" for a link)
    "plain": {"HEAD": "file", "objects": "dir", "refs": "dir"},
    "objects linked": {"HEAD": "file", "objects": "->../store/objects", "refs": "dir"},
    "refs linked": {"HEAD": "file", "objects": "dir", "refs": "->../store/refs"},
    "HEAD a link": {"HEAD": "->refs/heads/main", "objects": "dir", "refs": "dir"},
    "HEAD a link to a folder": {"objects": "dir", "refs": "dir", "refs/heads": "dir", "HEAD": "->refs/heads"},
    "a commondir": {"HEAD": "file", "commondir": "file"},
    "HEAD a folder": {"HEAD": "dir", "objects": "dir", "refs": "dir"},
    "no HEAD": {"objects": "dir", "refs": "dir"},
    "objects dangling": {"HEAD": "file", "objects": "->../nowhere/objects", "refs": "dir"},
    "no refs": {"HEAD": "file", "objects": "dir"},
}


def _make(folder: Path, shape: dict) -> None:
    folder.mkdir(parents=True)
    for name, kind in shape.items():
        if kind == "dir":
            (folder / name).mkdir()
        elif kind == "file":
            (folder / name).write_text("ref: refs/heads/main\n" if name == "HEAD" else f"{folder.parent / 'store'}\n")
        else:
            os.symlink(kind[2:], folder / name)


@pytest.mark.parametrize("shape", sorted(BARE_SHAPES))
def test_a_bare_repository_is_one_wherever_git_itself_finds_one(tmp_path, shape):
    """Differential against git's own discovery (`git rev-parse --git-dir` run in the folder, not
    looking above it): every folder git takes for a repository is one here; here errs only towards one."""
    from memento_core.tick import unseen

    root = tmp_path / "p"
    (root / "store" / "objects").mkdir(parents=True)
    (root / "store" / "refs").mkdir()
    (root / "store" / "HEAD").write_text("ref: refs/heads/main\n")
    _make(root / "x", BARE_SHAPES[shape])
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(root)}
    env.pop("GIT_DIR", None)
    gits = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=root / "x", env=env, capture_output=True).returncode == 0
    found = "x" in unseen.look(root).repos
    assert found >= gits, (shape, gits, found)
    assert found == (gits or shape == "a commondir")


def test_a_link_that_makes_a_folder_a_repository_after_the_snapshot_is_seen_by_the_walk_since(tmp_path, monkeypatch):
    """objects/ a link to nowhere at the snapshot (no repository), its target made by the agent:
    the folder's entries did not change, its HEAD makes it listed again all the same."""
    import time

    from memento_core.tick import unseen

    root = tmp_path / "p"
    _make(root / "x", BARE_SHAPES["objects dangling"])
    monkeypatch.setattr(unseen, "RACY_NS", 0)
    time.sleep(0.05)
    snap = unseen.look(root)
    assert "x" not in snap.repos and b"x" not in snap.marks and b"" in snap.marks
    (root / "nowhere" / "objects").mkdir(parents=True)
    assert "x" in unseen.look(root, snap).repos


def test_an_encrypted_folder_is_never_taken_from_the_snapshot(tmp_path, monkeypatch):
    """fscrypt: adding its key turns a folder's scrambled names into real ones (a .git among them)
    with no change of its ctime. Here the flag is read as the kernel answers (a plain folder: not
    encrypted) and, as an encrypted folder's would be, said set for one folder."""
    import time

    from memento_core.tick import unseen

    root = tmp_path / "p"
    _tree(root)
    assert unseen._encrypted(os.fsencode(root / "src")) is False
    assert unseen._encrypted(os.fsencode(root / "no such folder")) is True  # cannot tell: never trusted
    locked = os.fsencode(root / "src" / "pkg")
    real = unseen._encrypted
    monkeypatch.setattr(unseen, "_encrypted", lambda path: path == locked or real(path))
    monkeypatch.setattr(unseen, "RACY_NS", 0)
    time.sleep(0.05)
    snap = unseen.look(root)
    assert b"src/pkg" not in snap.marks and b"src" in snap.marks and b"src/pkg/sub" in snap.marks


def _fscrypt_key(mnt: Path, remove: bytes = b"") -> bytes:
    """Add the test's v2 key to the file system at ``mnt`` (its identifier), or remove ``remove``."""
    import fcntl
    import struct

    fd = os.open(mnt, os.O_RDONLY)
    try:
        if remove:
            fcntl.ioctl(fd, 0xC0406618, bytearray(struct.pack("II16s16sI20s", 2, 0, remove, b"", 0, b"")), True)
            return remove
        arg = bytearray(struct.pack("II32sII32s", 2, 0, b"", 64, 0, b"") + bytes(range(64)))
        fcntl.ioctl(fd, 0xC0506617, arg, True)  # FS_IOC_ADD_ENCRYPTION_KEY
        return bytes(arg[8:24])
    finally:
        os.close(fd)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mkfs.ext4") is None, reason="mounts an ext4 image")
def test_a_repository_behind_a_real_fscrypt_key_added_after_the_snapshot_is_found(tmp_path, monkeypatch):
    """The hostile sequence a review found: an earlier attempt leaves an encrypted folder holding a
    .git and removes the key; the snapshot lists scrambled names; the agent adds the key back (no
    change of the folder's ctime). The walk since the snapshot lists the folder again and finds it."""
    import fcntl
    import struct
    import time

    from memento_core.tick import unseen

    image, mnt = tmp_path / "enc.img", tmp_path / "mnt"
    mnt.mkdir()
    made = subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "encrypt", str(image), "16M"], capture_output=True)
    mounted = made.returncode == 0 and subprocess.run(["mount", "-o", "loop", str(image), str(mnt)],
                                                      capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("no loop mount of an ext4 image with encryption here")
    try:
        locked = mnt / "tree" / "venv" / "E"
        locked.mkdir(parents=True)
        key = _fscrypt_key(mnt)
        fd = os.open(locked, os.O_RDONLY | os.O_DIRECTORY)
        try:  # FS_IOC_SET_ENCRYPTION_POLICY, a v2 policy: AES-256-XTS names and contents
            fcntl.ioctl(fd, 0x800C6613, struct.pack("BBBBB3s16s", 2, 1, 4, 0, 0, b"", key))
        finally:
            os.close(fd)
        (locked / ".git" / "objects").mkdir(parents=True)
        _fscrypt_key(mnt, remove=key)
        assert os.listdir(locked) != [".git"]  # scrambled without the key
        monkeypatch.setattr(unseen, "RACY_NS", 0)
        time.sleep(0.05)
        root = mnt / "tree"
        snap = unseen.look(root)
        assert snap.repos == set() and b"venv" in snap.marks and b"venv/E" not in snap.marks
        ctime = os.lstat(locked).st_ctime_ns
        _fscrypt_key(mnt)
        assert os.listdir(locked) == [".git"] and os.lstat(locked).st_ctime_ns == ctime
        assert unseen.look(root, snap).repos == {"venv/E/.git"}
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_kept_list_that_is_not_one_is_refused():
    """What the recovery reads beside the record (to_bytes): anything else is None, never an error."""
    from memento_core.tick.unseen import Seen, from_bytes, to_bytes

    seen = Seen(frozenset({"a/.git"}), frozenset(), frozenset({"a"}))
    assert from_bytes(to_bytes(seen)) == seen
    for data in (b"\xff", b"{}", b'{"repos": 1, "deep": [], "folders": []}', b"[" * 100_000 + b"]" * 100_000):
        assert from_bytes(data) is None
