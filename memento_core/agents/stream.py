"""A CLI's event stream made readable as it arrives (SPEC §20, Live).

claude (``--output-format stream-json --verbose``), codex (``exec --json``) and
gemini (``--output-format stream-json``) print one JSON event per line while
they work. logpipe.py hands every chunk the CLI writes to a :class:`StreamLog`,
which writes into the tick log one line per tool call (``[tool] Bash: pytest
-q``, a sub-agent's calls indented) the moment its event's line is complete,
instead of the events themselves: the raw events still reach the usage and
rate-limit parsers (logpipe.Capture), and a person follows the attempt live in
the dashboard's log pane.

What is not a JSON object is written as text, each line capped at
:data:`TEXT_CAP` bytes: the CLI's stderr, a line that is not JSON, a truncated
object, a stream cut off mid-line (:meth:`StreamLog.end`). A line longer than
:data:`MAX_LINE` (a 10 MB tool output on one line) is never held whole: its
first bytes are kept, the rest counted and dropped. A preset's renderer that
meets an event it does not expect writes nothing for it; nothing here raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

TEXT_CAP = 2000  # bytes of one line of text written as it was
TOOL_CAP = 240  # characters of one tool call's summary
MAX_LINE = 16 * 1024 * 1024  # a longer line is cut: its first TEXT_CAP bytes shown, the rest dropped
SUB_INDENT = "  "
_decode = json.JSONDecoder().decode  # json.loads without its per-call checks (a line is many events' cost)

# A renderer: one parsed event to the readable lines it stands for (none for most events).
Render = Callable[[dict], Iterable[str]]
# A cheap look at a raw line (``data`` from ``start``) before it is copied or parsed: False for an
# event no line comes from (claude's tool results, megabytes each): skipped, nothing written.
Wanted = Callable[[bytes, int], bool]


def _cut(text: bytes, cap: int = TEXT_CAP, dropped: int = 0) -> bytes:
    """``text`` as one log line, at most ``cap`` bytes of it, saying how much was cut."""
    over = len(text) - cap + dropped
    if over > 0:
        return text[:cap] + f" [memento: {over} bytes of this line cut]\n".encode()
    return text + b"\n"


class StreamLog:
    """Turns the bytes a CLI prints into the bytes its log gets; one per attempt, one thread.

    ``render`` makes the lines of one event; ``wanted`` (optional) skips an event
    before parsing it; ``root``: where the CLI runs, taken off the paths it names.
    """

    def __init__(self, render: Render, wanted: Wanted | None = None, root: str | None = None):
        self.render = render
        self.wanted = wanted
        self._root = (root.rstrip("/") + "/") if root else ""
        self._partial = bytearray()
        self._dropped = 0  # bytes of the current line beyond MAX_LINE, not kept
        self.events = 0  # JSON events seen (the bench and the tests read it)
        self.tools = 0  # tool-call lines written

    def feed(self, data: bytes) -> bytes:
        """What the log gets for ``data``: readable lines for each line that ended in it."""
        out: list[bytes] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            if self._partial or self._dropped:
                self._keep(data[start:nl])
                line, dropped = bytes(self._partial), self._dropped
                self._partial.clear()
                self._dropped = 0
                out.append(self._line(line, dropped))
            elif self.wanted is not None and not self.wanted(data, start):
                self.events += 1  # most of the stream's bytes: never copied, never parsed
            else:
                out.append(self._line(data[start:nl], 0))
            start = nl + 1
        if start < len(data):
            self._keep(data[start:])
        return b"".join(out)

    def end(self) -> bytes:
        """The stream ended (the CLI exited or was killed): what was left of its last line, as text."""
        if not self._partial and not self._dropped:
            return b""
        line, dropped = bytes(self._partial), self._dropped
        self._partial.clear()
        self._dropped = 0
        return self._line(line, dropped)

    def _keep(self, piece: bytes) -> None:
        room = MAX_LINE - len(self._partial)
        if room >= len(piece):
            self._partial += piece
        else:
            self._partial += piece[:max(room, 0)]
            self._dropped += len(piece) - max(room, 0)

    def _line(self, line: bytes, dropped: int) -> bytes:
        stripped = line if line.startswith(b"{") and line.endswith(b"}") else line.strip()
        if not stripped.startswith(b"{"):
            return _cut(line.rstrip(b"\r"), dropped=dropped) if stripped else b"\n"
        if dropped:  # an event cut at MAX_LINE cannot be parsed: its start, as text
            return _cut(stripped, dropped=dropped)
        if self.wanted is not None and not self.wanted(stripped, 0):
            self.events += 1
            return b""
        try:
            event = _decode(stripped.decode("utf-8", "surrogateescape"))
        except ValueError:  # not JSON after all, or a truncated object
            return _cut(stripped)
        if not isinstance(event, dict):
            return _cut(stripped)
        self.events += 1
        try:
            lines = list(self.render(event))
        except (AttributeError, KeyError, TypeError, ValueError, IndexError):
            return b""  # an event of a shape this renderer does not know: nothing to show
        return b"".join(self._readable(text) for text in lines)

    def _readable(self, text: str) -> bytes:
        if text.lstrip().startswith("[tool] "):
            self.tools += 1
        if self._root:
            text = text.replace(self._root, "")
        return _cut(" ".join(text.splitlines()).encode("utf-8", "replace"))


# ------------------------------------------------------------------ shared by the renderers


def short(value, cap: int = TOOL_CAP) -> str:
    """A tool argument on one line, at most ``cap`` characters."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            value = str(value)
    value = " ".join(value.split())
    return value if len(value) <= cap else value[:cap - 1] + "…"


# The argument that says what a tool call does, by the names the CLIs give it.
_KEYS = ("command", "cmd", "file_path", "absolute_path", "notebook_path", "path", "pattern", "url",
         "query", "description", "prompt", "dir_path")


def summary(args) -> str:
    """What a tool call does, from its arguments: its command, path, pattern… else all of them."""
    if isinstance(args, dict):
        for key in _KEYS:
            value = args.get(key)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                value = " ".join(value)
            if isinstance(value, str) and value.strip():
                return short(value)
        return short(args) if args else ""
    return short(args) if args else ""


def tool_line(name: str, args, depth: int = 0) -> str:
    """``[tool] Name: what it does``, indented once per level of sub-agent."""
    what = summary(args)
    return f"{SUB_INDENT * depth}[tool] {name or '?'}" + (f": {what}" if what else "")
