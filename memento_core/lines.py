"""Byte-faithful line access for the files people and Memento both edit.

A file is kept as its BOM plus a list of lines *with* their endings, so an
edit replaces one line and every other byte (CRLF, missing final newline,
BOM) survives exactly.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import MementoError

BOM = "\ufeff"


@dataclass
class LineDoc:
    """A decoded text file: optional BOM and the lines with their endings."""

    bom: bool
    lines: list[str]

    @property
    def newline(self) -> str:
        """The file's dominant line ending, used for lines Memento inserts."""
        for line in self.lines:
            if line.endswith("\r\n"):
                return "\r\n"
            if line.endswith("\n"):
                return "\n"
        return "\n"

    def text(self) -> str:
        return (BOM if self.bom else "") + "".join(self.lines)

    def encode(self) -> bytes:
        return self.text().encode("utf-8")


def decode(data: bytes, path: str | Path = "<text>") -> LineDoc:
    """Decode UTF-8 bytes into a LineDoc; bad bytes are a MementoError naming the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise MementoError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", path=path, line=line
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise MementoError("contains NUL bytes: not a text file", path=path, line=line)
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    return LineDoc(bom, split_lines(text))


def doc_from_text(text: str) -> LineDoc:
    """Already decoded text as a LineDoc (a leading BOM is noted, lines split as by ``decode``)."""
    bom = text.startswith(BOM)
    return LineDoc(bom, split_lines(text[1:] if bom else text))


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on ``\n`` only.

    ``str.splitlines`` also breaks at form feeds, ``\x85`` and ``\u2028``; editors,
    git and the plan scanner do not, and line numbers must agree with them.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class NotAFile(MementoError, OSError):
    """Memento refused to read something that is not a regular file: a FIFO, a socket or a device
    (opening or reading it could block the tick for ever, SPEC §13), a folder, or a link. An
    OSError too: a caller that treats an unreadable file as missing treats this one so."""


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"))


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO", "a regular file")."""
    return next((name for test, name in _KINDS if test(mode)), "a regular file" if stat.S_ISREG(mode) else
                "not a regular file")


def read_regular(path: Path, display: str | Path | None = None, *, follow: bool = False,
                 limit: int | None = None, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``), never blocking on what an agent made.

    Opened with ``O_NONBLOCK`` (a FIFO without a writer does not hold the open) and, unless
    ``follow``, ``O_NOFOLLOW``; then ``fstat``: a FIFO, socket or device is :class:`NotAFile`
    naming it, unread; a folder IsADirectoryError, a missing file FileNotFoundError.
    Memento reads every file an agent could make (the report, the review, the memory queue, the
    documents) through this (SPEC §13 "Either way")."""
    shown = display if display is not None else path
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotAFile(f"is a symbolic link, not a {what}; Memento does not read through it",
                           path=shown) from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket cannot be opened
            raise NotAFile("is a socket, not a regular file; Memento does not read it", path=shown) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(shown))
        raise NotAFile(f"is {file_kind(mode)}, not a regular file; Memento does not read it (it could block "
                       "for ever)", path=shown)
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if limit is None else fh.read(limit)


def read_regular_or_none(path: Path, *, follow: bool = False, limit: int | None = None) -> bytes | None:
    """:func:`read_regular`, or None when the file cannot be read as one: gone, a link (unless
    ``follow``), a FIFO, a socket, a device, a folder, no permission."""
    try:
        return read_regular(path, follow=follow, limit=limit)
    except (OSError, NotAFile):
        return None


def read_text_file(path: Path, errors: str = "strict") -> str:
    """A regular file's text (UTF-8, ``errors`` as for ``bytes.decode``), through a link; a FIFO,
    socket or device is :class:`NotAFile` (an OSError), never opened to block on. For Memento's
    state files and the documents it shows (``Path.read_text`` would block on a FIFO)."""
    return read_regular(Path(path), follow=True).decode("utf-8", errors)


def read_bytes(path: Path, display: str | Path | None = None, what: str = "file") -> bytes:
    """A file's bytes (through a link: a person may link a document); missing, not a regular
    file (a directory, a FIFO) or unreadable is a MementoError naming ``display``."""
    shown = display if display is not None else path
    try:
        return read_regular(Path(path), shown, follow=True, what=what)
    except FileNotFoundError:
        raise MementoError(f"{what} not found", path=shown) from None
    except IsADirectoryError:
        raise MementoError(f"is a directory, not a {what}", path=shown) from None
    except PermissionError:
        raise MementoError("permission denied", path=shown) from None


def read_bytes_or_none(path: Path) -> bytes | None:
    """A file's bytes, or None when it does not exist; a directory or a FIFO is a MementoError."""
    try:
        return read_regular(Path(path), follow=True)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MementoError("is a directory, not a file", path=path) from None


