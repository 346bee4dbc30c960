"""A lazy log viewer: only the lines on screen are read; huge logs open at once (toolong's idea).

The line index is built in a thread worker (mmap + find, a chunk at a time);
the visible window is read in a thread worker too, and rendered when it
arrives. With ``follow`` on, appended bytes are indexed every quarter second
and the view stays at the end, like ``tail -f``. Every line is cleaned of
escape sequences and rendered literally.
"""

from __future__ import annotations

from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from ..lazy_file import LineIndex
from ..literal import clean

WINDOW_MARGIN = 50


class LazyLog(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "scroll_home", "Top", show=False),
        Binding("end,G", "scroll_end", "End", show=False),
    ]

    follow = reactive(False)
    line_count = reactive(0)
    indexed = reactive(False)

    class Indexed(Message):
        def __init__(self, count: int, done: bool, size: int) -> None:
            super().__init__()
            self.count = count
            self.done = done
            self.size = size

    class Window(Message):
        def __init__(self, first: int, lines: list[str]) -> None:
            super().__init__()
            self.first = first
            self.lines = lines

    def __init__(self, path: Path, *, follow: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.path = Path(path)
        self.index = LineIndex(self.path)
        self._lines: LRUCache[int, Text] = LRUCache(4096)
        self._max_width = 0
        self._wanted: tuple[int, int] | None = None
        self._indexed_size = 0
        self.set_reactive(LazyLog.follow, follow)

    def on_mount(self) -> None:
        self._scan()
        self.set_interval(0.25, self._poll)

    def _poll(self) -> None:
        # Following or not, a file that grew is indexed again (not following: the view stays put).
        if self.indexed and (self.follow or self._grew()):
            self._scan()

    def _grew(self) -> bool:
        try:
            return self.path.stat().st_size != self._indexed_size
        except OSError:
            return False

    def rescan(self) -> None:
        """Index what was appended since the last scan (the tick that wrote it has ended)."""
        if self.is_mounted:
            self._scan()

    @work(thread=True, exclusive=True, group="log-index", exit_on_error=False, description="index log lines")
    def _scan(self) -> None:
        worker = get_current_worker()
        count = self.index.line_count
        for count in self.index.scan(lambda: worker.is_cancelled):
            self.post_message(self.Indexed(count, done=False, size=self.index.size))
        if not worker.is_cancelled:
            self.post_message(self.Indexed(count, done=True, size=self.index.size))

    def on_lazy_log_indexed(self, message: Indexed) -> None:
        before = self.line_count
        grew_bytes = message.size != self._indexed_size
        self._indexed_size = message.size
        self.line_count = message.count
        self.indexed = self.indexed or message.done
        if message.count != before:
            if message.count < before:  # truncated or replaced
                self._lines.clear()
            elif before:
                # The old last line may have been partial: read it again.
                self._lines.discard(before - 1)
            self.virtual_size = Size(max(self._max_width, self.size.width), message.count)
            if self.follow:
                # after the new virtual size is laid out, or the end is the old end
                self.call_after_refresh(self.scroll_end, animate=False, immediate=True)
            self.refresh()
        elif grew_bytes and message.count:
            self._lines.discard(message.count - 1)  # the partial last line grew
            self.refresh()

    def watch_follow(self, value: bool) -> None:
        if value and self.is_mounted:
            self._scan()
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        # Every segment gets a style (an empty one where the line has none): Textual's monochrome
        # filter (NO_COLOR=1) reads segment.style.color and fails on a segment without one.
        base = Style()
        if index >= self.line_count:
            return Strip.blank(width, base)
        text = self._lines.get(index)
        if text is None:
            self._request(scroll_y)
            return Strip.blank(width, base)
        segments = [Segment(part, style or base, control) for part, style, control in text.render(self.app.console)]
        strip = Strip(segments, text.cell_len)
        return strip.crop_extend(scroll_x, scroll_x + width, Style())

    def _request(self, scroll_y: int) -> None:
        first = max(0, scroll_y - WINDOW_MARGIN)
        count = self.size.height + 2 * WINDOW_MARGIN
        if self._wanted == (first, count):
            return
        self._wanted = (first, count)
        self._read(first, count)

    @work(thread=True, exclusive=True, group="log-read", exit_on_error=False, description="read log lines")
    def _read(self, first: int, count: int) -> None:
        lines = self.index.read_lines(first, count)
        self.post_message(self.Window(first, lines))

    def on_lazy_log_window(self, message: Window) -> None:
        self._wanted = None
        widest = self._max_width
        for offset, line in enumerate(message.lines):
            text = Text(clean(line).expandtabs(4), no_wrap=True, end="")
            self._lines[message.first + offset] = text
            widest = max(widest, text.cell_len)
        if widest != self._max_width:
            self._max_width = widest
            self.virtual_size = Size(widest, self.line_count)
        self.refresh()
