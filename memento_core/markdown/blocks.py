"""Fenced code blocks and HTML comment blocks: the lines whose structure does not count.

The plan, notes and status-log scanners recognise headings, tasks and fields
only outside these blocks; the rules live here, once. They are the parts of
CommonMark those files need:

- A fence opens on a line of at most 3 spaces of indentation and a run of at
  least 3 backticks or 3 tildes; the rest of the line is its info string,
  which after backticks may not hold a backtick (```` ```a`b ```` is text).
- It closes on a line of at most 3 spaces, a run of the same character at
  least as long as the opening one, then only spaces or tabs. An unclosed
  fence runs to the end of the file.
- A comment block opens on a line whose first non-blank text (at most 3
  spaces in) is ``<!--`` and ends on the first line holding ``-->``, which
  may be the same line after the ``<!--``. Every line of it is comment.
- Inside a fence ``<!--`` opens nothing; inside a comment a fence opens nothing.

Also here, being the same kind of rule: the ``---`` separator line (a thematic
break) that ends a note or a status entry.

Lines are given without their line ending; a trailing ``\\r`` is tolerated.
Nothing here imports mistune: a paused tick parses the plan with this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache

# The start of an opening fence, for scanners that search a whole text with one
# regex (the plan's): such a match is confirmed with open_fence.
FENCE_START = r" {0,3}(?:`{3,}|~{3,})"

_OPEN_RE = re.compile(r"(?P<indent> {0,3})(?P<marker>`{3,}|~{3,})(?P<info>.*)", re.S)
_COMMENT_RE = re.compile(r" {0,3}<!--")
_BACKTICKS_RE = re.compile(r"`+")
SEPARATOR_RE = re.compile(r"^ {0,3}-{3,}[ \t]*$")
_MAY_OPEN = ("`", "~", "<", " ")  # how a line that opens a block can start


class Kind(IntEnum):
    """What a line is, as far as blocks go."""

    TEXT = 0  # outside any block: the file's own structure may be here
    FENCE_OPEN = 1
    FENCE_BODY = 2
    FENCE_CLOSE = 3
    COMMENT = 4  # any line of a comment block, the opening and closing lines included


# Module-level names: the scanners compare a kind per line.
TEXT = Kind.TEXT
FENCE_OPEN = Kind.FENCE_OPEN
FENCE_BODY = Kind.FENCE_BODY
FENCE_CLOSE = Kind.FENCE_CLOSE
COMMENT = Kind.COMMENT


@lru_cache(maxsize=64)
def _closer(char: str, length: int) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}[ \t\r]*$", re.M)


@dataclass(frozen=True, slots=True)
class Fence:
    """An open fence: its marker (```` ``` ````, ``~~~~``…) and the opening line's indentation."""

    marker: str
    indent: int
    _closer: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Compiled once per fence: every line inside it is tried against it.
        object.__setattr__(self, "_closer", _closer(self.marker[0], len(self.marker)))

    def closed_by(self, line: str) -> bool:
        """Whether ``line`` closes this fence."""
        return self._closer.match(line) is not None

    def find_close(self, text: str, pos: int) -> re.Match[str] | None:
        """The first closing line in ``text`` after offset ``pos`` (a line start or the end of
        the opening line), for scanners that search a whole text rather than walk lines."""
        return self._closer.search(text, pos)


def open_fence(line: str) -> Fence | None:
    """The fence ``line`` opens, or None when it opens none."""
    m = _OPEN_RE.match(line)
    if m is None:
        return None
    marker = m.group("marker")
    if marker[0] == "`" and "`" in m.group("info"):
        return None
    return Fence(marker, len(m.group("indent")))


def fence_for(text: str) -> str:
    """A backtick fence no line of ``text`` can close: longer than its longest run of backticks
    (at least 3). Runs of tildes never close a backtick fence, so they need no counting."""
    return "`" * max(3, max((len(run) for run in _BACKTICKS_RE.findall(text)), default=0) + 1)


def fenced(text: str, info: str = "") -> list[str]:
    """``text`` as the lines of one fenced code block (``info`` its info string) that nothing in
    it can close or reopen: text an agent or a project controls, put in a prompt or the status
    log, stays text (SPEC §13 "Either way"). Every fence Memento writes around such text is this."""
    fence = fence_for(text)
    return [fence + info, *text.replace("\r\n", "\n").split("\n"), fence]


def opens_comment(line: str) -> bool:
    """Whether ``line`` starts an HTML comment block (the block may end on this same line)."""
    return _COMMENT_RE.match(line) is not None


def comment_stays_open(line: str) -> bool:
    """For a line that starts a comment: whether the block goes on (no ``-->`` after the ``<!--``)."""
    return "-->" not in line[line.index("<!--") + 4 :]


class BlockScanner:
    """Walks a file's lines in order and says of each what it is (see :class:`Kind`).

    After the last line, ``fence`` is the fence left open (None when all are
    closed) and ``in_comment`` whether a comment block is still open.
    """

    __slots__ = ("fence", "in_comment")

    def __init__(self) -> None:
        self.fence: Fence | None = None
        self.in_comment = False

    def step(self, line: str) -> Kind:
        """The kind of the next line (given without its line ending)."""
        fence = self.fence
        if fence is not None:
            if fence.closed_by(line):
                self.fence = None
                return FENCE_CLOSE
            return FENCE_BODY
        if self.in_comment:
            if "-->" in line:
                self.in_comment = False
            return COMMENT
        if not line.startswith(_MAY_OPEN):
            return TEXT  # most lines: one look at the first character
        first = line.lstrip(" ")[:1]
        if first == "`" or first == "~":
            fence = open_fence(line)
            if fence is not None:
                self.fence = fence
                return FENCE_OPEN
        elif first == "<" and opens_comment(line):
            self.in_comment = comment_stays_open(line)
            return COMMENT
        return TEXT
