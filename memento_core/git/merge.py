"""Git's three-way merge of one file (SPEC §12): ``git merge-file``, and its fast path, the two
sides' changes merged here when git's diff of each can only be one and they do not meet
(:func:`merge_apart`), differentially tested against git itself.
"""

from __future__ import annotations

import collections
import re
import tempfile
from pathlib import Path

from .run import run_git


def both_appended(base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether both sides only added different lines at the end of ``base`` (a log both wrote
    to): git's merge conflicts there, so it is not asked."""
    if base and not base.endswith(b"\n"):
        return False
    return (ours.startswith(base) and theirs.startswith(base) and len(ours) > len(base) < len(theirs)
            and not ours.startswith(theirs) and not theirs.startswith(ours))


def merge_file(root: Path, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """Git's own three-way merge of one file's bytes (``git merge-file -p``); None when it
    conflicts (or git could not merge them: binary data). Changes every diff pairs alike, with
    an unchanged line between every one of one side and every one of the other, are merged here
    (:func:`merge_apart`), as git merges them: a fleet's replay merges the plan once a replayed
    commit, and a process started for each, on hosts that race, was five a task. Anything else
    (a status log's entries put in among its repeated lines, a block moved) is git's."""
    merged = merge_apart(base, ours, theirs)
    if merged is not None:
        return merged
    with tempfile.TemporaryDirectory(prefix="memento-merge-") as tmp:
        files = []
        for name, content in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(tmp) / name).write_bytes(content)
            files.append(str(Path(tmp) / name))
        proc = run_git(Path(root), ["merge-file", "-p", "-q", *files], check=False)
    return proc.stdout if proc.returncode == 0 else None


_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


def _lines(data: bytes) -> list[bytes]:
    """``data`` cut after each newline, as git's merge cuts it (the last line may lack one)."""
    return _LINE.findall(data)


def changes_meet(base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether git's merge must conflict: git's diff of each side can only be one
    (:func:`_forced_hunks`), and changes of the two sides that overlap or touch (no unchanged
    line of base between them) leave that stretch of base two different ways. Git is then not
    asked, and the document's resolver, which merges any two versions, merges them (a fleet's
    results all change the plan's Meta counters; their replay goes to the plan's resolver
    straight away). False where git might merge them (it is asked)."""
    if b"\0" in base or b"\0" in ours or b"\0" in theirs:
        return False
    lines = _lines(base)
    mine, other = _forced_hunks(lines, _lines(ours)), _forced_hunks(lines, _lines(theirs))
    if not mine or not other:
        return False
    hunks = sorted([(start, end, put, 0) for start, end, put in mine] +
                   [(start, end, put, 1) for start, end, put in other], key=lambda hunk: (hunk[0], hunk[1]))
    group: list[tuple[int, int, list[bytes], int]] = []
    for hunk in [*hunks, None]:
        if hunk is not None and group and hunk[0] <= max(h[1] for h in group):
            group.append(hunk)  # touches the stretch so far: git's merge joins them
            continue
        if len({h[3] for h in group}) == 2:
            start, end = group[0][0], max(h[1] for h in group)
            versions = []
            for side in (0, 1):
                out, at = [], start
                for h_start, h_end, put, _ in (h for h in group if h[3] == side):
                    out += lines[at:h_start] + put
                    at = h_end
                versions.append(out + lines[at:end])
            if versions[0] != versions[1]:
                return True
        group = [hunk] if hunk is not None else []
    return False


def merge_apart(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The two sides' changes of ``base`` both applied, as ``git merge-file`` applies them, when
    git's diff of each side can only be one (:func:`_forced_hunks`) and a line neither side
    changed stands between every change of one side and every change of the other; None for
    any other case (changes that meet, touch or are the same, a block moved, a repeated line
    put in or taken out, binary data), which git's merge decides.

    Why it is git's merge: with each side's changes known as git's diff finds them, git's
    merge takes both sides' changes where an unchanged line of base stands between them
    (``xdl_merge``), and puts in each change's lines as that side has them."""
    if b"\0" in base or b"\0" in ours or b"\0" in theirs:
        return None
    lines = _lines(base)
    mine, other = _forced_hunks(lines, _lines(ours)), _forced_hunks(lines, _lines(theirs))
    if mine is None or other is None:
        return None
    if any(not (a2 < b1 or b2 < a1) for a1, a2, _ in mine for b1, b2, _ in other):
        return None
    out, at = [], 0
    for start, end, put in sorted(mine + other, key=lambda hunk: (hunk[0], hunk[1])):
        out += lines[at:start] + put
        at = end
    return b"".join(out + lines[at:])


def _forced_hunks(base: list[bytes], side: list[bytes]) -> list[tuple[int, int, list[bytes]]] | None:
    """What ``side`` changed of ``base`` ((start, end, the lines put there) in base's lines) when
    every diff, git's among them, must find just that; else None.

    Take out of each the lines the other has nowhere (no diff can pair them): when what is left
    is the same sequence in both, pairing all of it is the one longest common subsequence, so
    git's diff (Myers, on the lines its preprocessing keeps) pairs it, and the lines taken out
    are the changes. Git's preprocessing also sets aside a line the other side has many times
    when it lies between unpaired lines both ways (``xdl_clean_mmatch``): where that may happen
    (a line the other has twice or more, reaching unpaired lines above and below through such
    lines) it is left to git. Git slides a change only past a line equal to the change's other
    end, and a change here holds no line the other side has: none slides."""
    in_side, in_base = collections.Counter(side), collections.Counter(base)
    kept_base = [at for at, line in enumerate(base) if line in in_side]
    kept_side = [at for at, line in enumerate(side) if line in in_base]
    if [base[at] for at in kept_base] != [side[at] for at in kept_side]:
        return None  # a line moved, or one the other has put in or taken out: git pairs them its way
    if _may_set_aside(base, in_side) or _may_set_aside(side, in_base):
        return None
    hunks, was_base, was_side = [], 0, 0
    for at_base, at_side in [*zip(kept_base, kept_side, strict=True), (len(base), len(side))]:
        if at_base > was_base or at_side > was_side:
            hunks.append((was_base, at_base, side[was_side:at_side]))
        was_base, was_side = at_base + 1, at_side + 1
    return hunks


def _may_set_aside(lines: list[bytes], other: collections.Counter) -> bool:
    """Whether git's diff could set aside one of ``lines`` as a line ``other`` has many times
    (``xdl_cleanup_records``): one ``other`` has twice or more (git's threshold is at least
    that) from which, through such lines, an unpaired line is reached both above and below."""
    many = [other[line] >= 2 for line in lines]
    unpaired = [other[line] == 0 for line in lines]
    reach_up, seen = [], False
    for at in range(len(lines)):
        reach_up.append(seen)
        seen = unpaired[at] or (seen and many[at])
    seen = False
    for at in range(len(lines) - 1, -1, -1):
        if many[at] and reach_up[at] and seen:
            return True
        seen = unpaired[at] or (seen and many[at])
    return False
