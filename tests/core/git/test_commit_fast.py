"""commit_fast.py against real git: the commit built in Python is the one git's own commands
make, and what git may read otherwise is left to git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memento_core.errors import MementoError
from memento_core.git import trees as trees_module
from memento_core.git.commit import amend_paths, commit_paths, identity_env, make_commit
from memento_core.git.commit_fast import can_build, changed_from_made, commit_here
from memento_core.git.objects import GONE, hash_blobs
from memento_core.git.repo import repo_dirs
from tests.core.git_calls import watch_git

from .conftest import git, repo_with_files


def _both_ways(tmp_path: Path, monkeypatch, fmt: str, change, paths: list[str], blobs=None, sub: str = ""):
    """The same change committed in two copies of one repository, by commit_here and by
    git's own commands (commit_here told to decline): (tree here, tree by git)."""
    base = repo_with_files(tmp_path, fmt)
    (base / ".gitattributes").write_text("*.crlf text eol=lf\n*.up filter=upper\n")
    git(base, "config", "filter.upper.clean", "tr a-z A-Z")
    git(base, "add", ".gitattributes")
    git(base, "commit", "-qm", "attributes")
    twin = tmp_path / f"twin-{fmt}"
    subprocess.run(["cp", "-a", str(base), str(twin)], check=True)
    trees = []
    real = commit_here
    for root, fast in ((base, True), (twin, False)):
        change(root)
        hashed = {p: (m, o) for p, (m, o) in (blobs(root) if blobs else {}).items()}
        calls = []

        def spy(*a, fast=fast, calls=calls):
            made = real(*a) if fast else None
            calls.append(made is not None)
            return made

        sha = commit_paths(root / sub, paths, "memento: a commit\n\nbody\n", blobs=hashed, build=spy)
        assert calls == [fast]  # made here in the one, by git in the other
        trees.append(git(root, "rev-parse", f"{sha}^{{tree}}"))
        assert git(root, "status", "--porcelain", "--", *(f"{sub}{p}" if sub else p for p in paths)) == ""
    return trees[0], trees[1]


def _put(rel: str, data: bytes, mode: int | None = None):
    def change(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        if mode is not None:
            (root / rel).chmod(mode)
    return change


_PLAIN_PATHS = ["a.txt", "dir/b.txt", "dir/sub/c.txt", "new/deep/n.txt", "x.crlf", "y.up", "run.sh", "link",
                "sp ace.md", "dir", "a.txt/inner"]

_ODD_PATHS = ["\u00fcn\u00ef.txt", 'q"uote.txt', "new\nline.txt", ".gitattributes", "GIT~1/x", "dir/.git.",
              "tab\there.txt"]

_BUILDER_PATHS = _PLAIN_PATHS * 4 + _ODD_PATHS  # mostly what the builder takes, sometimes what it leaves to git

_CONTENTS = [b"", b"x", b"x\n", b"a\r\nb\r\n", b"one\ntwo", b"quiet words\n", b"\x00\x01binary", b"\r\n\r\n"]


@pytest.fixture(scope="module")
def builder_repo(tmp_path_factory) -> Path:
    """A committed repository with attributes that change what git stores (eol, a clean filter)."""
    root = tmp_path_factory.mktemp("builder") / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "config", "filter.upper.clean", "tr a-z A-Z")
    files = {".gitattributes": b"*.crlf text eol=lf\n*.up filter=upper\n", "a.txt": b"a\n", "dir/b.txt": b"b\n",
             "dir/sub/c.txt": b"c\n", "run.sh": b"#!/bin/sh\n", "sp ace.md": b"s\n", "x.crlf": b"x\n"}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "run.sh").chmod(0o755)
    os.symlink("a.txt", root / "link")
    git(root, "add", "-A")
    git(root, "-c", "user.name=B", "-c", "user.email=b@example.invalid", "commit", "-qm", "base")
    return root


