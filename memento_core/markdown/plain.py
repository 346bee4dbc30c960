"""The plain shape of the documents Memento writes (CURRENT_STATE.md, SPEC §8), read without mistune.

Every tick rewrites the checkpoint and reads the one it replaces (a person's Key Decisions are
carried over); mistune costs a tick more CPU to import than the rest of that step (issue 42).
What Memento writes, and most of what a person adds to it, is a small subset of Markdown:
``# Title``, ``## Section`` headings, paragraphs of plain text lines, ``- item`` lists, a
``> quote`` line, code spans in single backticks. :func:`read_plain` reads exactly that subset
and returns what :func:`prose.parse_document` would say of it; anything outside it (a link, an
escape, an HTML tag, an indented line, a block starting where another ends without a blank
line between them, …) gives None and the caller parses with mistune. tests/core/markdown/test_plain.py
holds the two readers to the same answer, hostile texts included.
"""

from __future__ import annotations

import re

# What may start inline markup mistune would read (an escape, an entity, an autolink or HTML, a
# link or an image: brackets followed by a target or a label; brackets alone, as in a task's
# `[MODULE:cli]`, are text while no line defines a reference, and a line starting with one is
# not read here) or what mistune and str.splitlines treat apart (CR, NUL, the Unicode line and
# paragraph separators): a text holding one is not plain. Backticks are read here (code spans),
# `*` and `_` are text (the prose reader parses no emphasis).
_NOT_PLAIN = re.compile(r"[\\<&\r\t\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]|\]\s*[(\[]")
# A block-level marker at the start of a line, other than the ones read below: indented code,
# a heading of another level or without its space, a quote, a list bullet or an ordered item,
# a thematic break or setext underline, a tilde fence (a backtick fence is an empty code span
# below), a table, a reference definition.
_BLOCK_START = re.compile(r"[ #>\-*+=_|\[]|~~~|\d{1,9}[.)]")
_HEADING = re.compile(r"(#{1,2}) (?=\S)(.*)")


def _inline(text: str) -> str | None:
    """What mistune's inline text of ``text`` is (prose.inline_text), or None when that is not plain."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: mistune pairs runs by length, not read here
        return None
    for i, part in enumerate(parts):
        if i % 2 and (not part or part[0] == " " or part[-1] == " "):
            return None  # `` (a longer run), or a code span's padding mistune strips
    return " ".join(text.split())


def _line_text(line: str) -> str | None:
    """The inline text of a paragraph line (or a list item's or a quote's content)."""
    if not line.strip() or _BLOCK_START.match(line):
        return None
    return _inline(line)


def read_plain(text: str) -> tuple[str, list[str], dict[str, list[str]], list[str]] | None:
    """(title, preamble lines, each section's lines, the section titles in order) as
    :func:`prose.parse_document` reads them (``Section.lines``), or None when ``text`` is not
    in the plain shape."""
    if _NOT_PLAIN.search(text):
        return None
    title = ""
    preamble: list[str] = []
    sections: dict[str, list[str]] = {}
    order: list[str] = []
    lines: list[str] = preamble  # where the current block's lines go
    block = ""  # the open block: "" (none), "para", "list", "quote"
    for line in text.split("\n"):
        if not line.strip(" "):
            if line:
                return None  # spaces only: CommonMark's blank line, but keep the model small
            block = ""
            continue
        heading = _HEADING.fullmatch(line)
        if heading:
            if block:
                return None  # a heading right under a paragraph, an item or a quote
            words = _inline(heading.group(2))
            if not words or "#" in words:
                return None  # closing hashes, an empty heading
            if len(heading.group(1)) == 1:
                if title:
                    return None  # a second level-1 heading is a block in a section
                title = words
            else:
                order.append(words)
                current: list[str] = []
                sections.setdefault(words, current)
                lines = current  # a repeated title's lines are dropped, as parse_document drops them
            continue
        if line.startswith("- "):
            if block not in ("", "list"):
                return None  # a list interrupting a paragraph or a quote
            item = _line_text(line[2:])
            if item is None:
                return None
            lines.append(item)
            block = "list"
        elif line.startswith("> "):
            if block not in ("", "quote"):
                return None
            said = _line_text(line[2:])
            if said is None:
                return None
            if block == "quote":
                lines[-1] = f"{lines[-1]} {said}"
            else:
                lines.append(said)
            block = "quote"
        else:
            if block not in ("", "para"):
                return None  # a lazy continuation line of an item or a quote
            words = _line_text(line)
            if words is None:
                return None
            if block == "para":
                lines[-1] = f"{lines[-1]} {words}"
            else:
                lines.append(words)
            block = "para"
    return title, preamble, sections, order
