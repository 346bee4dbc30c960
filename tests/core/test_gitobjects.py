"""gitobjects against real git: what it reads and writes is what git's own commands read and make."""

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
from memento_core.git.commit_fast import can_build, changed_from_made, commit_bytes, commit_here
from memento_core.git.merge import _lines, both_appended, changes_meet, merge_apart, merge_file
from memento_core.git.objects import GONE, hash_blobs, write_objects
from memento_core.git.replay import replay
from memento_core.git.repo import repo_dirs
from memento_core.git.run import git_env
from memento_core.git.trees import read_at, with_files
from tests.core.git_calls import stop_watching_git, watch_git


def git(root: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def repo(tmp_path: Path, fmt: str = "sha1") -> Path:
    root = tmp_path / f"repo-{fmt}"
    git(tmp_path, "init", "-q", "-b", "main", f"--object-format={fmt}", str(root))
    files = {"README.md": "hello\n", "docs/MASTER_PLAN.md": "# plan\n- [ ] `T-1` one\n",
             "docs/guide/deep.md": "deep\n", "docs-extra": "a file that sorts between docs and docs/\n",
             "docs.txt": "sorts before the docs folder's name plus '/'\n", "bin/run.sh": "#!/bin/sh\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "bin/run.sh").chmod(0o755)
    (root / "link").symlink_to("README.md")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    return root


def git_tree_with(root: Path, changes: dict[str, bytes]) -> str:
    """The tree git itself makes from HEAD with ``changes`` (path -> bytes) in a private index."""
    index = root / ".git" / "test-index"
    env = {**git_env(), "GIT_INDEX_FILE": str(index)}
    git(root, "read-tree", "HEAD", env=env)
    for path, data in changes.items():
        oid = git(root, "hash-object", "-w", "--stdin", input=data)
        git(root, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}", env=env)
    tree = git(root, "write-tree", env=env)
    index.unlink()
    return tree


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_a_commit_built_here_is_the_one_git_makes(tmp_path, git_identity, fmt):
    root = repo(tmp_path, fmt)
    paths = ["docs/MASTER_PLAN.md", "docs/guide/deep.md", "README.md"]
    at = read_at(root, "HEAD", paths)
    assert at.commit == git(root, "rev-parse", "HEAD") and at.tree == git(root, "rev-parse", "HEAD^{tree}")
    assert at.files["docs/MASTER_PLAN.md"][2] == b"# plan\n- [ ] `T-1` one\n"
    assert at.files["docs/MASTER_PLAN.md"][1] == git(root, "rev-parse", "HEAD:docs/MASTER_PLAN.md")

    changes = {"docs/MASTER_PLAN.md": b"# plan\n- [~] `T-1` one\n", "docs/guide/deep.md": b"deeper\n"}
    tree, objects = with_files(at, {p: (b"100644", d) for p, d in changes.items()}, fmt)
    assert tree == git_tree_with(root, changes)  # the same bytes git writes, so the same id

    ident = identity_env(root)
    assert can_build(ident)
    data = commit_bytes(tree, [at.commit], "memento: claim T-1 on h1\n\nnonce\n", ident)
    ids = write_objects(root, [*objects, ("commit", data)])
    sha = ids[-1]
    assert git(root, "cat-file", "-t", sha) == "commit"
    assert git(root, "rev-parse", f"{sha}^{{tree}}") == tree and git(root, "rev-parse", f"{sha}^") == at.commit
    assert git(root, "show", f"{sha}:docs/MASTER_PLAN.md") == "# plan\n- [~] `T-1` one"
    assert git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", sha) == \
        "Test Person <test@example.invalid>|Test Person <test@example.invalid>|memento: claim T-1 on h1"
    # Unchanged entries keep their modes: the executable script, the link, the other folders.
    assert git(root, "diff-tree", "-r", "--name-only", at.commit, sha).split() == \
        ["docs/MASTER_PLAN.md", "docs/guide/deep.md"]
    git(root, "update-ref", "refs/heads/claimed", sha)  # reachable, so fsck checks it
    git(root, "fsck", "--strict", "--no-dangling")


def test_reading_a_path_the_commit_lacks_or_a_rev_that_is_not_a_commit(tmp_path, git_identity):
    root = repo(tmp_path)
    at = read_at(root, "HEAD", ["docs/none.md", "nowhere/file.md", "README.md/inside"])
    assert at.files == {"docs/none.md": None, "nowhere/file.md": None, "README.md/inside": None}
    with pytest.raises(MementoError):
        read_at(root, "HEAD^{tree}", ["README.md"])
    with pytest.raises(MementoError):
        with_files(at, {"nowhere/file.md": (b"100644", b"x")}, "sha1")


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


def test_a_pack_whose_bytes_changed_is_refused(tmp_path, git_identity, monkeypatch):
    """The pack's own hash is git's check: a bit changed after it was made fails the write (a
    loose object git unpacked before it reached the end may stay, unreferenced)."""
    root = repo(tmp_path)
    for at in (-1, 12):  # the trailer, then the object's header

        def corrupting(args, kw, at=at):
            if args[:1] == ["unpack-objects"]:
                data = bytearray(kw["input"])
                data[at] ^= 1
                kw["input"] = bytes(data)

        watch_git(monkeypatch, [], change=corrupting)
        with pytest.raises(MementoError, match="unpack-objects"):
            write_objects(root, [("blob", b"checked\n")])
    stop_watching_git(monkeypatch)
    assert write_objects(root, [("blob", b"checked\n")]) == [git(root, "hash-object", "--stdin",
                                                                            input=b"checked\n")]


# ---------------------------------------------------------------- replay: what git's rebase makes

PLAN = "".join(f"- [ ] `T-{i}` task {i}\n" for i in range(1, 9))
STATUS = "# status\n\n## [1] Tick #1\n- ok\n"


def append_resolver(base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """The upstream's log with the lines this side appended (the shape of Memento's status log)."""
    return upstream + mine[len(base):]


def never(base: bytes, upstream: bytes, mine: bytes) -> bytes:
    raise AssertionError("git merges this file without a conflict: no resolver is asked")


RESOLVERS = {"docs/TICK_STATUS.md": append_resolver, "docs/MASTER_PLAN.md": never}


def write(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            git(root, "rm", "-q", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(root, "add", rel)


def commit(root: Path, message: str, files: dict[str, str | None], env: dict | None = None) -> str:
    write(root, files)
    git(root, "commit", "-q", "--allow-empty", "-m", message, env=env)
    return git(root, "rev-parse", "HEAD")


def diverged(tmp_path: Path, fmt: str = "sha1") -> tuple[Path, str, str]:
    """A repository whose branch `up` and HEAD (main) went apart from a base: the merge base and
    the upstream's tip. Local commits: a plan edit far from the upstream's (merged by git), a
    status entry both appended (the resolver's), a file in a folder that did not exist, a folder
    emptied, an empty commit (kept), a change the upstream made too (dropped), a person's author."""
    root = repo(tmp_path, fmt)
    base = commit(root, "base", {"docs/MASTER_PLAN.md": PLAN, "docs/TICK_STATUS.md": STATUS, "old/only.txt": "x\n"})
    git(root, "branch", "up")
    git(root, "checkout", "-q", "up")
    commit(root, "upstream: T-1 done", {"docs/MASTER_PLAN.md": PLAN.replace("[ ] `T-1`", "[x] `T-1`"),
                                        "docs/TICK_STATUS.md": STATUS + "## [2] Tick #1 up\n- up\n",
                                        "out/1.txt": "one\n"})
    onto = commit(root, "upstream: readme", {"README.md": "hello from upstream\n"})
    git(root, "checkout", "-q", "main")
    commit(root, "memento: complete T-7 task 7\n\nbody line\n",
           {"docs/MASTER_PLAN.md": PLAN.replace("[ ] `T-7`", "[x] `T-7`"),
            "docs/TICK_STATUS.md": STATUS + "## [3] Tick #2 here\n- here\n", "new/deep/7.txt": "seven\n",
            "old/only.txt": None})
    commit(root, "memento: release T-8", {})
    commit(root, "the same file as upstream's", {"out/1.txt": "one\n"})
    person = {**git_env(), "GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "person@example.invalid",
              "GIT_AUTHOR_DATE": "@1700000000 +0100"}
    commit(root, "a person's commit", {"docs/guide/deep.md": "deeper\n", "bin/run.sh": "#!/bin/sh\necho\n"}, env=person)
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


def objects_now(root: Path) -> str:
    return git(root, "count-objects", "-v")


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
    commit(root, "side", {"side.txt": "side\n"})
    git(root, "merge", "-q", "--no-edit", "main")
    assert replay(root, onto, base, git(root, "rev-parse", "HEAD"), ident, RESOLVERS) is None

    git(root, "checkout", "-q", "-b", "clash", base)
    clash = commit(root, "a file in a folder new", {"new/file.txt": "x\n"})
    git(root, "checkout", "-q", "-b", "up2", onto)
    file_there = commit(root, "a file named new", {"new": "a file\n"})
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
    commit(root, "an awkward name", {"line\nbreak/file.txt": "x\n"})
    tip = git(root, "rev-parse", "HEAD")
    assert replay(root, onto, base, tip, identity_env(root), RESOLVERS) is None


# ---------------------------------------------------------------- a three-way merge without git


def git_merge_file(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    files = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
        files.append(str(tmp_path / name))
    proc = subprocess.run(["git", "merge-file", "-p", "-q", *files], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


FLEET_PLAN = b"".join(b"- [ ] `T-%d` Task %d\n  - verify: `test -f out/%d.txt`\n" % (i, i, i) for i in range(1, 40))


@pytest.mark.parametrize("base, ours, theirs", [
    (FLEET_PLAN, FLEET_PLAN.replace(b"[ ] `T-3`", b"[x] `T-3`"), FLEET_PLAN.replace(b"[ ] `T-30`", b"[~] `T-30`")),  # a fleet's plan
    (FLEET_PLAN, FLEET_PLAN.replace(b"[ ] `T-3`", b"[x] `T-3`"), FLEET_PLAN.replace(b"Task 5\n", b"Task 5\n  - retries: 1\n")),
    (b"a\nb\nc\nd\ne", b"A\nb\nc\nd\ne", b"a\nb\nc\nd\nE"),  # no newline at the end
    (b"a\nb\nc\nd\ne\n", b"", b"a\nb\nc\nd\ne\nf\n"),  # one side emptied it (they meet: git's)
    (b"a\nb\nc\n", b"x\na\nb\nc\n", b"a\nb\nc\ny\n"),  # one at each end
], ids=["plan", "plan-lines-added", "no-final-newline", "emptied", "both-ends"])
def test_changes_apart_merge_as_git_merges_them(tmp_path, base, ours, theirs):
    merged = merge_apart(base, ours, theirs)
    if base != b"a\nb\nc\nd\ne\n":
        assert merged is not None
    assert merged in (None, git_merge_file(tmp_path, base, ours, theirs))
    assert merged is None or merged == git_merge_file(tmp_path, base, ours, theirs)


@pytest.mark.parametrize("ours, theirs", [
    (b"a\nB\nc\nd\n", b"a\nb\nC\nd\n"),  # next to each other
    (b"a\nB\nc\nd\n", b"a\nX\nc\nd\n"),  # the same line, two ways
    (b"a\nB\nc\nd\n", b"a\nB\nc\nd\n"),  # the same change (git merges it; left to git here)
    (b"a\nb\nnew\nc\nd\n", b"a\nb\nother\nc\nd\n"),  # two insertions at one place
    (b"a\nb\x00\nc\nd\n", b"a\nb\nc\nD\n"),  # binary
])
def test_changes_that_meet_are_left_to_git(ours, theirs):
    assert merge_apart(b"a\nb\nc\nd\n", ours, theirs) is None


def test_random_edits_merge_as_git_merges_them(tmp_path):
    """Random edits of a plan-like file (unique task lines between repeated ones, where
    alignments can differ): every merge made here is the one git makes."""
    import random

    chance = random.Random(23)
    made = 0
    for _ in range(200):
        base = []
        for i in range(12):
            base += [b"- [ ] `T-%d` Task %d\n" % (i, i), b"  - verify: `pytest -q`\n", b"\n"][: chance.randint(1, 3)]

        def edited(lines: list[bytes]) -> bytes:
            out = list(lines)
            for _ in range(chance.randint(1, 2)):
                at = chance.randrange(len(out))
                what = chance.choice(["put", "drop", "swap"])
                if what == "put":
                    out.insert(at, chance.choice([b"  - retries: 1\n", b"\n", b"new %d\n" % chance.randrange(99)]))
                elif what == "drop":
                    del out[at]
                else:
                    out[at] = out[at].replace(b"[ ]", b"[x]") if b"[ ]" in out[at] else b"changed\n"
            return b"".join(out)

        ours, theirs = edited(base), edited(base)
        merged = merge_apart(b"".join(base), ours, theirs)
        if merged is not None:
            made += 1
            assert merged == git_merge_file(tmp_path, b"".join(base), ours, theirs)
    assert made > 20  # changes whose pairing every diff must find (the rest is git's)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_short_edits_with_repeated_and_copied_lines_merge_as_git_merges_them(tmp_path, seed):
    """Short files of few distinct lines, edits that copy lines (an anchor's copy makes it no
    anchor), CRLF lines and files without a last newline: a merge made here is git's, always."""
    import random

    chance = random.Random(seed)
    pool = [b"a\n", b"b\n", b"c\n", b"\n", b"a\r\n", b"  - retries: 1\n"]
    made = 0
    for _ in range(600):
        base = [chance.choice(pool) if chance.random() < 0.6 else b"u%d\n" % chance.randrange(1000)
                for _ in range(chance.randint(0, 9))]

        def edited(lines: list[bytes]) -> list[bytes]:
            out = list(lines)
            for _ in range(chance.randint(1, 3)):
                at = chance.randrange(len(out) + 1)
                what = chance.choice(["put", "drop", "swap", "copy"])
                new = chance.choice([*pool, b"n%d\n" % chance.randrange(9), b"z"])
                if what == "copy" and out:
                    out.insert(at, chance.choice(out))
                elif what == "put" or not out or at == len(out):
                    out.insert(at, new)
                elif what == "drop":
                    del out[at]
                else:
                    out[at] = new
            return out

        def joined(lines: list[bytes]) -> bytes:
            data = b"".join(lines)
            return data[:-1] if chance.random() < 0.2 and data.endswith(b"\n") else data

        base_bytes, ours, theirs = joined(base), joined(edited(base)), joined(edited(base))
        merged = merge_apart(base_bytes, ours, theirs)
        if merged is not None:
            made += 1
            assert merged == git_merge_file(tmp_path, base_bytes, ours, theirs), (base_bytes, ours, theirs)
    assert made > 15


def test_changes_among_repeated_lines_only_are_left_to_git(tmp_path):
    """Git pairs these lines otherwise than difflib would, and conflicts where difflib sees
    changes apart: only a line base has once may stand between changes merged here."""
    base = b"task\ny\nz\ny\nz\nz\nx\ntask\ny\ntask\ntask\ny\ny\ny\nz\ntask\ny\nx\nx\nz\ny\ny\ntask\ntask\nz\nx\nz\ntask\nz\nz\n"
    ours = b"task\ny\nz\ny\nz\nz\nx\ntask\ny\ntask\ntask\ny\ny\nnew 24\ny\nz\ntask\ny\nx\nx\nz\ny\ntask\ntask\nz\nx\nz\ntask\nz\nz\n"
    theirs = base.replace(b"z\ny\ny\ntask\n", b"z\ny\ny\nnew 4\ntask\n")
    assert git_merge_file(tmp_path, base, ours, theirs) is None
    assert merge_apart(base, ours, theirs) is None
    # A side that puts in a copy of the only line between the changes makes it no anchor.
    base, ours, theirs = b"T-0\nT-1\nr\n", b"T-0\nT-1\nr\nr\n", b"T-1\nr\nr\n"
    assert merge_apart(base, ours, theirs) is None
    assert git_merge_file(tmp_path, base, ours, theirs) == b"T-1\nr\nr\n"


@pytest.mark.parametrize("ours, theirs, meet", [
    (b"a\nB\nc\nd\n", b"a\nX\nc\nd\n", True),  # one line, two ways
    (b"a\nb\nnew\nc\nd\n", b"a\nb\nother\nc\nd\n", True),  # two insertions at one place
    (b"a\nB\nC\nd\n", b"a\nb\nX\nd\n", True),  # ranges that overlap
    (b"a\nB\nc\nd\n", b"a\nB\nc\nd\n", False),  # the same change: git takes it once
    (b"a\nB\nc\nd\n", b"a\nb\nC\nd\n", True),  # next to each other: git conflicts too
    (b"a\nB\nc\nd\n", b"a\nb\nc\nD\n", False),
])
def test_changes_that_meet_go_straight_to_the_resolver(tmp_path, ours, theirs, meet):
    base = b"a\nb\nc\nd\n"
    assert changes_meet(base, ours, theirs) is meet
    if meet:  # git conflicts too: asking it would only cost a process
        assert git_merge_file(tmp_path, base, ours, theirs) is None
    meta = FLEET_PLAN.replace(b"T-1`", b"T-1`\n- completed_tasks: 0")
    assert changes_meet(meta, meta.replace(b"tasks: 0", b"tasks: 1"), meta.replace(b"tasks: 0", b"tasks: 2"))


# ---------------------------------------------------------------- a commit of paths without an index


def _both_ways(tmp_path: Path, monkeypatch, fmt: str, change, paths: list[str], blobs=None, sub: str = ""):
    """The same change committed in two copies of one repository, by commit_here and by
    git's own commands (commit_here told to decline): (tree here, tree by git)."""
    base = repo(tmp_path, fmt)
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
    root = repo(tmp_path)
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
    root = repo(tmp_path)
    head = git(root, "rev-parse", "HEAD")
    blob = git(root, "hash-object", "-w", "--stdin", input=b"[core]\n\thooksPath = /tmp\n")
    ident = identity_env(root)
    assert commit_here(root, [path], "m", ident, {path: (mode, blob)}) is None
    with pytest.raises(MementoError):
        commit_paths(root, [path], "m", blobs={path: (mode, blob)}, build=commit_here)
    assert git(root, "rev-parse", "HEAD") == head


# ---------------------------------------------------------------- the merge against git merge-file

MOVED = [  # a block moved on one side, a line of it changed on the other: git conflicts
    (b"L0\nL1\nL2\nL3\n", b"L2\nL3\nL0\nL1\n", b"L0\nchg0\nL1\nL2\nL3\n"),
    (b"L0\nL1\nL2\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n", b"L4\nL5\nL6\nL7\nL0\nL1\nL2\nL3\nL8\nL9\n",
     b"L0\nL1\nchg1\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n"),
    (b"L0\nL1\nL2\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n", b"L0\nL5\nL6\nL7\nL8\nL1\nL2\nL3\nL4\nL9\n",
     b"L0\nL1\nL2\nL3\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n"),
]


@pytest.mark.parametrize("base, ours, theirs", MOVED, ids=["block-first", "block-down", "copied-line"])
def test_a_moved_block_changed_on_the_other_side_is_git_s_conflict(tmp_path, base, ours, theirs):
    """It was merged here (the move's lines paired one way, the other side's change set apart
    from it) where git pairs them the other way and conflicts: the resolver never saw it."""
    assert git_merge_file(tmp_path, base, ours, theirs) is None
    assert merge_apart(base, ours, theirs) is None
    assert merge_file(tmp_path, base, ours, theirs) is None


_POOL = [b"a\n", b"b\n", b"c\n", b"\n", b"a\r\n", b"b\r\n", b"---\n", b"  - retries: 1\n", b"- [ ] `T-1` one\n",
         b"- [x] `T-1` one\n", b"- **Status**: ok\n"]


@st.composite
def three_versions(draw) -> tuple[bytes, bytes, bytes]:
    """A base of lines (many repeated, CRLF among them) and two sides, each edited by moving a
    block, changing, putting in, copying or taking out lines; any may lose its last newline or
    be empty."""
    line = st.one_of(st.sampled_from(_POOL), st.integers(0, 30).map(lambda n: b"u%d\n" % n))
    base = draw(st.lists(line, max_size=14))

    def edited() -> list[bytes]:
        out = list(base)
        for _ in range(draw(st.integers(0, 3))):
            what = draw(st.sampled_from(["move", "move", "change", "put", "copy", "drop", "empty"]))
            at = draw(st.integers(0, len(out)))
            if what == "move" and out:
                end = draw(st.integers(at, min(len(out), at + 4)))
                block, rest = out[at:end], out[:at] + out[end:]
                to = draw(st.integers(0, len(rest)))
                out = rest[:to] + block + rest[to:]
            elif what == "change" and at < len(out):
                out[at] = draw(line)
            elif what == "put":
                out.insert(at, draw(line))
            elif what == "copy" and out:
                out.insert(at, draw(st.sampled_from(out)))
            elif what == "drop" and at < len(out):
                del out[at]
            elif what == "empty":
                out = []
        return out

    def joined(lines: list[bytes]) -> bytes:
        data = b"".join(lines)
        return data[:-1] if data.endswith(b"\n") and draw(st.booleans()) and draw(st.booleans()) else data

    return joined(base), joined(edited()), joined(edited())


def _merges_as_git(tmp_path: Path, versions: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = versions
    by_git = git_merge_file(tmp_path, base, ours, theirs)
    merged = merge_apart(base, ours, theirs)
    assert merged is None or merged == by_git, (base, ours, theirs)
    assert merge_file(tmp_path, base, ours, theirs) == by_git
    if changes_meet(base, ours, theirs) or both_appended(base, ours, theirs):
        assert by_git is None, "sent to the resolver where git merges it"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(versions=three_versions())
def test_a_merge_is_the_one_git_merge_file_makes(tmp_path, versions):
    """Merged here only as git merges it, and sent straight to the resolver only where git conflicts."""
    _merges_as_git(tmp_path, versions)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(versions=three_versions())
def test_a_merge_is_the_one_git_merge_file_makes_heavy(tmp_path, versions):
    _merges_as_git(tmp_path, versions)


def test_changes_git_merges_are_not_sent_to_the_resolver(tmp_path):
    """Changes difflib saw overlapping where git's diff pairs the lines otherwise and merges
    them: the resolver took the file in git's place."""
    cases = 0
    import random

    chance = random.Random(7)
    for _ in range(3000):
        base = [b"L%d\n" % i for i in range(chance.randint(0, 14))]

        def edited(lines: list[bytes]) -> list[bytes]:
            out = list(lines)
            if not out:
                return [b"new\n"]
            at = chance.randrange(len(out))
            end = min(len(out), at + chance.randint(1, 4))
            what = chance.choice(["move", "change", "put", "drop", "copy"])
            if what == "move":
                block = out[at:end]
                del out[at:end]
                to = chance.randrange(len(out) + 1)
                out[to:to] = block
            elif what == "change":
                out[at] = b"chg%d\n" % chance.randrange(3)
            elif what == "put":
                out.insert(at, b"ins%d\n" % chance.randrange(3))
            elif what == "drop":
                del out[at:end]
            else:
                out.insert(at, out[at])
            return out

        ours, theirs = edited(base), edited(base)
        if chance.random() < 0.3:
            theirs = edited(theirs)
        b, o, t = b"".join(base), b"".join(ours), b"".join(theirs)
        if changes_meet(b, o, t):
            cases += 1
            assert git_merge_file(tmp_path, b, o, t) is None, (b, o, t)
    assert cases > 100


# ---------------------------------------------------------------- the commit builder against git's index

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


# ---------------------------------------------------------------- the replay against git rebase

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
    root = repo(tmp_path)
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "up")
    onto = commit(root, "upstream", {"README.md": "changed upstream\n"})
    git(root, "checkout", "-q", "main")
    tip = commit(root, "memento: release T-8", {})
    new_tip, moved = replay(root, onto, base, tip, identity_env(root), RESOLVERS)
    assert list(moved) == [tip]
    assert git(root, "log", "--format=%T %s", f"{onto}..{new_tip}") == \
        f"{git(root, 'rev-parse', f'{onto}^{{tree}}')} memento: release T-8"


def test_a_commit_whose_patch_is_upstream_is_left_to_git(tmp_path, git_identity):
    """Upstream made this host's change, then changed it back: git's rebase drops this host's
    commit (its patch is upstream's); replayed, it undid the upstream's later change."""
    root = repo(tmp_path)
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "up")
    commit(root, "the same change", {"README.md": "both\n"})
    onto = commit(root, "changed back", {"README.md": "hello\n"})
    git(root, "checkout", "-q", "main")
    tip = commit(root, "the same change, here", {"README.md": "both\n"})
    before = objects_now(root)
    assert replay(root, onto, base, tip, identity_env(root), RESOLVERS) is None
    assert objects_now(root) == before
    git_rebase(root, onto, RESOLVERS)
    assert git(root, "rev-parse", "HEAD") == onto  # git dropped it


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_an_amend_made_here_is_the_one_git_makes_and_never_replaces_a_head_that_moved(tmp_path, git_identity, fmt):
    """amend_paths with commit_here (the tick folding its documents into its commit, issue
    42: five git commands where git's way starts ten): the same tree, parents and message as git's
    own amend, the index agreeing for those paths; with ``onto`` another commit than HEAD, nothing
    is changed and None comes back."""
    base = repo(tmp_path, fmt)
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
    root = repo(tmp_path)
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
    root = repo(tmp_path)
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
    root = repo(tmp_path)
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


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_head_read_from_loose_objects_is_what_cat_file_reads(tmp_path, git_identity, monkeypatch, fmt):
    """read_at of HEAD for a commit (issue 42): from loose objects, each checked against its id,
    with no process; the same commit, trees and bytes as git cat-file --batch gives, folders
    absent or a file where a folder was asked for included; packed objects go to git."""
    root = repo(tmp_path, fmt)
    within = ["docs/guide/deep.md", "docs/none/x.md", "README.md/under", "new/a/b.md", "bin/run.sh"]
    started: list[str] = []
    repo_dirs(root)
    watch_git(monkeypatch, started)
    here = read_at(root, "HEAD", [], within=within)
    assert started == []
    monkeypatch.setattr(trees_module, "_head_loose", lambda *a: None)
    by_git = read_at(root, "HEAD", [], within=within)
    assert started == ["cat-file"]
    assert here == by_git and here.raw == by_git.raw and set(here.trees) == {"", "docs", "docs/guide", "bin"}
    monkeypatch.undo()
    git(root, "repack", "-adq")
    git(root, "prune-packed")
    repo_dirs(root)
    started.clear()
    watch_git(monkeypatch, started)
    assert read_at(root, "HEAD", [], within=within) == by_git
    assert started == ["cat-file"]
