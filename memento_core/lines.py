"""Byte-faithful line access for the files people and Memento both edit.

A file is kept as its BOM plus a list of lines *with* their endings, so an
edit replaces one line and every other byte (CRLF, missing final newline,
BOM) survives exactly.
"""

from __future__ import annotations

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


def read_doc(path: Path) -> LineDoc:
    """Read a text file as a LineDoc; a missing file or a directory is a MementoError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MementoError("file not found", path=path) from None
    except IsADirectoryError:
        raise MementoError("is a directory, not a file", path=path) from None
    except PermissionError:
        raise MementoError("permission denied", path=path) from None
    return decode(data, path)


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def eol_of(line: str) -> str:
    return line[len(strip_eol(line)) :]
