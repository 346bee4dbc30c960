"""HUMAN_NOTES.md: notes from people to the worker (SPEC §5).

A one-pass line scanner reads the file; every change is a minimal line edit
made under the file's lock (``locks.locked_edit``), so the bytes a person
wrote (CRLF, BOM, comments, prose) survive exactly.

Structure is recognised only outside fenced code blocks and HTML comment
blocks: ``### [NOTE…]`` headings start a note; any other level 1-3 heading
or a ``---`` line ends it; level-2 headings open sections (``## Active
Notes``, ``## Archive``). Inside a note body a line whose first non-blank
character is a backslash followed by structure (``\\###``, ``\\---``,
``\\<!--``, ``\\```…``) is shown without that backslash, as markdown would;
``add_note`` writes such escapes so any text round-trips as one note.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .errors import MementoError
from .lines import (
    LineDoc,
    clean_block,
    decode,
    doc_from_text,
    ensure_eol,
    eol_of,
    read_doc_or_none,
    strip_eol,
)
from .locks import locked_edit, open_append, read_no_follow
from .markdown.blocks import COMMENT, FENCE_OPEN, SEPARATOR_RE, TEXT, BlockScanner
from .plan.model import TASK_ID_RE

TITLE = "# HUMAN NOTES"
ACTIVE_HEADING = "## Active Notes"
ARCHIVE_HEADING = "## Archive"
GLOBAL = "global"
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S"

_NOTE_HEADING_RE = re.compile(r"^ {0,3}###[ \t]+\[(?P<kind>NOTE|ANSWER)(?P<read>:READ)?\](?P<rest>.*)$", re.I)
_NOTE_MARK_RE = re.compile(r"\[(NOTE|ANSWER)\]", re.I)
_SOURCE_RE = re.compile(r"<!--[ \t]*from[ \t]+(?P<source>[a-z]+)[ \t]*-->", re.I)
NOTE, ANSWER = "NOTE", "ANSWER"  # a note's kinds: a person's note, a person's answer to a question (SPEC §18)
_HEADING_RE = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<title>.*?))?[ \t#]*$")
_INLINE_COMMENT_RE = re.compile(r"<!--.*?-->")
_ARROW_RE = re.compile(r"\s*(?:→|->|=>|⟶)\s*")
_STAMP_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$", re.I
)
# Lines add_note escapes (one backslash after the indentation) and the parser unescapes.
_NEEDS_ESCAPE_RE = re.compile(r"^[ \t]*\\*(?:#|---|```|~~~|<!--)")
_ESCAPED_RE = re.compile(r"^(?P<indent>[ \t]*)\\(?P<rest>\\*(?:#|---|```|~~~|<!--).*)$", re.S)


@dataclass(frozen=True)
class Note:
    """One note: heading line (1-based), normalised UTC timestamp, target, read flag, body text."""

    line: int
    timestamp: str
    target: str
    read: bool
    text: str
    archived: bool
    occurrence: int = 0  # how many earlier notes share timestamp, target and text
    kind: str = NOTE  # ANSWER: a person's answer to the target task's question (SPEC §18)
    source: str = ""  # an answer's origin as its heading says (cli, dashboard, browser, telegram, matrix)

    @property
    def key(self) -> str:
        """A stable identity: timestamp, target and a digest of the text.

        It survives marking read, archiving and notes added around it; it
        changes when someone edits the note's text, so an edited note counts
        as a new one (a worker that saw the old text does not mark it read).
        """
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]
        suffix = f".{self.occurrence}" if self.occurrence else ""
        kind = "" if self.kind == NOTE else f"{self.kind}|"  # a note's key as it always was
        return f"{kind}{self.timestamp}|{self.target}|{digest}{suffix}"

    @property
    def is_answer(self) -> bool:
        return self.kind == ANSWER

    @property
    def is_global(self) -> bool:
        return self.target.lower() == GLOBAL

    @property
    def when(self) -> datetime | None:
        """The timestamp as an aware UTC datetime, or None when it is not a date."""
        return _parse_stamp(self.timestamp)


@dataclass
class _Scan:
    """HUMAN_NOTES.md read once: its notes, their lines, its sections, and what was left open."""

    notes: list[Note]
    spans: list[tuple[int, int]]  # 0-based [heading, end) of each note, trailing blanks included
    active: tuple[int, int] | None  # 0-based [heading, end) of the Active Notes section
    archive: tuple[int, int] | None
    fence_open: int | None  # 0-based line of a fence left open at end of file
    comment_open: int | None  # 0-based line of an HTML comment left open at end of file


def _parse_stamp(stamp: str) -> datetime | None:
    if not stamp or not _STAMP_RE.match(stamp):
        return None
    text = stamp.replace(" ", "T")
    if text[-1] in "zZ":
        text = text[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return _as_utc(value)


def _as_utc(value: datetime | None) -> datetime:
    """``value`` in UTC (a naive one is taken as UTC already); None is now."""
    if value is None:
        return datetime.now(UTC)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _normalise_stamp(stamp: str) -> str:
    value = _parse_stamp(stamp)
    if value is None:
        return stamp
    return value.strftime(TIMESTAMP_FORMAT)


def _normalise_target(target: str) -> str:
    target = target.strip().strip("`").strip()
    if not target or target.lower() == GLOBAL:
        return GLOBAL
    return target


def _parse_heading_rest(rest: str) -> tuple[str, str]:
    """Timestamp and target from what follows ``[NOTE]`` on a heading line."""
    rest = _INLINE_COMMENT_RE.sub(" ", rest).strip().rstrip("#").strip()
    parts = _ARROW_RE.split(rest, maxsplit=1)
    if len(parts) == 2:
        return _normalise_stamp(parts[0].strip()), _normalise_target(parts[1])
    words = rest.split()
    # "2026-11-29 15:00" is one stamp written with a space.
    if len(words) >= 2 and _STAMP_RE.match(f"{words[0]} {words[1]}"):
        words = [f"{words[0]} {words[1]}", *words[2:]]
    if words and _STAMP_RE.match(words[0]):
        return _normalise_stamp(words[0]), _normalise_target(" ".join(words[1:]))
    return "", _normalise_target(rest)


def _unescape(line: str) -> str:
    m = _ESCAPED_RE.match(line)
    return m.group("indent") + m.group("rest") if m else line


class _Reader:
    """What one pass over HUMAN_NOTES.md has found so far; fed the lines outside blocks."""

    def __init__(self, n_lines: int):
        self.n_lines = n_lines
        self.notes: list[Note] = []
        self.spans: list[tuple[int, int]] = []
        self.active: list[int] | None = None
        self.archive: list[int] | None = None
        self.section: list[int] | None = None  # the open level-1/2 section, [start, end]
        self.in_archive = False
        # the note being read: heading index, stamp, target, read flag, kind, source; and its body lines
        self.current: tuple[int, str, str, bool, str, str] | None = None
        self.body: list[str] = []

    def close_note(self, end: int) -> None:
        if self.current is None:
            return
        start, stamp, target, read, kind, source = self.current
        body = self.body
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        self.notes.append(Note(start + 1, stamp, target, read, "\n".join(body), self.in_archive,
                               kind=kind, source=source))
        self.spans.append((start, end))
        self.current = None
        self.body = []

    def open_section(self, i: int, title: str) -> None:
        """A level 1-2 heading: it ends the open section and may be Active Notes or Archive."""
        if self.section is not None:
            self.section[1] = i
        self.section = [i, self.n_lines]
        self.in_archive = title.startswith("archive")
        if self.in_archive and self.archive is None:
            self.archive = self.section
        elif title.startswith("active") and self.active is None:
            self.active = self.section

    def text_line(self, i: int, s: str) -> None:
        """A line outside fences and comments: a note heading, another heading, ``---`` or text."""
        m = _NOTE_HEADING_RE.match(s)
        if m:
            self.close_note(i)
            stamp, target = _parse_heading_rest(m.group("rest"))
            source = _SOURCE_RE.search(m.group("rest"))
            self.current = (i, stamp, target, bool(m.group("read")), m.group("kind").upper(),
                            source.group("source").lower() if source else "")
            return
        m = _HEADING_RE.match(s)
        if m and len(m.group("hashes")) <= 3:
            self.close_note(i)
            if len(m.group("hashes")) <= 2:
                self.open_section(i, (m.group("title") or "").strip().lower())
            return
        if SEPARATOR_RE.match(s):
            self.close_note(i)
            return
        if self.current is not None:
            self.body.append(_unescape(s))


def _scan(lines: Sequence[str]) -> _Scan:
    reader = _Reader(len(lines))
    blocks = BlockScanner()
    step = blocks.step
    fence_line: int | None = None  # 0-based line of the last fence opened
    comment_line: int | None = None  # 0-based line of the last comment opened
    for i, raw in enumerate(lines):
        s = strip_eol(raw)
        in_comment = blocks.in_comment
        kind = step(s)
        if kind is TEXT:
            reader.text_line(i, s)
        elif kind is COMMENT:
            if not in_comment:
                comment_line = i
        else:  # a fence's lines belong to the note as written
            if kind is FENCE_OPEN:
                fence_line = i
            if reader.current is not None:
                reader.body.append(s)
    reader.close_note(len(lines))
    active, archive = reader.active, reader.archive
    return _Scan(
        _number_repeats(reader.notes),
        reader.spans,
        (active[0], active[1]) if active else None,
        (archive[0], archive[1]) if archive else None,
        fence_line if blocks.fence is not None else None,
        comment_line if blocks.in_comment else None,
    )


def _number_repeats(notes: list[Note]) -> list[Note]:
    """Each note with its occurrence index among notes sharing timestamp, target and text."""
    seen: dict[tuple[str, str, str], int] = {}
    numbered: list[Note] = []
    for note in notes:
        ident = (note.timestamp, note.target, note.text)
        n = seen.get(ident, 0)
        seen[ident] = n + 1
        numbered.append(note if n == 0 else replace(note, occurrence=n))
    return numbered


def parse_notes_text(text: str, path: str | Path = "HUMAN_NOTES.md") -> list[Note]:
    """Notes in ``text``, in file order (``path`` is only used in messages)."""
    return _scan(doc_from_text(text).lines).notes


def parse_notes(path: Path) -> list[Note]:
    """Notes in the file at ``path``; a missing file has none. Bad UTF-8 is a MementoError."""
    doc = read_doc_or_none(Path(path))
    return _scan(doc.lines).notes if doc is not None else []


# --- writing ---------------------------------------------------------------


def clean_note_text(text: str) -> str:
    """The text a note will show once written: what ``add_note`` stores and parsing returns.

    Line breaks of any kind become ``\\n``; ANSI escapes and control characters
    other than tab are dropped; trailing whitespace on each line and blank
    lines around the text are removed.
    """
    return clean_block(text)


def validate_target(target: str) -> str:
    """``global`` or a task id, normalised; anything else is a MementoError."""
    value = (target or "").strip()
    if not value or value.lower() == GLOBAL:
        return GLOBAL
    if not TASK_ID_RE.fullmatch(value):
        raise MementoError(
            f"note target {target!r} is neither 'global' nor a task id like T-101"
        )
    return value


def _is_blank(line: str) -> bool:
    return not line.strip()


def _note_block(stamp: str, target: str, text: str, nl: str, kind: str = NOTE, source: str = "") -> list[str]:
    origin = f" <!-- from {source} -->" if source else ""
    out = [f"### [{kind}] {stamp} → {target}{origin}{nl}"]
    for ln in text.split("\n"):
        out.append(("\\".join(_split_indent(ln)) if _NEEDS_ESCAPE_RE.match(ln) else ln) + nl)
    return out


def _split_indent(line: str) -> tuple[str, str]:
    body = line.lstrip(" \t")
    return line[: len(line) - len(body)], body


def _insert_block(lines: list[str], at: int, block: list[str], nl: str) -> None:
    """Insert ``block`` at ``at`` with one blank line on either side where needed."""
    before = at - 1
    ensure_eol(lines, before, nl)
    chunk = list(block)
    if before >= 0 and not _is_blank(lines[before]):
        chunk.insert(0, nl)
    if at < len(lines) and not _is_blank(lines[at]):
        chunk.append(nl)
    lines[at:at] = chunk


def _content_end(lines: Sequence[str], start: int, end: int) -> int:
    """Index just after the last line in [start, end) that is not blank, ``---`` or a comment."""
    last = start
    step = BlockScanner().step  # ``start`` is a heading: outside any block
    for i in range(start, end):
        s = strip_eol(lines[i])
        kind = step(s)
        if kind is COMMENT or (kind is TEXT and (_is_blank(s) or SEPARATOR_RE.match(s))):
            continue
        last = i + 1  # text, or a line of a fence (its blank lines and ``---`` included)
    return last


def _template(nl: str) -> list[str]:
    return [f"{TITLE}{nl}", nl, f"{ACTIVE_HEADING}{nl}", nl, f"---{nl}", nl, f"{ARCHIVE_HEADING}{nl}"]


def _ensure_sections(doc: LineDoc, path: Path, removed: int = 0) -> _Scan:
    """Add the title and any missing section to ``doc``; returns the fresh scan. ``removed``: how
    many lines of the file were taken out of ``doc`` before, for the line a refusal names (all
    of them above a block left open: a note below it would be inside it)."""
    nl = doc.newline
    lines = doc.lines
    if not any(not _is_blank(ln) for ln in lines):
        lines[:] = _template(nl)
        return _scan(lines)
    scan = _scan(lines)
    if scan.active is None or scan.archive is None:
        # A section added at the end of the file would be inside the block left open there:
        # never read as a section, so the note or the archived ones would go nowhere.
        for line, what in ((scan.fence_open, "a code fence"), (scan.comment_open, "an HTML comment")):
            if line is not None:
                raise MementoError(f"{what} opened here is never closed, and a missing section would go "
                                   "inside it; close it first", path=path, line=removed + line + 1)
    if scan.active is None:
        if scan.archive is not None:
            # Put the new section just before the separator/blank lines that precede Archive.
            at = _content_end(lines, 0, scan.archive[0])
            _insert_block(lines, at, [f"{ACTIVE_HEADING}{nl}"], nl)
        else:
            ensure_eol(lines, len(lines) - 1, nl)
            lines.extend([nl, f"{ACTIVE_HEADING}{nl}"])
        scan = _scan(lines)
    if scan.archive is None:
        ensure_eol(lines, len(lines) - 1, nl)
        tail = [nl] if not _is_blank(lines[-1]) else []
        lines.extend([*tail, f"---{nl}", nl, f"{ARCHIVE_HEADING}{nl}"])
        scan = _scan(lines)
    return scan


def add_note(
    path: Path, text: str, target: str = GLOBAL, now: datetime | None = None, *,
    kind: str = NOTE, source: str = "",
) -> Note:
    """Append a note at the end of the Active Notes section; returns it as parsed back.

    Creates the file from the template, or the missing sections, when needed. ``kind`` ANSWER
    writes a person's answer to the target task's question (``### [ANSWER] … → T-1 <!-- from
    cli -->``, SPEC §18): it needs a task, never global.
    """
    path = Path(path)
    target = validate_target(target)
    if kind not in (NOTE, ANSWER) or (kind == ANSWER and target == GLOBAL):
        raise MementoError(f"an answer is for one task, not {target}" if kind == ANSWER else f"unknown note kind {kind}")
    if source and not source.isalpha():
        raise MementoError(f"unknown answer source {source!r}")
    body = clean_note_text(text)
    if not body:
        raise MementoError("a note needs some text", path=path)
    stamp = _as_utc(now).strftime(TIMESTAMP_FORMAT)
    result: list[Note] = []

    def transform(data: bytes) -> bytes:
        doc = decode(data, path)
        nl = doc.newline
        scan = _ensure_sections(doc, path)
        assert scan.active is not None
        start, end = scan.active
        at = _content_end(doc.lines, start, end)
        if scan.fence_open is not None and scan.fence_open < at:
            raise MementoError(
                "a code fence opened here is never closed; close it before adding notes",
                path=path,
                line=scan.fence_open + 1,
            )
        _insert_block(doc.lines, at, _note_block(stamp, target, body, nl, kind, source.lower()), nl)
        after = _scan(doc.lines)
        heading_line = next(
            (i for i, ln in enumerate(doc.lines[at : at + 2], start=at) if ln.startswith("### ")), at
        )
        added = [n for n in after.notes if n.line == heading_line + 1]
        if len(added) != 1 or added[0].text != body or added[0].target != target or added[0].kind != kind:
            raise MementoError("could not add the note without breaking the file", path=path)
        result.append(added[0])
        data = doc.encode()
        _record_new_note(path, data, added[0].line)
        return data

    locked_edit(path, transform)
    return result[0]


def _record_new_note(path: Path, data: bytes, line: int) -> None:
    """Before the note lands: it is added through Memento, so a tick that runs meanwhile keeps it (SPEC §13)."""
    from .receipts import root_of_doc, vouch

    receipts = path.parent.parent / ".memento"
    for note in parse_notes_text(data.decode("utf-8", "replace"), path):
        if note.line == line:
            vouch(root_of_doc(path), {"op": "note", "key": note.key})  # the running tick's receipt (SPEC §13)
            if receipts.is_dir():
                record_added(receipts / "notes_added", note.key)  # the architect's run reads these


def notes_for_task(notes: Iterable[Note], task_id: str) -> list[Note]:
    """Unread, active notes for ``task_id`` and global ones, in file order."""
    return [
        n for n in notes if not n.read and not n.archived and (n.is_global or n.target == task_id)
    ]


def mark_read(path: Path, keys: Iterable[str]) -> int:
    """Turn ``[NOTE]`` into ``[NOTE:READ]`` (``[ANSWER]`` into ``[ANSWER:READ]``) on the notes with
    these keys; returns how many changed."""
    path = Path(path)
    wanted = set(keys)
    if not wanted:
        return 0
    changed = [0]

    def transform(data: bytes) -> bytes | None:
        changed[0] = 0
        if not data:
            return None
        doc = decode(data, path)
        for note in _scan(doc.lines).notes:
            if note.read or note.key not in wanted:
                continue
            i = note.line - 1
            doc.lines[i] = _NOTE_MARK_RE.sub(lambda m: f"[{m.group(1)}:READ]", doc.lines[i], count=1)
            changed[0] += 1
        return doc.encode() if changed[0] else None

    locked_edit(path, transform)
    return changed[0]


def archive_read(path: Path) -> int:
    """Move read notes that are not archived yet under ``## Archive``; returns how many moved.

    Moved notes keep their bytes. It is one atomic replace, so a crash leaves
    either the old file or the new one: no note is lost or doubled.
    """
    path = Path(path)
    moved_count = [0]

    def transform(data: bytes) -> bytes | None:
        moved_count[0] = 0
        if not data:
            return None
        doc = decode(data, path)
        scan = _scan(doc.lines)
        picks = [k for k, n in enumerate(scan.notes) if n.read and not n.archived]
        if not picks:
            return None
        nl = doc.newline
        before = sorted(n.key for n in scan.notes)
        lines = doc.lines
        blocks: list[list[str]] = []
        for k in picks:
            start, end = scan.spans[k]
            block = lines[start:end]
            while block and _is_blank(block[-1]):
                block.pop()
            if block and not eol_of(block[-1]):
                block[-1] += nl
            blocks.append(block)
        for k in reversed(picks):
            start, end = scan.spans[k]
            del lines[start:end]
        scan2 = _ensure_sections(doc, path, sum(scan.spans[k][1] - scan.spans[k][0] for k in picks))
        assert scan2.archive is not None
        start, end = scan2.archive
        at = _content_end(lines, start, end)
        for block in reversed(blocks):
            _insert_block(lines, at, block, nl)
        after = _scan(lines)
        moved = {scan.notes[k].key for k in picks}
        if sorted(n.key for n in after.notes) != before or any(
            not n.archived for n in after.notes if n.key in moved
        ):
            raise MementoError("archiving would change the notes; file left as it was", path=path)
        moved_count[0] = len(picks)
        return doc.encode()

    locked_edit(path, transform)
    return moved_count[0]


def unread_older_than(
    notes: Iterable[Note], age: timedelta, now: datetime | None = None
) -> list[Note]:
    """Unread, active notes whose timestamp is more than ``age`` before ``now`` (UTC)."""
    cutoff = _as_utc(now) - age
    out = []
    for note in notes:
        if note.read or note.archived:
            continue
        when = note.when
        if when is not None and when < cutoff:
            out.append(note)
    return out


def record_added(receipts: Path, key: str) -> None:
    """Remember that the note ``key`` was added through Memento (a tick keeps such notes
    when they appear while an agent runs; a note written into the file by hand then is not).
    A hard link an agent put there is made a file of its own first, never written through."""
    with open_append(Path(receipts), split=True) as fh:
        fh.write(key + "\n")


def added_keys(receipts: Path) -> frozenset[str]:
    """The keys :func:`record_added` wrote (empty when there is no such file)."""
    data = read_no_follow(Path(receipts))
    return frozenset(line for line in data.decode("utf-8", "replace").splitlines() if line)
