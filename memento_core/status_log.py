"""TICK_STATUS.md: the tick log, newest last, rotated into an archive (SPEC §4, §5).

A one-pass line scanner reads entries (``## [stamp] Tick #N`` and their
``- **Field**: value`` lines); structure inside fenced code blocks and HTML
comment blocks is ignored, so an error tail can hold anything. Memento
writes every entry through ``format_entry`` (values cleaned of control
characters and folded to one line; multi-line output only in a fenced tail
whose fence is longer than any backtick run inside) and ``append_entry``
(locked, atomic, the rest of the file byte for byte unchanged).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from pathlib import Path

from .crashpoints import crash_point
from .durations import duration_or_none
from .errors import MementoError
from .lines import (
    ANSI_RE,
    CONTROL_RE,
    LineDoc,
    clean_block,
    decode,
    doc_from_text,
    ensure_eol,
    read_doc_or_none,
    read_regular_or_none,
    strip_eol,
)
from .locks import atomic_write_bytes, file_lock, lock_path_for, locked_edit
from .markdown.blocks import (
    FENCE_BODY,
    FENCE_CLOSE,
    FENCE_OPEN,
    SEPARATOR_RE,
    TEXT,
    BlockScanner,
    fenced,
)
from .plan.model import TASK_ID

HEADER = "# TICK STATUS LOG"
SEPARATOR = "---"
ARCHIVE_GLOB = "TICK_STATUS_*.md"

TASK_STATUSES = ("SUCCESS", "FAILED", "BLOCKED", "NEEDS INPUT")  # NEEDS INPUT: the worker asked (SPEC §18)

_ENTRY_RE = re.compile(r"^##[ \t]+\[(?P<ts>[^\]]*)\][ \t]*(?P<rest>.*)$")
_TICK_RE = re.compile(r"\bTick[ \t]*#?[ \t]*(?P<n>\d+)", re.I)
_CONTINUED_RE = re.compile(
    r"\(\s*continued\b(?:[^)]*?tasks_this_tick\s*:?\s*(?P<a>\d+)\s*/\s*(?P<b>\d+))?[^)]*\)", re.I
)
_FIELD_RE = re.compile(
    r"^[ \t]{0,3}[-*+][ \t]+\*\*(?P<name>[^*]+?):?\*\*[ \t]*:?[ \t]*(?P<value>.*)$"
)
_FAST_FIELD_RE = re.compile(r"- \*\*([^*:\s][^*:]*(?<=\S))\*\*: ?((?:\S(?:.*\S)?)?)[ \t]*$")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")

_TASK_ID_RE = re.compile(rf"^[\s`*]*(?P<id>{TASK_ID})`?:?")
_MODULE_RE = re.compile(r"^\s*\[MODULE:(?P<module>[^\]]*)\]\s*", re.I)
_RETRY_RE = re.compile(r"retry\s*(?P<n>\d+)\s*/\s*(?P<m>\d+)", re.I)
_SHA_RE = re.compile(r"^[\s`]*(?P<sha>[0-9a-fA-F]{7,40})\b")
# Each event's keyword and its pattern, compiled on first use (:func:`_event_patterns`): a log of
# successes reads none of them, and `memento status` and a tick start without them (SPEC §11).
_EVENT_WORDS = (
    ("ALL TASKS COMPLETE", r"ALL\s+TASKS\s+COMPLETE", re.I),
    ("PIPELINE BLOCKED", r"PIPELINE\s+BLOCKED", re.I),
    ("PLAN INVALID", r"PLAN\s+INVALID", re.I),
    ("CIRCUIT BREAKER", r"CIRCUIT\s+BREAKER", re.I),
    ("DIRTY TREE", r"DIRTY\s+(?:WORK(?:ING)?\s+)?TREE", re.I),
    ("INTERRUPTED", r"INTERRUPT", re.I),
    ("STALE", r"\bSTALE\b", re.I),
    ("RATE LIMITED", r"RATE\s+LIMITED", re.I),
    ("BUDGET REACHED", r"BUDGET\s+REACHED", re.I),
    ("WINDOW", r"\bWINDOW\s+\d", 0),  # "⏳ WINDOW 95% (5-hour) — until …" (SPEC §20)
    ("ARCHITECT", r"\bARCHITECT\b", 0),  # "🏗 ARCHITECT" (SPEC §16)
    ("PLAN DRAFTED", r"PLAN\s+DRAFTED", 0),  # "📝 PLAN DRAFTED" (SPEC §17)
    ("WAITING FOR INPUT", r"WAITING\s+FOR\s+INPUT", 0),  # "⏸ WAITING FOR INPUT — T-1" (SPEC §18)
    ("FORGE", r"\bFORGE\b", 0),  # "⚠️ FORGE — GitHub refused the token from GITHUB_TOKEN" (SPEC §19)
)


@cache
def _event_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each event's keyword and its compiled pattern, in the order they are tried."""
    return tuple((keyword, re.compile(pattern, flags)) for keyword, pattern, flags in _EVENT_WORDS)



