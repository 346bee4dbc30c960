"""Memory entries: front matter read leniently, written as minimal line edits (SPEC §9).

The block Memento writes (one ``key: value`` line per field, a plain word, a
date, a JSON-quoted string or a flow list of those) is read here without YAML:
python-frontmatter and PyYAML cost a tick more CPU to import than all its other
reading of memory/ (issue 42). Any other block goes to python-frontmatter, which
raises on bad YAML, so every read is wrapped and degrades: the summary falls
back to the first line of text and updated_at to the file's mtime.
tests/core/memory/test_entries_front_matter.py holds both readers to the same answer. Writing never goes through python-frontmatter (it drops
trailing newlines and reorders keys): a new entry gets a front matter block
rendered here in a fixed key order, an existing one has single key lines
replaced or inserted and every other line left as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..runlog import utc_stamp

FIELDS = ("summary", "updated_at", "sources", "tags", "priority", "status", "last_verified")
PRIORITIES = ("core", "normal", "low")
# The article's emoji marks, accepted when a person writes them by hand.
_PRIORITY_ALIASES = {"🔴": "core", "🟡": "normal", "⚪": "low", "high": "core", "medium": "normal"}
SUMMARY_MAX = 200
HEAD_BYTES = 64 * 1024  # front matter lives at the top; never read a huge entry whole to list it

_DELIM_RE = re.compile(r"^-{3,}\s*$")
_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:")

# The front matter Memento writes (render_front_matter), and the plain `summary: Pin the db image`
# a person writes, read without YAML. A line holds only characters str.isprintable() admits (no
# control character, line or paragraph separator, Unicode space, byte order mark, private or
# unassigned code point: characters YAML reads apart or refuses). A word starts with a letter (a
# digit may make a number or a date, a dot an infinity) and has no colon (in a flow list YAML may
# read one as a mapping) and no `#` (a comment after a space); a quoted string has no escape but
# \" and \\; a date is YYYY-MM-DD, a time the UTC stamp Memento writes, in ASCII digits (YAML reads
# others as text). (Non-ASCII characters are
# matched as [^\x00-\x7f]: a class of their ranges costs a tick milliseconds to compile.)
_CHAR = r"(?:[A-Za-z0-9_./+\-(),;'?!]|[^\x00-\x7f])"
_QUOTED = r'"(?:[^"\\]|\\["\\])*"'
_FLOW_ITEM = rf"{_QUOTED}|[A-Za-z][A-Za-z0-9_./+-]*"
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.+))?")
_PLAIN_VALUE = re.compile(rf"[A-Za-z]{_CHAR}*(?: {_CHAR}+)*|{_QUOTED}|[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}(?:T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}Z)?")
_FLOW_LIST = re.compile(rf"\[(?:(?:{_FLOW_ITEM})(?:, (?:{_FLOW_ITEM}))*)?\]")
# What YAML 1.1 (PyYAML) reads as a boolean or a null rather than a string.
_YAML_WORDS = frozenset("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF "
                        "null Null NULL".split())


@dataclass(frozen=True)
class MemoryEntry:
    """What the tree, the index and the dashboard show of one entry."""

    path: str  # relative to memory/, forward slashes
    summary: str
    priority: str = "normal"
    status: str = "active"
    updated_at: str = ""
    last_verified: str = ""
    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    front_matter_ok: bool = True  # False: missing or invalid, the fields above are fallbacks


@dataclass(frozen=True)
class ParsedText:
    """An entry's text split into front matter (as read) and body."""

    meta: dict
    body: str
    has_block: bool  # a ---…--- block is present (valid or not)
    valid: bool  # that block parsed to a mapping
    block_end: int  # index of the line after the closing delimiter (0 without a block)


def utc_iso(when: dt.datetime | None = None) -> str:
    return utc_stamp(when)


def _scalar(value: object) -> str:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return utc_iso(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None:
        return ""
    return str(value)


def _list(value: object) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, (list, tuple, set)):
        return tuple(_scalar(v).strip() for v in value if _scalar(v).strip())
    return tuple(p.strip() for p in _scalar(value).split(",") if p.strip())


def normal_priority(value: object) -> str:
    text = _scalar(value).strip().lower()
    text = _PRIORITY_ALIASES.get(text, text)
    return text if text in PRIORITIES else "normal"


def _block_end(lines: list[str]) -> int:
    """Index of the closing front matter delimiter, or -1 when there is no block."""
    if not lines or not _DELIM_RE.match(lines[0]):
        return -1
    for i in range(1, len(lines)):
        if _DELIM_RE.match(lines[i]) or lines[i].rstrip() == "...":
            return i
    return -1


def _plain_value(raw: str) -> object:
    """A value as YAML reads it, or KeyError when it is not one of the plain shapes."""
    if raw[0] == '"':
        return re.sub(r'\\(["\\])', r"\1", raw[1:-1])
    if raw[0].isdigit():
        # 2026-12-06 or 2026-12-06T20:00:00Z; a date that does not exist raises ValueError, which
        # YAML raises too (the caller hands such a block to python-frontmatter)
        day = dt.date.fromisoformat(raw[:10])
        if len(raw) == 10:
            return day
        return dt.datetime(day.year, day.month, day.day, int(raw[11:13]), int(raw[14:16]), int(raw[17:19]),
                           tzinfo=dt.UTC)
    if raw in _YAML_WORDS:
        raise KeyError(raw)
    return raw


