"""literal.py: text from files loses its terminal escapes and controls, and its markup stays text."""

from __future__ import annotations

from memento_tui.literal import clean, literal
from tests.tui.conftest import HOSTILE

ESCAPES = (
    "\x1b[31mred\x1b[0m plain"  # colour
    " \x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write the clipboard
    " \x1b[2J\x1b[H\x1b[10;5Hmoved"  # clear screen, cursor home, cursor move
    " \x1b]8;;file:///etc/passwd\x1b\\link\x1b]8;;\x1b\\"  # OSC 8 hyperlink
    " bell\x07 back\x08space\r carriage"
)


def test_clean_removes_every_escape_and_control():
    out = clean(ESCAPES)
    assert "\x1b" not in out and "\x07" not in out and "\x08" not in out and "\r" not in out
    assert "red plain" in out and "moved" in out and "link" in out
    assert "ZWNobyBwd25lZA" not in out  # the OSC 52 payload is gone with its sequence


def test_literal_keeps_markup_as_text():
    for text in HOSTILE:
        assert literal(text).plain == text
        assert not literal(text).spans