# The Git Commit of a SUCCESS entry: the commit that adds the entry (its own sha cannot be in
# it); the commit carries the trailer `Memento-Tick: <tick> <task>` (git.history.tick_commits).
SELF_COMMIT = "(the commit that adds this entry)"


def with_commits(entries: list[TickEntry], commits: dict[tuple[int, str], str]) -> list[TickEntry]:
    """The entries with each SELF_COMMIT resolved to its sha from ``commits``
    (git.history.tick_commits), so every reader of ``commit_sha`` sees it."""
    out = []
    for e in entries:
        value = e.field("Git Commit") or ""
        sha = commits.get((e.tick, e.task_id or "")) if value.startswith(SELF_COMMIT) and e.tick else None
        if sha:
            shown = f"`{sha}`" + value[len(SELF_COMMIT):]
            e = replace(e, fields=tuple((k, shown if k == "Git Commit" else v) for k, v in e.fields))
        out.append(e)
    return out


def entries_with_commits(root: Path, entries: Iterable[TickEntry]) -> list[TickEntry]:
    """Status entries whose Git Commit names "the commit that adds this entry", resolved to its
    sha (:func:`with_commits`); no git process when no entry needs one."""
    entries = list(entries)
    if not any((e.field("Git Commit") or "").startswith(SELF_COMMIT) for e in entries):
        return entries
    from .git.history import tick_commits  # only then: reading the log alone starts no git

    return with_commits(entries, tick_commits(root))


# The Verify Output of an attempt that failed before verify ran (an agent error, a guard).
VERIFY_NOT_RUN = "(not run: the attempt failed before verify)"


@dataclass(frozen=True)
class TickEntry:
    """One status entry: heading line (1-based), stamp, tick number and its fields in order."""

    line: int
    timestamp: str
    tick: int | None
    continued: bool
    tasks_this_tick: tuple[int, int] | None
    fields: tuple[tuple[str, str], ...]

    def field(self, name: str, default: str | None = None) -> str | None:
        """The first field called ``name`` (case-insensitive), else ``default``."""
        wanted = name.casefold()
        for key, value in self.fields:
            if key.casefold() == wanted:
                return value
        return default

    @property
    def task_id(self) -> str | None:
        m = _TASK_ID_RE.match(self.field("Task") or "")
        return m.group("id") if m else None

    @property
    def module(self) -> str | None:
        rest = self._task_rest()
        m = _MODULE_RE.match(rest) if rest is not None else None
        return m.group("module").strip() if m else None

    @property
    def task_title(self) -> str | None:
        """The task's title without its id and ``[MODULE:…]`` tag."""
        rest = self._task_rest()
        if rest is None:
            return None
        return _MODULE_RE.sub("", rest, count=1).strip()

    def _task_rest(self) -> str | None:
        value = self.field("Task")
        if value is None:
            return None
        m = _TASK_ID_RE.match(value)
        return value[m.end() :] if m else value

    @property
    def status(self) -> str:
        """SUCCESS, FAILED, BLOCKED or NEEDS INPUT for a task; for an event, the keyword of
        _EVENT_WORDS its text holds, else EVENT."""
        event = self.field("Event")
        if event is not None:
            return _event_keyword(event) or "EVENT"
        status = self.field("Status")
        if status is None:
            return "EVENT"
        upper = status.upper()
        if "SUCCESS" in upper or "✅" in status:
            return "SUCCESS"
        if _event_patterns()[1][1].search(status):
            return "PIPELINE BLOCKED"
        if "NEEDS INPUT" in upper or status.startswith("❓"):
            return "NEEDS INPUT"
        if "BLOCKED" in upper or "🚫" in status:
            return "BLOCKED"
        if "FAIL" in upper or "❌" in status:
            return "FAILED"
        return _event_keyword(status) or "EVENT"

    @property
    def is_event(self) -> bool:
        return self.status not in TASK_STATUSES

    @property
    def log_path(self) -> str | None:
        value = self.field("Log")
        if not value:
            return None
        return value.strip().strip("`").strip() or None

    @property
    def commit_sha(self) -> str | None:
        m = _SHA_RE.match(self.field("Git Commit") or "")
        return m.group("sha") if m else None

    @property
    def retry(self) -> tuple[int, int] | None:
        m = _RETRY_RE.search(self.field("Status") or "")
        return (int(m.group("n")), int(m.group("m"))) if m else None

    @property
    def duration_seconds(self) -> float | None:
        return duration_or_none(self.field("Duration"))

    @property
    def usage(self):
        """The attempt's ``Usage`` field read back (spending.Usage), or None."""
        from .spending import parse_usage_field  # only readers of usage pay for it

        return parse_usage_field(self.field("Usage"))

    @property
    def error_tail(self) -> str | None:
        return self.field("Error Tail")

    @property
    def error(self) -> str | None:
        """A one-line summary of what went wrong: Verify Output (unless verify never ran), else
        the reason, else the tail's last line."""
        if self.status == "SUCCESS":
            return None
        for name in ("Verify Output", "Error", "Reason"):
            value = self.field(name)
            if value and value.strip() and value.strip() != VERIFY_NOT_RUN:
                return value.strip().splitlines()[0]
        tail = self.error_tail
        if tail:
            lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
            if lines:
                return lines[-1]
        return None


