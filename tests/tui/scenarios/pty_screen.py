"""A dashboard in a real pseudo-terminal, and the screen a person would read from its output.

The App runs as `python -m memento_tui.app` on the slave side of a pty whose window
size is set with TIOCSWINSZ, exactly as a terminal emulator or tmux sets it. Its
output is replayed on a grid of that size: cursor moves (CSI row;col H) place the
text, everything else (colours, modes, OSC) is skipped, and what falls past the
right edge is lost, as on a real screen.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len

_TOKEN = re.compile(r"\x1b\[([0-9;?<=>]*)([ -/]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_()][0-9A-Za-z]?|([^\x1b]+)")


class Screen:
    """The grid of characters a terminal of ``width`` x ``height`` shows."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.rows = [[" "] * width for _ in range(height)]
        self.y = self.x = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._held = ""  # an escape sequence cut by the end of a read

    def feed(self, data: bytes) -> None:
        text = self._held + self._decoder.decode(data)
        cut = text.rfind("\x1b")
        if cut != -1 and not _TOKEN.match(text, cut):
            text, self._held = text[:cut], text[cut:]
        else:
            self._held = ""
        for m in _TOKEN.finditer(text):
            if m.group(4) is not None:
                self._write(m.group(4))
            elif m.group(3) in ("H", "f") and not m.group(2):
                parts = [p for p in m.group(1).split(";")] if m.group(1) else []
                self.y = (int(parts[0]) if parts and parts[0] else 1) - 1
                self.x = (int(parts[1]) if len(parts) > 1 and parts[1] else 1) - 1
            elif m.group(3) == "J" and m.group(1) == "2":
                self.rows = [[" "] * self.width for _ in range(self.height)]

    def _write(self, text: str) -> None:
        for ch in text:
            if ch == "\r":
                self.x = 0
            elif ch == "\n":
                self.y += 1
            elif ch >= " ":
                if 0 <= self.y < self.height and 0 <= self.x < self.width:
                    self.rows[self.y][self.x] = ch
                    if cell_len(ch) == 2 and self.x + 1 < self.width:
                        self.rows[self.y][self.x + 1] = ""
                self.x += max(cell_len(ch), 1)

    def text(self) -> str:
        return "\n".join("".join(row) for row in self.rows)


class PtyDashboard:
    """`memento-tui ROOT` in a pty of ``size``, with ``env`` on top of this process's environment."""

    def __init__(self, root: Path, size: tuple[int, int], env: dict[str, str]):
        self.screen = Screen(*size)
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        # PYTHONFAULTHANDLER: SIGABRT makes a hung dashboard print every thread's stack (dump_threads).
        full = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TERM": "xterm-256color",
                "PYTHONFAULTHANDLER": "1", **env}
        self.proc = subprocess.Popen([sys.executable, "-m", "memento_tui.app", str(root)], stdin=slave,
                                     stdout=slave, stderr=slave, env=full, start_new_session=True)
        os.close(slave)
        self.master = master
        self.raw = bytearray()  # everything it wrote, the lines printed after its screen closed too

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def read_until(self, condition: Callable[[str], bool], timeout: float = 60.0) -> str:
        """Replay the output until ``condition(screen text)`` holds; the screen text then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not condition(self.screen.text()):
            if self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]:
                break
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.raw += data
                self.screen.feed(data)
        return self.screen.text()

    def dump_threads(self) -> None:
        """Make a dashboard that does not answer print its threads' stacks into ``raw`` (and end)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGABRT)
            self.read_until(lambda t: False, timeout=5)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.write(self.master, b"q")
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        os.close(self.master)


def plain(data: bytes) -> str:
    """What was written, as text: escape sequences removed."""
    return _TOKEN.sub(lambda m: m.group(4) or "", data.decode("utf-8", "replace"))