def plain_front_matter(lines: list[str]) -> dict | None:
    """The front matter block's lines (between the delimiters) as YAML reads them, when every line
    is ``key: value`` in the shape render_front_matter writes; None for anything else."""
    meta: dict = {}
    for line in lines:
        m = _PLAIN_LINE.fullmatch(line) if line.isprintable() else None
        if not m or m.group(1) in meta or m.group(1) in _YAML_WORDS:
            return None
        raw = m.group(2)
        try:
            if raw is None:
                meta[m.group(1)] = None
            elif _FLOW_LIST.fullmatch(raw):
                meta[m.group(1)] = [_plain_value(item) for item in re.findall(_FLOW_ITEM, raw[1:-1])]
            elif _PLAIN_VALUE.fullmatch(raw):
                meta[m.group(1)] = _plain_value(raw)
            else:
                return None
        except (KeyError, ValueError):
            return None
    return meta


def parse_text(text: str) -> ParsedText:
    """Split ``text`` into front matter and body; never raises."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    end = _block_end(lines)
    if end < 0:
        return ParsedText({}, text, False, False, 0)
    body = "\n".join(lines[end + 1 :])
    if lines[0] == lines[end] == "---":
        meta = plain_front_matter(lines[1:end])
        if meta is not None:
            return ParsedText(meta, body, True, True, end + 1)
    import frontmatter  # here, not above: a tick whose memory holds only Memento's blocks never loads YAML

    try:
        post = frontmatter.loads(text)
        meta = dict(post.metadata)
    except Exception:  # noqa: BLE001 - bad YAML of any kind degrades, by contract
        return ParsedText({}, body, True, False, end + 1)
    return ParsedText(meta, body, True, True, end + 1)


def first_line(text: str) -> str:
    """The first line that says something: headings' #, list bullets and delimiters stripped."""
    for line in text.split("\n"):
        s = line.strip()
        if not s or _DELIM_RE.match(s) or s.startswith("<!--"):
            continue
        s = re.sub(r"^(#{1,6}\s+|[-*+]\s+|>\s*)", "", s).strip()
        if s:
            return s[:SUMMARY_MAX]
    return ""


def entry_from_text(rel: str, text: str, mtime: float | None) -> MemoryEntry:
    """A MemoryEntry from the text of ``rel``; missing or invalid front matter degrades."""
    parsed = parse_text(text)
    meta = parsed.meta
    fallback_time = utc_iso(dt.datetime.fromtimestamp(mtime, dt.UTC)) if mtime is not None else ""
    summary = " ".join(_scalar(meta.get("summary")).split())[:SUMMARY_MAX]
    if not summary:
        summary = first_line(parsed.body) or first_line(text) or Path(rel).stem
    return MemoryEntry(
        path=rel,
        summary=summary,
        priority=normal_priority(meta.get("priority")),
        status=_scalar(meta.get("status")).strip() or "active",
        updated_at=_scalar(meta.get("updated_at")).strip() or fallback_time,
        last_verified=_scalar(meta.get("last_verified")).strip(),
        sources=_list(meta.get("sources")),
        tags=_list(meta.get("tags")),
        front_matter_ok=parsed.valid,
    )


def read_head(path: Path) -> tuple[str, float | None]:
    """The first HEAD_BYTES of ``path`` as text and its mtime ('' and None if unreadable)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(HEAD_BYTES)
            mtime = os.fstat(fh.fileno()).st_mtime
    except OSError:
        return "", None
    return data.decode("utf-8", "replace"), mtime


def load_entry(memory_root: Path, rel: str) -> MemoryEntry:
    """Read one entry's metadata from disk; never raises."""
    text, mtime = read_head(memory_root / rel)
    return entry_from_text(rel, text, mtime)


# --------------------------------------------------------------------------- writing


def yaml_value(value: object) -> str:
    """One YAML value on one line: lists in flow style, strings quoted when they must be."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    text = _scalar(value)
    if re.fullmatch(r"[A-Za-z0-9][\w.:/+-]*", text) and text.lower() not in (
        "yes", "no", "true", "false", "on", "off", "null", "none",
    ):
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def render_front_matter(meta: dict) -> str:
    """A ---…--- block with the known fields first, in SPEC order, then any others."""
    keys = [k for k in FIELDS if k in meta] + [k for k in meta if k not in FIELDS]
    lines = ["---", *(f"{k}: {yaml_value(meta[k])}" for k in keys), "---"]
    return "\n".join(lines) + "\n"


def set_fields(text: str, updates: dict[str, object]) -> str:
    """``text`` with the front matter keys in ``updates`` set, as line edits.

    Each key's line (and its indented or ``- `` continuation lines) is replaced,
    missing keys are inserted before the closing delimiter. Without a valid
    block a new one is put on top and the old text (a broken block included)
    is kept below it: nothing a person wrote is dropped.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    parsed = parse_text(text)
    if not parsed.valid:
        return render_front_matter(dict(updates)) + ("\n" if text.strip() else "") + text
    lines = text.split("\n")
    end = parsed.block_end - 1  # the closing delimiter
    head = lines[1:end]
    for key, value in updates.items():
        new_line = f"{key}: {yaml_value(value)}"
        start = next((i for i, ln in enumerate(head) if (m := _KEY_RE.match(ln)) and m.group(1) == key), None)
        if start is None:
            head.append(new_line)
            continue
        stop = start + 1
        while stop < len(head) and (head[stop][:1] in (" ", "\t") or head[stop].startswith("- ")):
            stop += 1
        head[start:stop] = [new_line]
    return "\n".join([lines[0], *head, *lines[end:]])


def parse_date(value: str) -> dt.date | None:
    """The date at the start of an ISO date or time, else None."""
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", value.strip())
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
