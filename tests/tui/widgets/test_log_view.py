"""The lazy log: line index, partial lines, growth (follow), truncation; the viewer follows a growing log."""

from __future__ import annotations

from memento_tui.app import MementoApp
from memento_tui.lazy_file import LineIndex
from memento_tui.screens.log import LogScreen
from memento_tui.widgets.log_view import LazyLog
from tests.tui.pilot import screen_text, settle, wait_for


def scan_all(index: LineIndex) -> int:
    count = index.line_count
    for seen in index.scan():
        count = seen
    return count


def test_index_finds_lines_and_reads_a_window(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"".join(f"line {i}\n".encode() for i in range(10_000)))
    index = LineIndex(path)
    assert scan_all(index) == 10_000
    assert index.read_lines(5000, 3) == ["line 5000", "line 5001", "line 5002"]
    assert index.read_lines(9999, 10) == ["line 9999"]
    assert index.read_lines(10_000, 1) == []


def test_partial_last_line_growth_and_truncation(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\nthr")
    index = LineIndex(path)
    assert scan_all(index) == 3
    assert index.read_lines(0, 5) == ["one", "two", "thr"]
    with path.open("ab") as fh:
        fh.write(b"ee\nfour\n")
    assert scan_all(index) == 4
    assert index.read_lines(2, 5) == ["three", "four"]
    path.write_bytes(b"new\r\n")  # replaced by a shorter file
    assert scan_all(index) == 1
    assert index.read_lines(0, 5) == ["new"]


def test_bad_utf8_and_huge_lines_do_not_break_reading(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"\xff\xfe bad\n" + b"x" * 100_000 + b"\nend\n")
    index = LineIndex(path)
    assert scan_all(index) == 3
    lines = index.read_lines(0, 3)
    assert lines[0].endswith(" bad") and len(lines[1]) <= 4096 and lines[2] == "end"


async def test_follow_shows_lines_as_they_are_appended(scripted):
    log = scripted / "logs" / "tick_live.log"
    log.write_text("".join(f"line {i}\n" for i in range(200)))
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await app.push_screen(LogScreen(log, "logs/tick_live.log", follow=True))
        await pilot.pause()
        view = app.screen.query_one(LazyLog)
        assert await wait_for(pilot, lambda: view.line_count == 200 and "line 199" in screen_text(app))
        with log.open("a") as fh:
            fh.write("appended while following\n")
        assert await wait_for(pilot, lambda: "appended while following" in screen_text(app))
        assert view.line_count == 201
        await pilot.press("F")  # stop following
        await pilot.pause()
        assert not view.follow
        await pilot.press("home")
        assert await wait_for(pilot, lambda: "line 0" in screen_text(app))