@st.composite
def work_tree_changes(draw) -> list[tuple]:
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_BUILDER_PATHS))
        what = draw(st.sampled_from(["write", "write", "exec", "link", "delete"]))
        ops.append((what, path, draw(st.sampled_from(_CONTENTS)), draw(st.sampled_from(["a.txt", "../out", "dir"]))))
    config = draw(st.sampled_from([None, None, None, ("core.autocrlf", "true"), ("core.autocrlf", "input"),
                                   ("core.fileMode", "false")]))
    return [ops, config]


def _apply_changes(root: Path, ops: list[tuple]) -> list[str]:
    touched = []
    for what, rel, data, target in ops:
        path = root / rel
        try:
            if what == "delete":
                if path.is_dir() and not path.is_symlink():
                    subprocess.run(["rm", "-rf", str(path)], check=True)
                else:
                    path.unlink(missing_ok=True)
            else:
                for parent in reversed(path.parents):
                    if parent.is_file() or parent.is_symlink():
                        parent.unlink()  # a folder where a file was
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.is_dir() and not path.is_symlink():
                    subprocess.run(["rm", "-rf", str(path)], check=True)  # a file where a folder was
                if what == "link":
                    path.unlink(missing_ok=True)
                    os.symlink(target, path)
                else:
                    if path.is_symlink():
                        path.unlink()
                    path.write_bytes(data)
                    path.chmod(0o755 if what == "exec" else 0o644)
        except OSError:
            continue
        touched.append(rel)
    return touched


def _committed_tree(root: Path, paths: list[str], build) -> str | None:
    try:
        made = make_commit(root, paths, "memento: a commit\n", build=build)
    except MementoError:
        return None
    return git(root, "rev-parse", f"{made.sha}^{{tree}}")


def _builds_as_git(root: Path, change: list) -> None:
    ops, config = change
    git(root, "reset", "-q", "--hard", "main")
    git(root, "clean", "-qfdx")
    for key in ("core.autocrlf", "core.fileMode"):
        subprocess.run(["git", "-C", str(root), "config", "--unset", key], capture_output=True)
    if config:
        git(root, "config", *config)
    paths = _apply_changes(root, ops)
    if not paths:
        return
    built: list[bool] = []

    def here(*args):
        made = commit_here(*args)
        built.append(made is not None)
        return made

    assert _committed_tree(root, paths, here) == _committed_tree(root, paths, None), (ops, config, built)
    event("built here" if any(built) else "left to git")
    assert git(root, "rev-parse", "HEAD") == git(root, "rev-parse", "main")  # no ref moved


