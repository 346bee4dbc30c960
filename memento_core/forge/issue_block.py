"""An issue read into a task (SPEC §19 "Issues in"): its title defused, its ```memento block parsed.

Pure functions, no I/O. What an issue's author wrote reaches the plan only as single lines of
known fields: a title or a value can never start a line, open an HTML comment, add a status
box, a ``[MODULE:…]`` or an inline ``[retries: N]``, or carry a control or bidi character.
A block that cannot be read whole gives no field at all and says why, naming the issue and
the field (the task then carries ``import_error:`` and is never picked until it is fixed).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ..lines import ANSI_RE, clipped
from ..plan.model import TASK_ID

FIELDS = ("verify", "context_files", "accept", "depends")
TITLE_CHARS = 200
VALUE_CHARS = 1000
_FENCE_RE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*$")
_FIELD_RE = re.compile(r"^(?:[-*+][ \t]+)?(?P<key>[A-Za-z_][\w-]*)[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$")
_TASK_ID_RE = re.compile(rf"^{TASK_ID}$")
# Brackets would make a title a module tag or an inline retries count; angle brackets an HTML tag
# or comment. Their look-alikes read the same and mean nothing to the plan's scanner.
_DEFUSE = str.maketrans({"[": "(", "]": ")", "<": "‹", ">": "›"})


def one_line(text: str, limit: int = VALUE_CHARS) -> str:
    """``text`` as one plain line: escapes, control, format (bidi, zero-width) and separator
    characters gone, white space runs one space, at most ``limit`` characters."""
    text = ANSI_RE.sub("", text)
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch.isspace() or cat in ("Zl", "Zp"):
            kept.append(" ")
        elif cat not in ("Cc", "Cf", "Cs", "Co", "Cn"):
            kept.append(ch)
    return clipped(" ".join("".join(kept).split()), limit)


def defused_title(title: str) -> str:
    """An issue's title as a task's title: one plain line, no markup the plan would read."""
    text = one_line(str(title or ""), TITLE_CHARS).translate(_DEFUSE).lstrip(":").strip()
    return text or "(no title)"


@dataclass(frozen=True)
class IssueFields:
    """What an issue's body says for its task: the fields, or why the block cannot be read."""

    number: int
    fields: dict[str, str] = field(default_factory=dict)  # verify, context_files, depends as plan values
    accept: tuple[str, ...] = ()
    has_block: bool = False
    error: str = ""  # "issue #12's ```memento block: …"; no field is taken when set


def read_issue(number: int, body: str | None) -> IssueFields:
    """The ```memento block of issue ``number``'s ``body`` as plan field values."""
    lines = str(body or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[list[tuple[int, str]]] = []
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        marker = m.group("fence")
        is_ours = m.group("info").split()[:1] == ["memento"] and not (marker[0] == "`" and "`" in m.group("info"))
        inside: list[tuple[int, str]] = []
        j = i + 1
        closed = False
        while j < len(lines):
            c = _FENCE_RE.match(lines[j])
            if c and c.group("fence")[0] == marker[0] and len(c.group("fence")) >= len(marker) and not c.group("info"):
                closed = True
                break
            inside.append((j - i, lines[j]))
            j += 1
        if is_ours:
            if not closed:
                return IssueFields(number, has_block=True, error=_where(number, "the block is never closed (end it "
                                                                           f"with {marker})"))
            blocks.append(inside)
        i = j + 1
    if not blocks:
        return IssueFields(number)
    if len(blocks) > 1:
        return IssueFields(number, has_block=True,
                           error=_where(number, f"there are {len(blocks)} blocks; write one"))
    return _read_block(number, blocks[0])


def _where(number: int, what: str) -> str:
    return f"issue #{number}'s ```memento block: {what}"


def _read_block(number: int, lines: list[tuple[int, str]]) -> IssueFields:
    fields: dict[str, str] = {}
    accept: list[str] = []

    def bad(what: str) -> IssueFields:
        return IssueFields(number, has_block=True, error=_where(number, what))

    for offset, raw in lines:
        if not raw.strip():
            continue
        m = _FIELD_RE.match(raw.strip())
        if not m:
            return bad(f"line {offset} `{one_line(raw, 60)}` is not a field line (`verify: …`)")
        key, value = m.group("key").lower(), m.group("value")
        if key not in FIELDS:
            return bad(f"`{one_line(key, 40)}:` (line {offset}) is not a field an issue may set; "
                       f"one of {', '.join(FIELDS)}")
        if key != "accept" and key in fields:
            return bad(f"`{key}:` is given twice (line {offset})")
        problem, value = _value(key, value)
        if problem:
            return bad(f"`{key}:` (line {offset}) {problem}")
        if key == "accept":
            accept.append(value)
        else:
            fields[key] = value
    return IssueFields(number, fields, tuple(accept), has_block=True)


def _value(key: str, raw: str) -> tuple[str, str]:
    """('', the plan's value for ``key``) or (what is wrong, '')."""
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in raw) or "\x1b" in raw:
        return "holds a control or format character", ""
    value = raw.strip()
    if key == "verify":
        command = value[1:-1].strip() if len(value) >= 2 and value[0] == value[-1] == "`" else value
        if not command:
            return "is empty: give the command that proves the task done", ""
        if len(command) > VALUE_CHARS:
            return f"is longer than {VALUE_CHARS} characters", ""
        return "", f"`{command}`" if "`" not in command else f"`` {command} ``"
    if key == "context_files":
        inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
        if "[" in inner or "]" in inner:
            return "is not a list of paths like `[src/app.py, tests/]`", ""
        paths = [p.strip().strip("`'\"").strip() for p in inner.split(",")]
        paths = [p for p in paths if p]
        if not paths:
            return "is empty: name the files the task may change, e.g. `[src/app.py, tests/]`", ""
        for path in paths:
            parts = path.split("/")
            if path.startswith(("/", "~")) or ".." in parts or "\\" in path:
                return f"names `{one_line(path, 60)}`: paths are relative to the project, inside it", ""
        return "", "[" + ", ".join(paths) + "]"
    if key == "depends":
        ids = [d.strip().strip("`") for d in value.strip("[]").split(",")]
        ids = [d for d in ids if d]
        if not ids or [d.lower() for d in ids] == ["none"]:
            return "", "none"
        for dep in ids:
            if not _TASK_ID_RE.match(dep):
                return f"names `{one_line(dep, 40)}`, not a task id like GH-12 or T-101", ""
        return "", ", ".join(dict.fromkeys(ids))
    text = one_line(value)  # accept: free text, one line
    if not text:
        return "is empty", ""
    return "", text
