"""merge.py against git merge-file: the fast path merges as git merges, and leaves the rest to git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.git.merge import both_appended, changes_meet, merge_apart, merge_file


def git_merge_file(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    files = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
        files.append(str(tmp_path / name))
    proc = subprocess.run(["git", "merge-file", "-p", "-q", *files], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


FLEET_PLAN = b"".join(b"- [ ] `T-%d` Task %d\n  - verify: `test -f out/%d.txt`\n" % (i, i, i) for i in range(1, 40))

MOVED = [  # a block moved on one side, a line of it changed on the other: git conflicts
    (b"L0\nL1\nL2\nL3\n", b"L2\nL3\nL0\nL1\n", b"L0\nchg0\nL1\nL2\nL3\n"),
    (b"L0\nL1\nL2\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n", b"L4\nL5\nL6\nL7\nL0\nL1\nL2\nL3\nL8\nL9\n",
     b"L0\nL1\nchg1\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n"),
    (b"L0\nL1\nL2\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n", b"L0\nL5\nL6\nL7\nL8\nL1\nL2\nL3\nL4\nL9\n",
     b"L0\nL1\nL2\nL3\nL3\nL4\nL5\nL6\nL7\nL8\nL9\n"),
]

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


@pytest.mark.parametrize("base, ours, theirs", MOVED, ids=["block-first", "block-down", "copied-line"])
def test_a_moved_block_changed_on_the_other_side_is_git_s_conflict(tmp_path, base, ours, theirs):
    """It was merged here (the move's lines paired one way, the other side's change set apart
    from it) where git pairs them the other way and conflicts: the resolver never saw it."""
    assert git_merge_file(tmp_path, base, ours, theirs) is None
    assert merge_apart(base, ours, theirs) is None
    assert merge_file(tmp_path, base, ours, theirs) is None


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