def read_doc_or_none(path: Path) -> LineDoc | None:
    """A text file as a LineDoc, or None when it does not exist (a file with no notes yet,
    no ticks yet); a directory or bad UTF-8 is a MementoError."""
    data = read_bytes_or_none(path)
    return decode(data, path) if data is not None else None


# Terminal escape sequences (CSI, OSC such as OSC 52 clipboard writes, and two-byte
# escapes) and the C0/C1 control characters other than tab and newline: text from
# agents and people must never style or steer a terminal.
ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str, replacement: str = "") -> str:
    """``text`` without escape sequences and control characters (tab and newline kept)."""
    return CONTROL_RE.sub(replacement, ANSI_RE.sub("", text))


def clean_block(text: str) -> str:
    """Multi-line text as Memento writes it: escapes and controls gone, line breaks ``\\n``,
    trailing spaces and the blank lines around the text dropped."""
    lines = [strip_controls(ln).rstrip() for ln in text.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def eol_of(line: str) -> str:
    return line[len(strip_eol(line)) :]


def safe_text(text: str) -> str:
    """Text from files, made harmless for a terminal: every character that is not
    printable but a tab becomes ``?``.

    Broader than :func:`strip_controls` on purpose: ``str.isprintable`` also refuses
    line and paragraph separators and format characters such as bidi overrides, which
    could make a printed line read differently from the file; and ``?`` shows that
    something was there.
    """
    return "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in text)


# Chat mentions a notification must not carry: Discord's and Slack's @everyone/@here, Slack's
# @channel, Matrix's @room; and the tags <@123> (a user), <@&123> (a role), <#123> (a channel),
# <!channel>/<!here>/<!subteam^…> (Slack).
_MENTION_RE = re.compile(r"@(?=(?:everyone|here|channel|room)\b)", re.I)
_CHAT_TAG_RE = re.compile(r"<([@!#][^<>\s]{0,80})>")
_DROPPED = frozenset(("Cc", "Cf", "Zl", "Zp"))  # control, format (bidi, zero-width), line/paragraph sep


def message_text(text: str) -> str:
    """Text for a notification or a report (SPEC §15), whatever an agent or a file put in it:
    without escape sequences, control characters (a newline kept, a tab a space), bidi overrides
    and every other format character (Unicode Cf: U+202A–202E, U+2066–2069, zero-width spaces,
    U+2060), line or paragraph separators; with chat mentions defused, visibly: ``@everyone``,
    ``@here``, ``@channel``, ``@room`` get a full-width ＠ (U+FF20), a tag like ``<@123>``,
    ``<@&123>``, ``<#1>`` or ``<!channel>`` angle quotes ‹ › for its brackets, so the words
    read the same and ping nobody. Idempotent."""
    import unicodedata

    text = ANSI_RE.sub("", text).replace("\t", " ").replace("\u2028", " ").replace("\u2029", " ")
    text = "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) not in _DROPPED)
    text = "".join("?" if "\ud800" <= ch <= "\udfff" else ch for ch in text)  # a lone surrogate (bad bytes)
    text = _CHAT_TAG_RE.sub(lambda m: f"‹{m.group(1)}›", text)
    return _MENTION_RE.sub("＠", text)


def ensure_eol(lines: list[str], index: int, newline: str) -> None:
    """Give ``lines[index]`` a line ending if it has none (a last line), before lines go after it."""
    if lines and index >= 0 and not eol_of(lines[index]):
        lines[index] += newline


def plural(n: int, word: str, words: str = "") -> str:
    """``1 task``, ``2 tasks`` (``words``: an irregular plural, ``1 entry``/``2 entries``)."""
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"


def listed(items, limit: int = 5) -> str:
    """``items`` joined with ", ", at most ``limit`` of them: a cut list always says so
    ("T-1, T-2, … and 7 more"), so a person never takes five for all."""
    items = [str(i) for i in items]
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", … and {len(items) - limit} more"


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in "…" when it was longer."""
    return text if len(text) <= limit else text[:max(limit - 1, 0)].rstrip() + "…"
