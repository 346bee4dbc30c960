"""Path patterns as a ``.gitignore`` writes them (``protected_paths``, ``.memento/cleanignore``),
matched in Python with no git process (SPEC §13).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path


@functools.lru_cache(maxsize=1024)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob with ``**`` to a regex: ``*``/``?`` stay inside one path component."""
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j)
            if j < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : j]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                if body.startswith("^"):
                    body = "\\" + body
                out.append("[" + ("^" if negate else "") + body + "]")
                i = j + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Does ``path`` match one of ``patterns``?

    A pattern is an exact path (a folder name also covers what is inside
    it), a folder with a trailing ``/`` (everything below it), or a glob
    (``*``, ``?``, ``[…]`` within a component, ``**`` across folders). A
    glob without a ``/`` matches the file name at any depth, as in
    .gitignore; a leading ``/`` anchors a pattern to the root.
    """
    path = _norm(path).rstrip("/")
    parts = path.split("/")
    for raw in patterns:
        pattern = _norm(raw.strip())
        if not pattern:
            continue
        anchored = pattern.startswith("/")
        pattern = pattern.lstrip("/")
        folder = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        if not pattern:
            return True  # "/" or "./": the whole tree
        if not any(c in pattern for c in "*?["):
            if path == pattern and not folder:
                return True
            if path.startswith(pattern + "/"):
                return True
            continue
        rx = _glob_regex(pattern)
        if "/" in pattern or anchored:
            candidates = ["/".join(parts[: k + 1]) for k in range(len(parts))]
        else:
            candidates = parts
        last = len(candidates) - 1
        for k, candidate in enumerate(candidates):
            # A folder pattern must match a folder, i.e. not the path itself.
            if folder and k == last:
                continue
            if rx.match(candidate):
                return True
    return False


def read_pattern_file(path: Path) -> list[str]:
    """Patterns from a gitignore-like file: one a line, blank lines and ``#`` comments skipped.

    A missing file has no patterns. ``!`` negation is not supported.
    """
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return []
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            patterns.append(line)
    return patterns
