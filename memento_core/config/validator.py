"""memento.toml's typed reads: one key of the parsed TOML, or an error at its line (SPEC §10).

:class:`Validator` reads a key of a section as the type it must have and fails
with a MementoError naming the file, ``[section] key`` and the key's line;
:func:`key_line` and :func:`entry_line` find that line in the text (tomllib
gives none).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..durations import parse_duration
from ..errors import MementoError
from .model import PRESET_NAMES


def key_line(text: str, section: str, key: str) -> int:
    """Best-effort 1-based line of ``key`` in ``[section]`` (0 if not found)."""
    lines = text.splitlines()
    current = ""
    header = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
    assign = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    dotted = re.compile(rf"^\s*{re.escape(section)}\s*\.\s*{re.escape(key)}\s*=")
    for number, line in enumerate(lines, 1):
        m = header.match(line)
        if m:
            current = m.group(1)
            continue
        if current == section and assign.match(line):
            return number
        if current == "" and dotted.match(line):
            return number
    for number, line in enumerate(lines, 1):
        m = header.match(line)
        if m and m.group(1) == section:
            return number
    return 0


class Validator:
    def __init__(self, path: Path, text: str, raw: dict[str, Any]):
        self.path = path
        self.text = text
        self.raw = raw

    def fail(self, section: str, key: str, message: str) -> MementoError:
        return MementoError(
            f"[{section}] {key}: {message}", path=self.path, line=key_line(self.text, section, key)
        )

    def table(self, section: str) -> dict[str, Any]:
        value = self.raw.get(section, {})
        if not isinstance(value, dict):
            raise MementoError(
                f"[{section}] must be a table, got {type(value).__name__}",
                path=self.path,
                line=key_line(self.text, "", section),
            )
        return value

    def string(self, section: str, key: str, default: str) -> str:
        value = self.table(section).get(key, default)
        if not isinstance(value, str):
            raise self.fail(section, key, f"expected a string, got {value!r}")
        return value

    def dollars(self, section: str, key: str) -> float:
        value = self.table(section).get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(section, key, f"expected an amount in US dollars (0 or more), got {value!r}")
        return float(value)

    def tokens(self, section: str, key: str) -> int:
        value = self.table(section).get(key, 0)
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0
                or value == float("inf") or value != int(value)):
            raise self.fail(section, key, f"expected a whole number of tokens (0 or more), got {value!r}")
        return int(value)

    def percent(self, section: str, key: str) -> float:
        value = self.table(section).get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
            raise self.fail(section, key, f"expected a percentage from 1 to 100 (0: off), got {value!r}")
        if 0 < value < 1:
            raise self.fail(section, key, f"a percentage from 1 to 100, e.g. 95 (not a fraction), got {value!r}")
        return float(value)

    def presets(self, section: str, key: str, default: list) -> tuple[str, ...]:
        value = self.table(section).get(key, default)
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise self.fail(section, key, f"expected a list of preset names, got {value!r}")
        for name in value:
            if name not in PRESET_NAMES:
                raise self.fail(section, key, f"unknown preset {name!r}; one of {', '.join(PRESET_NAMES)}")
        return tuple(value)

    def duration(self, section: str, key: str, default: str) -> tuple[float, str]:
        value = self.table(section).get(key, default)
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            raise self.fail(section, key, str(exc)) from None
        if seconds <= 0:
            raise self.fail(section, key, f"must be longer than zero, got {value!r}")
        return seconds, value if isinstance(value, str) else str(value)


def entry_line(text: str, section: str, key: str, entry: object) -> int:
    """The line of ``entry`` in the list ``key`` of ``[section]`` (a list may span lines), else the key's."""
    start = key_line(text, section, key)
    if start and isinstance(entry, str):
        lines = text.splitlines()
        for number in range(start, min(len(lines), start + 200) + 1):
            # the next key or table ends the list: a value quoted there is not the list's
            if number > start and re.match(r"^\s*(\[|[A-Za-z0-9_\"'-]+\s*=)", lines[number - 1]):
                break
            if f'"{entry}"' in lines[number - 1] or f"'{entry}'" in lines[number - 1]:
                return number
    return start