def _event_keyword(text: str) -> str | None:
    for keyword, pattern in _event_patterns():
        if pattern.search(text):
            return keyword
    return None


# --- reading ---------------------------------------------------------------


@dataclass
class _Scan:
    """TICK_STATUS.md read once: its entries, their lines, and a fence or comment left open."""

    entries: list[TickEntry]
    spans: list[tuple[int, int]]  # 0-based [heading, next entry heading or end of file)
    open_fence: str | None  # the marker of a fence still open at end of file
    open_comment: bool


def _extend(fields: list[tuple[str, str]], index: int, more: str) -> None:
    # An empty inline value followed by more lines or a block: the value is just those.
    name, value = fields[index]
    fields[index] = (name, f"{value}\n{more}" if value else more)


def _entry_head(m: re.Match[str], index: int) -> tuple[int, str, int | None, bool, tuple[int, int] | None]:
    """An entry's heading (an ``_ENTRY_RE`` match on line ``index``, 0-based) as TickEntry's
    first fields: line, stamp, tick number, continued, tasks_this_tick."""
    rest = m.group("rest")
    tick = _TICK_RE.search(rest)
    cont = _CONTINUED_RE.search(rest) if "(" in rest else None
    pair = None
    if cont and cont.group("a"):
        pair = (int(cont.group("a")), int(cont.group("b")))
    return index + 1, m.group("ts").strip(), int(tick.group("n")) if tick else None, cont is not None, pair


def _hand_field_line(fields: list[tuple[str, str]], s: str, first: str) -> None:
    """A line inside an entry not in the shape Memento writes: a field as a person may write
    it (``* **Field:** value``), or more of the last value."""
    m = _FIELD_RE.match(s) if first in "-*+" else None
    if m:
        fields.append((m.group("name").strip(), m.group("value").strip()))
    elif fields:
        _extend(fields, -1, s.strip())


def _dedent(s: str, indent: int) -> str:
    # Lines in a fence lose up to the opening fence's indentation (CommonMark).
    k = len(s) - len(s.lstrip(" "))
    return s[min(k, indent) :]