def test_identities_git_would_clean_and_dates_from_the_environment_go_to_git(monkeypatch):
    ok = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.invalid",
          "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.invalid"}
    monkeypatch.delenv("GIT_AUTHOR_DATE", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_DATE", raising=False)
    assert can_build(ok)
    for name in ("Jr.", " padded", "a <b>", "two\nlines", "'quoted'", ""):
        assert not can_build({**ok, "GIT_AUTHOR_NAME": name}), name
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    assert not can_build(ok)


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
@pytest.mark.parametrize("case", [
    "modified", "new-deep", "removed", "link", "exec-kept", "crlf-normalised", "clean-filter", "blobs", "odd-name",
])
def test_a_commit_of_paths_made_here_is_the_one_git_makes(tmp_path, monkeypatch, git_identity, fmt, case):
    cases = {
        "modified": (_put("docs/MASTER_PLAN.md", b"# plan\n- [x] `T-1` one\n"), ["docs/MASTER_PLAN.md"]),
        "new-deep": (_put("src/a/b/new.py", b"print(1)\n"), ["src/a/b/new.py", "README.md"]),
        "removed": (lambda r: (r / "docs/guide/deep.md").unlink(), ["docs/guide/deep.md"]),
        "link": (lambda r: ((r / "link").unlink(), (r / "link").symlink_to("docs.txt")), ["link"]),
        "exec-kept": (_put("bin/run.sh", b"#!/bin/sh\necho hi\n", 0o755), ["bin/run.sh"]),
        "crlf-normalised": (_put("notes.crlf", b"one\r\ntwo\r\n"), ["notes.crlf"]),
        "clean-filter": (_put("shout.up", b"quiet words\n"), ["shout.up"]),
        "blobs": (_put("out/1.txt", b"as verify saw it\n"), ["docs/MASTER_PLAN.md"]),
        "odd-name": (_put("a b/c, d=e@f%g+h.md", b"hola\n"), ["a b/c, d=e@f%g+h.md"]),
    }
    change, paths = cases[case]
    blobs = (lambda root: {**hash_blobs(root, ["out/1.txt"]), "docs-extra": GONE}) \
        if case == "blobs" else None
    here, by_git = _both_ways(tmp_path, monkeypatch, fmt, change, paths, blobs)
    assert here == by_git


def test_a_commit_from_a_subfolder_workspace_is_the_one_git_makes(tmp_path, monkeypatch, git_identity):
    here, by_git = _both_ways(tmp_path, monkeypatch, "sha1", _put("docs/guide/new.md", b"new\n"),
                              ["new.md", "deep.md"], sub="docs/guide")
    assert here == by_git


@pytest.mark.parametrize("case", ["new-executable", "bit-flipped", "file-for-folder", "unborn", "date-from-env",
                                  "beyond-a-link", "other-script", "quoted", "carriage-return"])
def test_what_git_may_read_otherwise_is_left_to_git(tmp_path, monkeypatch, git_identity, case):
    """core.fileMode could read an executable bit otherwise; a file where a folder was needs
    update-index --replace; an unborn branch has no HEAD to read; a date from the environment is
    git's to apply: commit_here declines, nothing written, and the commit is still made (by git)."""
    root = repo_with_files(tmp_path)
    ident = identity_env(root)
    paths = ["x.sh"]
    if case == "new-executable":
        _put("x.sh", b"#!/bin/sh\n", 0o755)(root)
    elif case == "bit-flipped":
        (root / "README.md").chmod(0o755)
        paths = ["README.md"]
    elif case == "file-for-folder":
        subprocess.run(["rm", "-r", str(root / "docs" / "guide")], check=True)
        (root / "docs" / "guide").write_text("a file now\n")
        paths = ["docs/guide", "docs/guide/deep.md"]
    elif case == "beyond-a-link":  # docs/ made a link to a folder elsewhere: git refuses to follow it
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "MASTER_PLAN.md").write_text("# a plan from elsewhere\n")
        subprocess.run(["rm", "-r", str(root / "docs")], check=True)
        (root / "docs").symlink_to(elsewhere)
        paths = ["docs/MASTER_PLAN.md"]
    elif case in ("other-script", "quoted", "carriage-return"):
        # hash-object --stdin-paths would unquote '"a"' and drop the '\r': another file's bytes
        (root / "a").write_text("the file a\n")
        paths = [{"other-script": "ünï código.md", "quoted": '"a"', "carriage-return": "a\r"}[case]]
        _put(paths[0], b"its own bytes\n")(root)
    elif case == "unborn":
        root = tmp_path / "unborn"
        git(tmp_path, "init", "-q", "-b", "main", str(root))
        _put("x.sh", b"x\n")(root)
    else:
        _put("x.sh", b"x\n")(root)
        monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    objects = sorted(p.name for p in (root / ".git" / "objects").rglob("*") if p.is_file())
    assert commit_here(root, paths, "m", ident, {}) is None
    assert sorted(p.name for p in (root / ".git" / "objects").rglob("*") if p.is_file()) == objects
    if case == "beyond-a-link":
        with pytest.raises(MementoError, match="beyond a symbolic link"):
            commit_paths(root, paths, "m", build=commit_here)
        assert "a plan from elsewhere" not in git(root, "log", "-p", "--all")
        return
    sha = commit_paths(root, paths, "m", build=commit_here)
    assert git(root, "rev-parse", "HEAD") == sha
    for path in paths:
        if (root / path).is_file():
            assert git(root, "cat-file", "blob", f"{sha}:{path}") == (root / path).read_text().strip()


