"""Text from files, made literal: no markup, no terminal escape sequences (SPEC §6).

Everything a file says reaches the screen through :func:`literal`, which builds a
Rich ``Text`` (never parsed as markup) from :func:`clean`, which removes ANSI
CSI/OSC/DCS sequences (colours, cursor movement, OSC 52 clipboard writes) and
replaces every other control character with a visible placeholder.
"""

from __future__ import annotations

import re

from rich.text import Text

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), DCS/SOS/PM/APC (ESC P|X|^|_ … ST),
# two-byte escapes (ESC x), and the 8-bit C1 forms of CSI and OSC.
_ESCAPE_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x9c|\x1b\\)?"
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CR_RE = re.compile(r"\r(?!\n)")


def clean(text: str) -> str:
    """``text`` without escape sequences; other control characters become ``�``; tabs kept."""
    if not text:
        return ""
    text = _ESCAPE_RE.sub("", text)
    text = text.replace("\r\n", "\n")
    text = _CR_RE.sub("", text)  # a bare CR would rewind the line in a terminal
    # U+FE0F asks for the emoji form ("⚠️"): terminals and tmux disagree about its
    # width and the line shifts; the text form ("⚠") has one agreed width.
    text = text.replace("\ufe0f", "")
    return _CONTROL_RE.sub("\ufffd", text)


def clean_line(text: str) -> str:
    """One line for a table cell: cleaned, line breaks folded to spaces."""
    return " ".join(clean(text).split("\n")).expandtabs(4)


def literal(text: str | None, style: str = "", *, one_line: bool = False) -> Text:
    """A Text showing ``text`` exactly as written (markup off, escapes removed)."""
    value = clean_line(text or "") if one_line else clean(text or "").expandtabs(4)
    return Text(value, style=style, no_wrap=one_line, overflow="ellipsis" if one_line else None, end="")