def _scan(lines: Sequence[str]) -> _Scan:
    entries: list[TickEntry] = []
    starts: list[int] = []
    blocks = BlockScanner()
    step = blocks.step
    fence_field: int | None = None  # index of the field a fenced block belongs to
    fence_buf: list[str] = []
    head: tuple[int, str, int | None, bool, tuple[int, int] | None] | None = None
    # Fields are (name, value) tuples, replaced when a value continues: every
    # allocation counts at 5,000 entries.
    fields: list[tuple[str, str]] = []

    for i, raw in enumerate(lines):
        s = raw.rstrip("\r\n")
        kind = step(s)
        if kind is not TEXT:
            if kind is FENCE_BODY:
                if fence_field is not None:
                    indent = blocks.fence.indent
                    fence_buf.append(_dedent(s, indent) if indent else s)
            elif kind is FENCE_OPEN:
                fence_field = len(fields) - 1 if (head is not None and fields) else None
                fence_buf = []
            elif kind is FENCE_CLOSE:
                if fence_field is not None:
                    _extend(fields, fence_field, "\n".join(fence_buf))
                fence_field, fence_buf = None, []
            continue
        if not s or s.isspace():
            continue
        first = s[0]
        if first == " ":
            first = s.lstrip(" ")[0]
        if first == "#":
            m = _ENTRY_RE.match(s)
            if m is not None or _HEADING_RE.match(s):
                if head is not None:
                    entries.append(TickEntry(*head, tuple(fields)))
                head, fields = None, []
                if m is not None:
                    head = _entry_head(m, i)
                    starts.append(i)
                continue  # pragma: no mutate: below, a heading is no field and no value is open
        elif first == "-" and "---" in s[:6] and SEPARATOR_RE.match(s):
            if head is not None:
                entries.append(TickEntry(*head, tuple(fields)))
            head, fields = None, []
            continue  # pragma: no mutate: no entry is open: the lines below skip it too
        if head is not None:
            m = _FAST_FIELD_RE.match(s)  # the exact shape Memento writes
            if m:
                fields.append(m.groups())
            else:
                _hand_field_line(fields, s, first)
    if blocks.fence is not None and fence_field is not None:
        _extend(fields, fence_field, "\n".join(fence_buf))
    if head is not None:
        entries.append(TickEntry(*head, tuple(fields)))
    spans = [(s, starts[k + 1] if k + 1 < len(starts) else len(lines)) for k, s in enumerate(starts)]
    return _Scan(entries, spans, blocks.fence.marker if blocks.fence is not None else None, blocks.in_comment)


def parse_status_text(text: str, path: str | Path = "TICK_STATUS.md") -> list[TickEntry]:
    """Entries in ``text``, oldest first (``path`` is only used in messages)."""
    return _scan(doc_from_text(text).lines).entries


def parse_status(path: Path) -> list[TickEntry]:
    """Entries in the status file, oldest first; a missing file has none."""
    doc = read_doc_or_none(path)
    return _scan(doc.lines).entries if doc is not None else []


def iter_status_archive(archive_dir: Path) -> list[TickEntry]:
    """Entries of every archived status file in ``archive_dir``, oldest first.

    Archive names start with their first entry's stamp, so name order is time order.
    """
    archive_dir = Path(archive_dir)
    if not archive_dir.is_dir():
        return []
    out: list[TickEntry] = []
    for file in sorted(archive_dir.glob(ARCHIVE_GLOB)):
        out.extend(parse_archive(file))
    return out


def parse_archive(path: Path) -> list[TickEntry]:
    """Entries of one archived status file, oldest first. Memento writes an archive as a file of
    its own: a link, a FIFO or a folder of that name is none, never followed nor opened (a link to
    the status file showed its entries twice wherever the history is read)."""
    data = read_regular_or_none(path)
    return _scan(decode(data, path).lines).entries if data is not None else []


def last_entry_for(entries: Iterable[TickEntry], task_id: str) -> TickEntry | None:
    """The newest entry about ``task_id``, or None."""
    last = None
    for entry in entries:
        if entry.task_id == task_id:
            last = entry
    return last


def failed_attempts(entries: Iterable[TickEntry], task_id: str) -> list[TickEntry]:
    """FAILED/BLOCKED entries of ``task_id`` since its last SUCCESS, oldest first."""
    out: list[TickEntry] = []
    for entry in entries:
        if entry.task_id != task_id:
            continue
        status = entry.status
        if status == "SUCCESS":
            out = []
        elif status in ("FAILED", "BLOCKED"):
            out.append(entry)
    return out


# --- writing ---------------------------------------------------------------


def clean_value(value: object) -> str:
    """A field value as it will be written and read back: one line, no control characters."""
    text = ANSI_RE.sub("", str(value))
    text = " ".join(part.strip() for part in text.splitlines())
    return CONTROL_RE.sub("", text).strip()


def _clean_name(name: str) -> str:
    cleaned = clean_value(name).replace("*", "").strip().rstrip(":").strip()
    if not cleaned:
        raise ValueError(f"invalid status field name {name!r}")
    return cleaned