@pytest.mark.parametrize("path, mode", [("GIT~1/config", "100644"), ("src/GIT~1/hooks/x", "100644"),
                                        (".git./config", "100644"), (".gitmodules", "120000")])
def test_a_path_git_refuses_is_never_committed_here(tmp_path, git_identity, path, mode):
    """A name NTFS or HFS would take for .git, a .gitmodules that is a link: commit_here declines
    it, and git's own commands refuse it, so no tree holding it reaches HEAD."""
    root = repo_with_files(tmp_path)
    head = git(root, "rev-parse", "HEAD")
    blob = git(root, "hash-object", "-w", "--stdin", input=b"[core]\n\thooksPath = /tmp\n")
    ident = identity_env(root)
    assert commit_here(root, [path], "m", ident, {path: (mode, blob)}) is None
    with pytest.raises(MementoError):
        commit_paths(root, [path], "m", blobs={path: (mode, blob)}, build=commit_here)
    assert git(root, "rev-parse", "HEAD") == head


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(change=work_tree_changes())
def test_a_commit_built_here_is_the_tree_git_s_index_makes(builder_repo, git_identity, change):
    """Random changes of a work tree (CRLF under eol=lf and core.autocrlf, a clean filter, files
    without a last newline, binary, executable bits under core.fileMode false, links, files for
    folders and folders for files, names git checks or quotes): the commit built here, where it
    builds one, has the tree git's own temporary index makes."""
    _builds_as_git(builder_repo, change)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(change=work_tree_changes())
def test_a_commit_built_here_is_the_tree_git_s_index_makes_heavy(builder_repo, git_identity, change):
    _builds_as_git(builder_repo, change)


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_an_amend_made_here_is_the_one_git_makes_and_never_replaces_a_head_that_moved(tmp_path, git_identity, fmt):
    """amend_paths with commit_here (the tick folding its documents into its commit, issue
    42: five git commands where git's way starts ten): the same tree, parents and message as git's
    own amend, the index agreeing for those paths; with ``onto`` another commit than HEAD, nothing
    is changed and None comes back."""
    base = repo_with_files(tmp_path, fmt)
    (base / "a.txt").write_text("one\n")
    git(base, "add", "a.txt")
    git(base, "commit", "-qm", "memento: complete T-1 one\n\nMemento-Tick: 3 T-1")
    twin = tmp_path / f"twin-{fmt}"
    subprocess.run(["cp", "-a", str(base), str(twin)], check=True)
    made = []
    for root, build in ((base, commit_here), (twin, None)):
        old = git(root, "rev-parse", "HEAD")
        (root / "docs/MASTER_PLAN.md").write_text("# plan\n- [x] `T-1` one\n")
        (root / "docs/new.md").write_text("new\n")
        assert amend_paths(root, ["docs/MASTER_PLAN.md", "docs/new.md"], build=build,
                           onto=git(root, "rev-parse", "HEAD~1")) is None
        assert git(root, "rev-parse", "HEAD") == old  # not the commit it was told to amend
        sha = amend_paths(root, ["docs/MASTER_PLAN.md", "docs/new.md"], build=build, onto=old)
        assert git(root, "rev-parse", "HEAD") == sha != old
        assert git(root, "status", "--porcelain") == ""
        made.append((git(root, "rev-parse", f"{sha}^{{tree}}"), git(root, "rev-parse", f"{sha}^@"),
                     git(root, "log", "-1", "--format=%B", sha)))
    assert made[0] == made[1]
    assert made[0][1] == git(base, "rev-parse", "HEAD~1")
    assert made[0][2] == "memento: complete T-1 one\n\nMemento-Tick: 3 T-1"


