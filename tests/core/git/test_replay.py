"""replay.py against git rebase: the replayed commits' trees are the ones the rebase makes, and
what it does not take on is left to git with nothing written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memento_core.git.commit import identity_env
from memento_core.git.merge import _lines
from memento_core.git.replay import replay
from memento_core.git.run import git_env

from .conftest import git, repo_with_files

PLAN = "".join(f"- [ ] `T-{i}` task {i}\n" for i in range(1, 9))

STATUS = "# status\n\n## [1] Tick #1\n- ok\n"


def append_resolver(base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """The upstream's log with the lines this side appended (the shape of Memento's status log)."""
    return upstream + mine[len(base):]


def never(base: bytes, upstream: bytes, mine: bytes) -> bytes:
    raise AssertionError("git merges this file without a conflict: no resolver is asked")


RESOLVERS = {"docs/TICK_STATUS.md": append_resolver, "docs/MASTER_PLAN.md": never}


def stage(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            git(root, "rm", "-q", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(root, "add", rel)


def commit_files(root: Path, message: str, files: dict[str, str | None], env: dict | None = None) -> str:
    stage(root, files)
    git(root, "commit", "-q", "--allow-empty", "-m", message, env=env)
    return git(root, "rev-parse", "HEAD")


def diverged(tmp_path: Path, fmt: str = "sha1") -> tuple[Path, str, str]:
    """A repository whose branch `up` and HEAD (main) went apart from a base: the merge base and
    the upstream's tip. Local commits: a plan edit far from the upstream's (merged by git), a
    status entry both appended (the resolver's), a file in a folder that did not exist, a folder
    emptied, an empty commit (kept), a change the upstream made too (dropped), a person's author."""
    root = repo_with_files(tmp_path, fmt)
    base = commit_files(root, "base", {"docs/MASTER_PLAN.md": PLAN, "docs/TICK_STATUS.md": STATUS, "old/only.txt": "x\n"})
    git(root, "branch", "up")
    git(root, "checkout", "-q", "up")
    commit_files(root, "upstream: T-1 done", {"docs/MASTER_PLAN.md": PLAN.replace("[ ] `T-1`", "[x] `T-1`"),
                                              "docs/TICK_STATUS.md": STATUS + "## [2] Tick #1 up\n- up\n",
                                              "out/1.txt": "one\n"})
    onto = commit_files(root, "upstream: readme", {"README.md": "hello from upstream\n"})
    git(root, "checkout", "-q", "main")
    commit_files(root, "memento: complete T-7 task 7\n\nbody line\n",
                 {"docs/MASTER_PLAN.md": PLAN.replace("[ ] `T-7`", "[x] `T-7`"),
                  "docs/TICK_STATUS.md": STATUS + "## [3] Tick #2 here\n- here\n", "new/deep/7.txt": "seven\n",
                  "old/only.txt": None})
    commit_files(root, "memento: release T-8", {})
    commit_files(root, "the same file as upstream's", {"out/1.txt": "one\n"})
    person = {**git_env(), "GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "person@example.invalid",
              "GIT_AUTHOR_DATE": "@1700000000 +0100"}
    commit_files(root, "a person's commit", {"docs/guide/deep.md": "deeper\n", "bin/run.sh": "#!/bin/sh\necho\n"}, env=person)
    return root, base, onto


def git_rebase(root: Path, onto: str, resolvers: dict) -> None:
    """``git rebase onto`` with each conflict of a resolver's path settled by it (as the fleet did)."""
    env = {**git_env(), "GIT_EDITOR": "true"}
    proc = subprocess.run(["git", "-C", str(root), "rebase", "-q", onto], capture_output=True, env=env)
    while proc.returncode != 0:
        for path in git(root, "diff", "--name-only", "--diff-filter=U").split():
            stages = [subprocess.run(["git", "-C", str(root), "show", f":{n}:{path}"], capture_output=True).stdout
                      for n in (1, 2, 3)]
            (root / path).write_bytes(resolvers[path](*stages))
            git(root, "add", path)
        proc = subprocess.run(["git", "-C", str(root), "rebase", "--continue"], capture_output=True, env=env)


def objects_now(root: Path) -> str:
    return git(root, "count-objects", "-v")


def union_resolver(base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """The upstream's version with this side's lines it lacks after it (a stand-in for the plan's)."""
    theirs = set(_lines(upstream))
    return upstream + b"".join(line for line in _lines(mine) if line not in theirs)


_REPLAY_PATHS = ["docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "src/a.py", "deep/er/x.txt", "out/1.txt"]

_REPLAY_RESOLVERS = {"docs/MASTER_PLAN.md": union_resolver, "docs/TICK_STATUS.md": append_resolver}

_REPLAY_LINES = [b"- [ ] `T-1` one\n", b"- [x] `T-1` one\n", b"  - verify: `true`\n", b"\n", b"---\n", b"a\r\n",
                 b"## Tick\n", b"- **Status**: ok\n"]


@st.composite
def histories(draw) -> tuple[dict, list, list]:
    """A base of files and two lines of commits from it (upstream's, then this host's), each
    commit writing (lines moved, changed, put in, taken out; CRLF; no last newline) or removing
    a few of them."""
    line = st.one_of(st.sampled_from(_REPLAY_LINES), st.integers(0, 20).map(lambda n: b"u%d\n" % n))
    base = {path: b"".join(draw(st.lists(line, min_size=1, max_size=8))) for path in _REPLAY_PATHS[:3]}

    def commits(count: int) -> list[dict]:
        now, out = dict(base), []
        for _ in range(count):
            change = {}
            for path in draw(st.lists(st.sampled_from(_REPLAY_PATHS), min_size=1, max_size=3, unique=True)):
                lines = _lines(now.get(path, b""))
                what = draw(st.sampled_from(["move", "change", "put", "append", "drop", "remove"]))
                at = draw(st.integers(0, len(lines)))
                if what == "move" and lines:
                    end = draw(st.integers(at, min(len(lines), at + 3)))
                    block, rest = lines[at:end], lines[:at] + lines[end:]
                    to = draw(st.integers(0, len(rest)))
                    lines = rest[:to] + block + rest[to:]
                elif what == "change" and at < len(lines):
                    lines[at] = draw(line)
                elif what in ("put", "append"):
                    lines.insert(at if what == "put" else len(lines), draw(line))
                elif what == "drop" and at < len(lines):
                    del lines[at]
                data = b"".join(lines)
                if data.endswith(b"\n") and draw(st.integers(0, 5)) == 0:
                    data = data[:-1]
                change[path] = None if what == "remove" and path in now else data
                if change[path] is None:
                    now.pop(path)
                else:
                    now[path] = data
            out.append(change)
        return out

    return base, commits(draw(st.integers(1, 3))), commits(draw(st.integers(1, 3)))


def _commit_bytes(root: Path, message: str, files: dict) -> str:
    for rel, data in files.items():
        if data is None:
            git(root, "rm", "-q", "--ignore-unmatch", rel)
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        git(root, "add", rel)
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD")


def _replays_as_git_rebases(tmp: Path, history) -> None:
    base_files, upstream, local = history
    root = tmp / "replay"
    subprocess.run(["rm", "-rf", str(root)], check=True)
    git(tmp, "init", "-q", "-b", "main", str(root))
    git(root, "config", "core.autocrlf", "false")
    base = _commit_bytes(root, "base", base_files)
    git(root, "checkout", "-q", "-b", "up")
    for n, change in enumerate(upstream):
        onto = _commit_bytes(root, f"upstream {n}", change)
    git(root, "checkout", "-q", "main")
    for n, change in enumerate(local):
        tip = _commit_bytes(root, f"local {n}", change)
    replayed = replay(root, onto, base, tip, identity_env(root), _REPLAY_RESOLVERS)
    event("replayed here" if replayed else "left to git")
    if replayed is None:
        return
    # Git's rebase without its rename detection: the replay applies each path's change to that
    # path (a rename upstream meeting a change here is a rename/delete conflict to git).
    env = {**git_env(), "GIT_EDITOR": "true"}
    proc = subprocess.run(["git", "-C", str(root), "rebase", "-q", "-X", "no-renames", onto], capture_output=True,
                          env=env)
    touched_here = {path for change in local for path in change}
    while proc.returncode != 0:
        conflicted = git(root, "diff", "--name-only", "--diff-filter=U").split("\n")
        # Git finds renames even under -X no-renames when a path deleted here was "renamed" upstream
        # (deleted there too, its content added elsewhere): a rename/delete conflict on a path this
        # side never touched, which without renames is simply upstream's file.
        for path in [p for p in conflicted if p not in _REPLAY_RESOLVERS and p not in touched_here
                     and p not in base_files]:
            git(root, "checkout", "--ours", "--", path)  # in a rebase, "ours" is upstream
            git(root, "add", path)
            conflicted.remove(path)
        assert all(path in _REPLAY_RESOLVERS for path in conflicted), f"git conflicts on {conflicted}: {history}"
        for path in conflicted:
            stages = [subprocess.run(["git", "-C", str(root), "show", f":{n}:{path}"], capture_output=True).stdout
                      for n in (1, 2, 3)]
            (root / path).write_bytes(_REPLAY_RESOLVERS[path](*stages))
            git(root, "add", path)
        proc = subprocess.run(["git", "-C", str(root), "rebase", "--continue"], capture_output=True, env=env)
    ours = git(root, "log", "--reverse", "--format=%T %s", f"{onto}..{replayed[0]}")
    theirs = git(root, "log", "--reverse", "--format=%T %s", f"{onto}..HEAD")
    assert ours == theirs, history


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_a_replay_makes_what_git_rebase_makes(tmp_path, git_identity, fmt):
    root, base, onto = diverged(tmp_path, fmt)
    tip = git(root, "rev-parse", "HEAD")
    resolvers = RESOLVERS
    ident = identity_env(root)
    replayed = replay(root, onto, base, tip, ident, resolvers)
    assert replayed is not None
    new_tip, moved = replayed
    assert git(root, "rev-parse", "HEAD") == tip  # the replay writes objects, it moves no ref

    git(root, "branch", "rebased", tip)
    git(root, "checkout", "-q", "rebased")
    git_rebase(root, onto, resolvers)
    # Same trees, authors (a person's kept with their date) and messages, commit by commit; the
    # commit that became empty dropped by both, the empty one kept by both.
    ours = git(root, "log", "--reverse", "--format=%T %an <%ae> %ad %s", "--date=raw", f"{onto}..{new_tip}")
    theirs = git(root, "log", "--reverse", "--format=%T %an <%ae> %ad %s", "--date=raw", f"{onto}..HEAD")
    assert ours == theirs
    assert [line.split(" ", 1)[1].endswith(("task 7", "release T-8", "commit")) for line in ours.splitlines()] == \
        [True, True, True]
    assert git(root, "log", "-1", "--format=%B", f"{new_tip}~2") == "memento: complete T-7 task 7\n\nbody line"
    assert git(root, "log", "--format=%cn <%ce>", f"{onto}..{new_tip}").splitlines() == \
        ["Test Person <test@example.invalid>"] * 3
    assert git(root, "show", f"{new_tip}:docs/MASTER_PLAN.md").count("[x]") == 2
    assert git(root, "ls-tree", "-r", "--name-only", new_tip, "old") == ""  # the emptied folder is gone
    assert git(root, "ls-tree", new_tip, "bin/run.sh").startswith("100755")
    local = git(root, "rev-list", "--reverse", f"{base}..{tip}").split()
    assert list(moved) == [local[0], local[1], local[3]] and moved[tip] == new_tip
    git(root, "update-ref", "refs/heads/replayed", new_tip)
    git(root, "fsck", "--strict", "--no-dangling")


def test_what_the_replay_does_not_take_on_is_left_to_git_with_nothing_written(tmp_path, git_identity):
    root, base, onto = diverged(tmp_path)
    tip = git(root, "rev-parse", "HEAD")
    ident = identity_env(root)
    before = objects_now(root)
    # The status log both appended to, with no resolver for it (git would stop there), and the
    # plan both changed, with none for it (git merges it: the replay leaves that to git).
    assert replay(root, onto, base, tip, ident, {"docs/MASTER_PLAN.md": never}) is None
    assert replay(root, onto, base, tip, ident, {"docs/TICK_STATUS.md": append_resolver}) is None
    # A resolver that cannot settle it.
    assert replay(root, onto, base, tip, ident, {**RESOLVERS, "docs/TICK_STATUS.md": lambda b, u, m: None}) is None
    # An identity git would clean, a merge in the range, a file where the replay needs a folder.
    assert replay(root, onto, base, tip, {**ident, "GIT_AUTHOR_NAME": "Jr."},
                  RESOLVERS) is None
    assert objects_now(root) == before

    git(root, "checkout", "-q", "-b", "merged", base)
    commit_files(root, "side", {"side.txt": "side\n"})
    git(root, "merge", "-q", "--no-edit", "main")
    assert replay(root, onto, base, git(root, "rev-parse", "HEAD"), ident, RESOLVERS) is None

    git(root, "checkout", "-q", "-b", "clash", base)
    clash = commit_files(root, "a file in a folder new", {"new/file.txt": "x\n"})
    git(root, "checkout", "-q", "-b", "up2", onto)
    file_there = commit_files(root, "a file named new", {"new": "a file\n"})
    before = objects_now(root)
    assert replay(root, file_there, base, clash, ident, {}) is None
    assert objects_now(root) == before


def test_a_signed_commit_is_left_to_git(tmp_path, git_identity):
    # A rebase drops or remakes a signature by its own rules; the replay does not guess them.
    root, base, onto = diverged(tmp_path)
    tip = git(root, "rev-parse", "HEAD")
    raw = git(root, "cat-file", "commit", tip).encode()
    head, _, message = raw.partition(b"\n\n")
    signed = head + b"\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\n" + message + b"\n"
    forged = git(root, "hash-object", "-t", "commit", "-w", "--stdin", input=signed)
    before = objects_now(root)
    assert replay(root, onto, base, forged, identity_env(root), RESOLVERS) is None
    assert objects_now(root) == before
    assert replay(root, onto, base, tip, identity_env(root), RESOLVERS) is not None


def test_a_folder_named_with_a_line_break_is_left_to_git(tmp_path, git_identity):
    root, base, onto = diverged(tmp_path)
    commit_files(root, "an awkward name", {"line\nbreak/file.txt": "x\n"})
    tip = git(root, "rev-parse", "HEAD")
    assert replay(root, onto, base, tip, identity_env(root), RESOLVERS) is None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories())
def test_a_replay_makes_the_trees_git_rebase_makes(tmp_path, git_identity, history):
    """Random histories of a plan, a status log and plain files, with resolvers for the two
    documents: where the replay takes a range on, each commit's tree is the one git's rebase
    makes (git's merge where it merges, the same resolver where it conflicts; a commit whose
    patch is upstream's already dropped). Git's rename detection is off here: the replay does
    not follow renames."""
    _replays_as_git_rebases(tmp_path, history)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories())
def test_a_replay_makes_the_trees_git_rebase_makes_heavy(tmp_path, git_identity, history):
    _replays_as_git_rebases(tmp_path, history)


def test_a_range_of_one_empty_commit_is_replayed(tmp_path, git_identity):
    """A host whose only unpushed commit is empty (a release): the replay asked for no path and
    failed with a ValueError instead of replaying it."""
    root = repo_with_files(tmp_path)
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "up")
    onto = commit_files(root, "upstream", {"README.md": "changed upstream\n"})
    git(root, "checkout", "-q", "main")
    tip = commit_files(root, "memento: release T-8", {})
    new_tip, moved = replay(root, onto, base, tip, identity_env(root), RESOLVERS)
    assert list(moved) == [tip]
    assert git(root, "log", "--format=%T %s", f"{onto}..{new_tip}") == \
        f"{git(root, 'rev-parse', f'{onto}^{{tree}}')} memento: release T-8"


def test_a_commit_whose_patch_is_upstream_is_left_to_git(tmp_path, git_identity):
    """Upstream made this host's change, then changed it back: git's rebase drops this host's
    commit (its patch is upstream's); replayed, it undid the upstream's later change."""
    root = repo_with_files(tmp_path)
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "up")
    commit_files(root, "the same change", {"README.md": "both\n"})
    onto = commit_files(root, "changed back", {"README.md": "hello\n"})
    git(root, "checkout", "-q", "main")
    tip = commit_files(root, "the same change, here", {"README.md": "both\n"})
    before = objects_now(root)
    assert replay(root, onto, base, tip, identity_env(root), RESOLVERS) is None
    assert objects_now(root) == before
    git_rebase(root, onto, RESOLVERS)
    assert git(root, "rev-parse", "HEAD") == onto  # git dropped it