def format_entry(
    timestamp: str,
    tick: int,
    fields: Sequence[tuple[str, str]],
    continued: tuple[int, int] | None = None,
    error_tail: str | None = None,
) -> str:
    """One status entry as text (``\\n`` line ends), without the ``---`` separator.

    ``continued`` = (n, m) heads it ``Tick #N (continued, tasks_this_tick: n/m)``;
    ``error_tail`` becomes a fenced ``- **Error Tail**:`` block after the fields.
    """
    stamp = clean_value(timestamp).replace("]", "").replace("[", "")
    heading = f"## [{stamp}] Tick #{int(tick)}"
    if continued is not None:
        heading += f" (continued, tasks_this_tick: {int(continued[0])}/{int(continued[1])})"
    out = [heading]
    for name, value in fields:
        cleaned = clean_value(value)
        out.append(f"- **{_clean_name(name)}**:" + (f" {cleaned}" if cleaned else ""))
    tail = clean_block(error_tail) if error_tail else ""
    if tail:
        out.extend(["- **Error Tail**:", *fenced(tail)])
    return "\n".join(out) + "\n"


def _between_entries(line: str) -> bool:
    """A blank or ``---`` line: what separates entries, dropped around an entry's text."""
    return not line.strip() or SEPARATOR_RE.match(line) is not None


def _entry_lines(text: str) -> list[str]:
    """The lines of one or more formatted entries, without blank or ``---`` lines around them."""
    lines = text.splitlines()
    while lines and _between_entries(lines[0]):
        lines.pop(0)
    while lines and _between_entries(lines[-1]):
        lines.pop()
    if not lines or not _ENTRY_RE.match(lines[0]):
        raise ValueError("a status entry must start with a '## [timestamp] Tick #N' heading")
    return lines


def append_entry(path: Path, text: str) -> None:
    """Append ``text`` (from ``format_entry``) to the status file, after a ``---`` separator.

    Locked and atomic; creates the file and its header when missing; the new
    lines use the file's line endings and every existing byte is kept.
    """
    path = Path(path)
    locked_edit(path, lambda data: with_entry(data, text, path))


def with_entry(data: bytes, text: str, path: Path) -> bytes:
    """The status file's bytes ``data`` with ``text`` appended as :func:`append_entry` appends
    it (``path`` names the file in errors); nothing is read or written."""
    new = _entry_lines(text)
    expected = len(_scan(new).entries)
    doc = decode(data, path)
    nl = doc.newline
    lines = doc.lines
    if not any(ln.strip() for ln in lines):
        lines[:] = [HEADER + nl, nl]
    elif not any(strip_eol(ln).strip().casefold() == HEADER.casefold() for ln in lines):
        lines[0:0] = [HEADER + nl, nl]
    scan = _scan(lines)
    before = len(scan.entries)
    ensure_eol(lines, len(lines) - 1, nl)
    # Close what a hand edit left open, or the new entry would vanish into it.
    if scan.open_fence is not None:
        lines.append(scan.open_fence + nl)
    if scan.open_comment:
        lines.append("-->" + nl)
    last = next((strip_eol(ln).strip() for ln in reversed(lines) if ln.strip()), "")
    needs_separator = before > 0 and not SEPARATOR_RE.match(last)
    if lines and lines[-1].strip():
        lines.append(nl)
    if needs_separator:
        lines.extend([SEPARATOR + nl, nl])
    lines.extend(ln + nl for ln in new)
    if len(_scan(lines).entries) != before + expected:
        raise MementoError("could not append the status entry without breaking the file", path=path)
    return doc.encode()


# --- rotation ----------------------------------------------------------------


def _block_text(lines: Sequence[str], start: int, end: int) -> str:
    """An entry's text for comparison: newline-normalised, without trailing blanks/separators."""
    block = [strip_eol(ln) for ln in lines[start:end]]
    while block and _between_entries(block[-1]):
        block.pop()
    return "\n".join(block)


def _safe_stamp(stamp: str) -> str:
    safe = re.sub(r"[^0-9A-Za-z.+-]", "-", stamp.replace(":", "-")).strip("-.")
    return safe[:40] or "nostamp"


@dataclass
class _Rotation:
    """Where a rotation of the status log into its archive stands (one interrupted is finished)."""

    done: int  # entries at the head already archived by an interrupted rotation
    done_path: Path | None
    moved_end: int  # entries [done, moved_end) go into a new archive file
    new_path: Path | None
    new_bytes: bytes | None


