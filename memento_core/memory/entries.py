"""Memory entries: front matter read leniently, written as minimal line edits (SPEC §9).

python-frontmatter reads; it raises on bad YAML, so every read is wrapped and
degrades: the summary falls back to the first line of text and updated_at to
the file's mtime. Writing never goes through python-frontmatter (it drops
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


def parse_text(text: str) -> ParsedText:
    """Split ``text`` into front matter and body; never raises."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    end = _block_end(lines)
    if end < 0:
        return ParsedText({}, text, False, False, 0)
    body = "\n".join(lines[end + 1 :])
    import frontmatter  # here, not above: a tick whose memory holds no entry never loads YAML

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
