"""The memory tree: what the worker sees of memory/ in its prompt, and MEMORY.md (SPEC §9).

Paths with their summaries, at most ``max_paths`` lines: over the limit the
folder holding the most lines is folded into one ``folder/ (N entries)``
line, again and again, until the tree fits. Summaries are read only for the
lines shown, so a memory of thousands of entries costs a directory walk.
The rendered text also stays within a character budget: summaries are cut
shorter, then dropped, then more folders folded.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path, PurePosixPath

from ..lines import read_text_file
from ..workspace import Workspace
from .entries import MemoryEntry, load_entry
from .layout import ARCHIVE, GENERATED, PERSONA, SESSION_ARCHIVE

MAX_PATHS = 1000
PROMPT_BUDGET = 100_000  # characters of tree in a worker prompt (~25k tokens)
PERSONA_BUDGET = 8_000
_SUMMARY_STEPS = (160, 80, 40, 0)


def entry_paths(root: Path, *, archive: bool = False, sessions: bool = True) -> list[str]:
    """Every markdown entry below memory/ (relative, sorted); MEMORY.md and PERSONA.md excluded."""
    if not root.is_dir():
        return []
    out: list[str] = []
    skip_top = {".git"} | (set() if archive else {ARCHIVE}) | (set() if sessions else {SESSION_ARCHIVE})
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in skip_top]
            rel_dir = ""
        dirnames[:] = [d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            if not name.endswith(".md") or name.startswith("."):
                continue
            rel = f"{rel_dir}/{name}".lstrip("/") if rel_dir else name
            rel = rel.replace(os.sep, "/")
            if rel in (GENERATED, PERSONA):
                continue
            out.append(rel)
    return sorted(out, key=_order)


def _order(rel: str) -> tuple:
    """Knowledge first, then other folders, the journal last (newest day first)."""
    top = rel.split("/", 1)[0]
    rank = 0 if top == "knowledge" else 2 if top == "journal" else 1
    if rank == 2:
        return (rank, "".join(chr(0x10FFFF - ord(c)) for c in rel))
    return (rank, rel)


def fold(paths: list[str], max_paths: int) -> list[tuple[str, int]]:
    """Lines of the tree: (path, 0) for an entry, (folder/, n) for a folded folder of n entries."""
    max_paths = max(max_paths, 1)
    folded: set[str] = set()

    def line_of(rel: str) -> str:
        parts = PurePosixPath(rel).parts
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in folded:
                return prefix + "/"
        return rel

    while True:
        lines = Counter(line_of(p) for p in paths)
        if len(lines) <= max_paths:
            break
        # Fold the folder with the most lines directly in it (deeper on ties), so one
        # crowded folder goes before its parent hides everything else.
        direct: Counter[str] = Counter()
        below: Counter[str] = Counter()
        for line in lines:
            parts = PurePosixPath(line.rstrip("/")).parts
            if len(parts) > 1:
                direct["/".join(parts[:-1])] += 1
            for i in range(1, len(parts)):
                below["/".join(parts[:i])] += 1
        candidates = [(n, d.count("/"), d) for d, n in direct.items() if n > 1]
        if not candidates:
            candidates = [(d.count("/"), n, d) for d, n in below.items() if n > 1]
        if not candidates:
            # Only top-level files and folded folders remain: cut the list itself.
            break
        _, _, folder = max(candidates)
        folded.add(folder)
    result: list[tuple[str, int]] = []
    seen: dict[str, int] = {}
    for p in paths:
        line = line_of(p)
        if line.endswith("/"):
            if line not in seen:
                seen[line] = len(result)
                result.append((line, 0))
            idx = seen[line]
            result[idx] = (line, result[idx][1] + 1)
        else:
            result.append((line, 0))
    return result[:max_paths]


def _render_lines(root: Path, lines: list[tuple[str, int]], entries: dict[str, MemoryEntry],
                  summary_max: int) -> list[str]:
    out = []
    for path, n in lines:
        if n:
            out.append(f"- {path} ({n} entries, folded: `memento memory tree` or `ls memory/{path}`)")
            continue
        e = entries[path]
        marks = [m for m in (e.priority if e.priority != "normal" else "",
                             e.status if e.status != "active" else "") if m]
        tail = f" [{', '.join(marks)}]" if marks else ""
        summary = e.summary
        if summary_max and summary:
            if len(summary) > summary_max:
                summary = summary[: summary_max - 1] + "…"
            out.append(f"- {path} — {summary}{tail}")
        else:
            out.append(f"- {path}{tail}")
    return out


def render_tree(root: Path, *, max_paths: int = MAX_PATHS, budget: int | None = None,
                sessions: bool = True) -> str:
    """The tree as markdown list lines ('' when memory/ has no entries)."""
    paths = entry_paths(root, sessions=sessions)
    if not paths:
        return ""
    limit = max_paths
    while True:
        lines = fold(paths, limit)
        entries = {p: load_entry(root, p) for p, n in lines if not n}
        omitted = len(paths) - sum(n or 1 for _, n in lines)
        for summary_max in _SUMMARY_STEPS if budget else (_SUMMARY_STEPS[0],):
            out = _render_lines(root, lines, entries, summary_max)
            if omitted > 0:
                out.append(f"- … {omitted} more entries not listed")
            text = "\n".join(out)
            if budget is None or len(text) <= budget:
                return text
        if limit <= 1:
            return text[:budget]
        limit = max(1, limit // 2)


def tree_for_prompt(ws: Workspace, *, max_paths: int = MAX_PATHS, budget: int = PROMPT_BUDGET) -> str:
    """The memory section of the worker prompt: the tree, then PERSONA.md ('' without memory)."""
    root = ws.memory_dir
    if not root.is_dir():
        return ""
    tree = render_tree(root, max_paths=max_paths, budget=budget, sessions=False)
    persona = ""
    try:
        persona = read_text_file((root / PERSONA), "replace").strip()
    except OSError:
        pass
    if len(persona) > PERSONA_BUDGET:
        persona = persona[:PERSONA_BUDGET] + "\n… (PERSONA.md continues in memory/PERSONA.md)"
    out: list[str] = []
    if tree:
        out += ["Read an entry with `memento memory show PATH`; search with `memento memory search TEXT`.",
                "Record a lesson or decision with `memento memory write knowledge/lessons/NAME.md "
                "--summary \"one line\"` (content on standard input); never edit memory/ directly.", "",
                tree]
    if persona:
        out += ["", "### memory/PERSONA.md (written by people; follow it)", "", persona]
    return "\n".join(out).strip()


def list_entries(ws: Workspace) -> list[MemoryEntry]:
    """Every entry with its metadata (the dashboard's memory view); [] without memory/."""
    root = ws.memory_dir
    if not root.is_dir():
        return []
    return [load_entry(root, p) for p in entry_paths(root)]


def render_index(root: Path) -> str:
    """MEMORY.md: every entry with its summary, knowledge by layer; deterministic from the files."""
    lines = ["# MEMORY", "",
             "Generated by Memento on every memory write (`memento memory index`); do not edit.",
             "PERSONA.md is written by people; everything else through `memento memory write`.", ""]
    paths = entry_paths(root, sessions=False)
    groups: dict[str, list[str]] = {}
    for p in paths:
        parts = p.split("/")
        group = "/".join(parts[:2]) if parts[0] == "knowledge" and len(parts) > 2 else parts[0] if len(parts) > 1 else "(top)"
        groups.setdefault(group, []).append(p)
    for group, members in groups.items():
        lines += [f"## {group}", ""]
        for p in members:
            e = load_entry(root, p)
            marks = [m for m in (e.priority if e.priority != "normal" else "",
                                 e.status if e.status != "active" else "") if m]
            tail = f" *({', '.join(marks)})*" if marks else ""
            lines.append(f"- [{p}]({p}) — {e.summary.replace('[', '(').replace(']', ')')}{tail}")
        lines.append("")
    archived = len(entry_paths(root / ARCHIVE)) if (root / ARCHIVE).is_dir() else 0
    sessions = len(entry_paths(root / SESSION_ARCHIVE)) if (root / SESSION_ARCHIVE).is_dir() else 0
    if not groups:
        lines += ["(no entries yet)", ""]
    if archived or sessions:
        lines += [f"Also: {archived} archived journal page(s) in .archive/, "
                  f"{sessions} checkpoint(s) in session_archive/.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
