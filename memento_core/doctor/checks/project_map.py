"""The PROJECT_MAP.md check: every path the map names exists, or an open task will create it."""

from __future__ import annotations

import re

from ...git.patterns import matches_any
from ...lines import read_text_file
from ...markdown.prose import block_lines, tokens, tree_paths, walk
from ...plan.model import FINISHED
from ..context import Context
from ..findings import INFO, WARNING, CheckResult, Finding

MAX_PATH_FINDINGS = 10
_FILE_EXT = ("py", "md", "toml", "json", "yaml", "yml", "txt", "cfg", "ini", "js", "mjs", "ts", "tsx", "jsx",
             "go", "rs", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "sh", "sql", "html", "css",
             "tcss", "lock", "conf", "xml", "csv", "rst", "tf", "proto", "swift", "lua", "pl", "r", "ipynb")
_PATHISH_RE = re.compile(r"^(?:\./)?[\w.@+-]+(?:/[\w.@+-]+)*/?$")
_MAP_PATH_KEYS = ("entry", "entries", "path", "paths", "file", "files", "location")


def _pathish(text: str) -> str | None:
    text = text.strip().strip("`'\"").rstrip(".,;:)").lstrip("(")
    if not text or "://" in text or any(ch in text for ch in "*?[]{}<>$~") or text.startswith(("-", "/")):
        return None
    if not _PATHISH_RE.match(text) or ".." in text.split("/"):
        return None
    if "/" in text.rstrip("/"):
        return text
    if text.endswith("/"):
        return text
    ext = text.rsplit(".", 1)[-1].lower() if "." in text.strip(".") else ""
    return text if ext in _FILE_EXT else None


def map_paths(text: str) -> list[str]:
    """Paths PROJECT_MAP.md names: code spans, `Entry:`-style list items, and drawn file trees."""
    found: list[str] = []
    blocks = tokens(text)
    for token in walk(blocks):
        kind = token.get("type")
        if kind == "codespan":
            found.append(token.get("raw", ""))
        elif kind in ("paragraph", "block_code"):
            lines = block_lines(token) if kind == "block_code" else _raw_lines(token)
            if any(g in ln for ln in lines for g in ("├", "└", "│")) or (
                    kind == "block_code" and any(ln.rstrip().endswith("/") for ln in lines)):
                found += tree_paths(lines)
        elif kind == "list_item":
            for line in block_lines({"type": "list", "children": [token]}):
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() in _MAP_PATH_KEYS:
                    found += [v for v in re.split(r"[,\s]+", value.replace("`", " ")) if v]
    out, seen = [], set()
    for raw in found:
        path = _pathish(raw)
        if path and path not in seen:
            seen.add(path)
            out.append(path)
    return out


def _raw_lines(paragraph: dict) -> list[str]:
    """A paragraph's lines as typed (soft breaks split them)."""
    lines, current = [], []
    for child in paragraph.get("children", ()):
        if child.get("type") in ("softbreak", "linebreak"):
            lines.append("".join(current))
            current = []
        elif child.get("type") == "codespan":
            current.append(child.get("raw", ""))
        else:
            current.append(child.get("raw", ""))
    lines.append("".join(current))
    return lines


def check_project_map(c: Context) -> CheckResult:
    path = c.ws.map_path
    rel = c.rel(path)
    try:
        text = read_text_file(path, "replace")
    except FileNotFoundError:
        return [Finding(INFO, "project-map-paths", f"{rel} does not exist: the worker has no map of the code", rel)]
    except OSError as exc:
        return [Finding(WARNING, "project-map-paths", f"{rel} cannot be read: {exc.strerror or exc}", rel)]
    plan = c.plan
    open_contexts = [t.context_files for t in plan.tasks if t.status not in FINISHED] if plan is not None else []
    missing = []
    paths = map_paths(text)
    for p in paths:
        if (c.ws.root / p).exists():
            continue
        if any(matches_any(p.rstrip("/"), ctx) or matches_any(p, ctx)
               or (p.endswith("/") and any(entry.startswith(p) for entry in ctx)) for ctx in open_contexts):
            continue  # an open task will create it
        missing.append(p)
    found = [Finding(WARNING, "project-map-paths",
                     f"`{p}` does not exist and no open task will create it", rel, c.line_of(path, p))
             for p in missing[:MAX_PATH_FINDINGS]]
    if len(missing) > MAX_PATH_FINDINGS:
        found.append(Finding(WARNING, "project-map-paths",
                             f"… and {len(missing) - MAX_PATH_FINDINGS} more paths that do not exist", rel))
    return found or f"{rel}: the {len(paths)} path(s) it names exist or an open task will create them"