def test_an_amend_made_here_runs_four_git_commands(tmp_path, git_identity, monkeypatch):
    root = repo_with_files(tmp_path)
    repo_dirs(root)
    old = git(root, "rev-parse", "HEAD")
    (root / "docs/MASTER_PLAN.md").write_text("# plan\n- [x] `T-1` one\n")
    started: list[str] = []
    watch_git(monkeypatch, started)
    assert amend_paths(root, ["docs/MASTER_PLAN.md"], build=commit_here, onto=old)
    assert started == ["hash-object", "unpack-objects", "update-ref", "reset"]  # HEAD's trees: loose objects


def test_a_commit_built_on_the_one_made_here_reads_no_tree_again_and_is_git_s(tmp_path, git_identity, monkeypatch):
    """The tick's documents folded into the commit it just made: the trees it built are taken
    again (HEAD still that commit), so the amend starts no cat-file; its tree is git's own. A
    HEAD moved since (a commit made elsewhere) is read again."""
    root = repo_with_files(tmp_path)
    repo_dirs(root)
    (root / "docs/guide/deep.md").write_text("deeper\n")
    (root / "docs/MASTER_PLAN.md").write_text("# plan\n- [x] `T-1` one\n")
    old = commit_paths(root, ["docs/guide/deep.md", "docs/MASTER_PLAN.md"], "memento: complete T-1 one",
                       build=commit_here)
    (root / "docs/guide/new.md").write_text("new\n")
    (root / "docs/CURRENT_STATE.md").write_text("state\n")
    started: list[str] = []
    watch_git(monkeypatch, started)
    monkeypatch.setattr(trees_module, "_head_loose", lambda *a: None)  # HEAD's trees otherwise read by git
    sha = amend_paths(root, ["docs/guide/new.md", "docs/CURRENT_STATE.md"], build=commit_here,
                      onto=old)
    assert started == ["hash-object", "unpack-objects", "update-ref", "reset"]
    assert git(root, "status", "--porcelain") == ""  # every file of the work tree is the amended commit's
    assert git(root, "show", f"{sha}:docs/guide/deep.md") == "deeper"
    git(root, "commit", "-qm", "a person's", "--allow-empty")
    started.clear()
    (root / "README.md").write_text("changed\n")
    commit_paths(root, ["README.md"], "memento: next", build=commit_here)
    assert started[0] == "cat-file"


def test_documents_changed_since_the_commit_made_here_are_what_git_status_says(tmp_path, git_identity, monkeypatch):
    """changed_from_made (the tick's documents written after its commit, issue 42): with no
    process, the paths git status shows modified or deleted; None (git status answers) once HEAD
    is not that commit, or for a path the commit lacks that is on disk."""
    root = repo_with_files(tmp_path)
    repo_dirs(root)
    (root / "docs/MASTER_PLAN.md").write_text("# plan\n- [x] `T-1` one\n")
    (root / "docs/guide/new.md").write_text("new\n")
    commit_paths(root, ["docs/MASTER_PLAN.md", "docs/guide/new.md", "bin/run.sh"], "memento: complete T-1",
                 build=commit_here)
    (root / "docs/guide/deep.md").write_text("changed\n")
    (root / "docs-extra").unlink()
    (root / "bin/run.sh").chmod(0o644)
    paths = ["docs/MASTER_PLAN.md", "docs/guide/deep.md", "docs-extra", "bin/run.sh", "README.md", "docs/none.md"]
    started: list[str] = []
    watch_git(monkeypatch, started)
    found = changed_from_made(root, paths)
    assert started == []
    raw = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-z"], capture_output=True, check=True)
    by_status = sorted(e[3:] for e in raw.stdout.decode().split("\0") if e[3:] in paths)
    assert found == by_status == ["bin/run.sh", "docs-extra", "docs/guide/deep.md"]
    (root / "docs/none.md").write_text("untracked\n")
    assert changed_from_made(root, paths) is None
    git(root, "commit", "-qm", "a person's", "--allow-empty")
    assert changed_from_made(root, ["README.md"]) is None