def _archived_prefix(doc: LineDoc, scan: _Scan, archive_dir: Path) -> tuple[int, Path | None]:
    """How many leading entries interrupted rotations already archived.

    Each interrupted rotation left an archive holding exactly the entries at
    the head of the file (after those of the rotation before it), named from
    its first entry's stamp: follow that chain.
    """
    if not scan.entries or not archive_dir.is_dir():
        return 0, None
    texts = [_block_text(doc.lines, s, e) for s, e in scan.spans]
    done, done_path = 0, None
    while done < len(texts):
        prefix = f"TICK_STATUS_{_safe_stamp(scan.entries[done].timestamp)}_"
        best = 0
        for candidate in sorted(archive_dir.glob(prefix + "*.md")):
            # Memento writes an archive as a file of its own: a link there is none of them, and
            # one leading to the status file would have every entry dropped as archived.
            data = read_regular_or_none(candidate)
            if data is None:
                continue
            archived = decode(data, candidate)
            arch_scan = _scan(archived.lines)
            arch_texts = [_block_text(archived.lines, s, e) for s, e in arch_scan.spans]
            n = len(arch_texts)
            if n > best and arch_texts == texts[done : done + n]:
                best, done_path = n, candidate
        if not best:
            break
        done += best
    return done, done_path


def _plan_rotation(doc: LineDoc, archive_dir: Path, max_entries: int) -> _Rotation:
    if max_entries < 1:
        raise ValueError("max_entries must be at least 1")
    scan = _scan(doc.lines)
    done, done_path = _archived_prefix(doc, scan, archive_dir)
    total = len(scan.entries)
    keep = max(1, max_entries // 2)
    if total - done <= max_entries:
        return _Rotation(done, done_path, done, None, None)
    moved_end = total - keep
    first, last = scan.entries[done], scan.entries[moved_end - 1]
    start, end = scan.spans[done][0], scan.spans[moved_end - 1][1]
    nl = doc.newline
    data = "".join([HEADER + nl, nl, *doc.lines[start:end]]).encode("utf-8")
    base = f"TICK_STATUS_{_safe_stamp(first.timestamp)}_{_safe_stamp(last.timestamp)}"
    target = archive_dir / f"{base}.md"
    n = 2
    # A different file that happens to carry the same name is never overwritten.
    while os.path.lexists(target) and read_regular_or_none(target) != data:
        target = archive_dir / f"{base}_{n}.md"
        n += 1
    return _Rotation(done, done_path, moved_end, target, data)


def _write_archive(rotation: _Rotation) -> None:
    if rotation.new_path is not None and rotation.new_bytes is not None:
        atomic_write_bytes(rotation.new_path, rotation.new_bytes)


def _rotate_archive_step(path: Path, archive_dir: Path, max_entries: int) -> Path | None:
    """Rotation's first half only: write the archive file, leave the status file alone.

    Exists so tests can reproduce a crash between the two writes.
    """
    path = Path(path)
    with file_lock(lock_path_for(path)):
        doc = read_doc_or_none(path)
        if doc is None:
            return None
        rotation = _plan_rotation(doc, Path(archive_dir), max_entries)
        _write_archive(rotation)
        return rotation.new_path


def rotate(
    path: Path, archive_dir: Path, max_entries: int, now: datetime | None = None
) -> Path | None:
    """Move old entries into ``archive_dir`` once the file holds more than ``max_entries``.

    The newest ``max(1, max_entries // 2)`` entries stay, so rotation happens
    every ``max_entries // 2`` ticks or so, not on every tick. The archive
    file is named from the first and last moved stamps and written atomically
    before the status file is rewritten atomically, both under the status
    file's lock. After a crash between the two, the next call finds the
    archive holding exactly the file's leading entries and only drops them
    (entries appended meanwhile stay): nothing is lost or doubled. Returns the
    archive written or completed, else None. ``now`` is not used: names come
    from the entries so that a re-run picks the same file.
    """
    del now
    path = Path(path)
    archive_dir = Path(archive_dir)
    result: list[Path | None] = [None]

    def transform(data: bytes) -> bytes | None:
        result[0] = None
        if not data:
            return None
        doc = decode(data, path)
        rotation = _plan_rotation(doc, archive_dir, max_entries)
        if rotation.moved_end == 0:
            return None
        _write_archive(rotation)
        crash_point("rotate:after-archive")
        result[0] = rotation.new_path or rotation.done_path
        spans = _scan(doc.lines).spans
        preamble = doc.lines[: spans[0][0]]
        kept_from = spans[rotation.moved_end][0] if rotation.moved_end < len(spans) else len(doc.lines)
        doc.lines[:] = [*preamble, *doc.lines[kept_from:]]
        return doc.encode()

    locked_edit(path, transform)
    return result[0]
