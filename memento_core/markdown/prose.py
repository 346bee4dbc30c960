"""Reading the prose documents (CURRENT_STATE.md, PROJECT_MAP.md, memory entries) with mistune (SPEC §3).

Only reading: mistune tokens carry no line numbers and normalise line endings,
so nothing here locates an edit. In ``tokens`` emphasis parsing is switched
off, so a token's text is what the person typed (``__init__.py`` stays
``__init__.py``) and a section rendered back to markdown is the text that was
written; ``markup_tokens`` parses every markup, for comparing words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import mistune
from mistune.renderers.markdown import MarkdownRenderer


@lru_cache(maxsize=1)
def _markdown() -> mistune.Markdown:
    md = mistune.create_markdown(renderer=None)
    md.inline.rules = [r for r in md.inline.rules if r != "emphasis"]
    return md


def tokens(text: str) -> list[dict]:
    """The block tokens of ``text`` (mistune's AST, emphasis left as typed)."""
    return _markdown()(text.replace("\r\n", "\n"))


@lru_cache(maxsize=1)
def _markdown_with_markup() -> mistune.Markdown:
    return mistune.create_markdown(renderer=None, plugins=["strikethrough", "table"])


def markup_tokens(text: str) -> list[dict]:
    """The tokens of ``text`` with emphasis, strikethrough and tables parsed, so that the
    words of a memory block can be compared without their markup (memory's CRUD check)."""
    return _markdown_with_markup()(text)


def inline_text(children: list[dict] | None) -> str:
    """The inline children as one line of markdown-ish text (code spans keep their backticks)."""
    out: list[str] = []
    for child in children or ():
        kind = child.get("type")
        if kind == "codespan":
            out.append(f"`{child.get('raw', '')}`")
        elif kind in ("softbreak", "linebreak"):
            out.append(" ")
        elif "children" in child:
            inner = inline_text(child["children"])
            if kind == "link":
                url = (child.get("attrs") or {}).get("url", "")
                out.append(f"[{inner}]({url})" if url and url != inner else inner)
            else:
                out.append(inner)
        else:
            out.append(child.get("raw", ""))
    return " ".join("".join(out).split())


def block_lines(token: dict) -> list[str]:
    """What one block says, one entry per list item or paragraph (blank lines dropped)."""
    kind = token.get("type")
    if kind == "list":
        items = []
        for item in token.get("children", ()):
            parts = [inline_text(b.get("children")) if "children" in b else b.get("raw", "")
                     for b in item.get("children", ())]
            items.append(" ".join(p for p in parts if p).strip())
        return items
    if kind in ("paragraph", "heading", "block_text"):
        return [inline_text(token.get("children"))]
    if kind == "block_quote":
        return [line for child in token.get("children", ()) for line in block_lines(child)]
    if kind == "block_code":
        return [ln for ln in token.get("raw", "").splitlines() if ln.strip()]
    if kind == "block_html":
        return []  # comments are notes to the editor, not content
    return []


@dataclass
class Section:
    """A level-2 section: its title, its block tokens and what they say."""

    title: str
    blocks: list[dict] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return [ln for b in self.blocks for ln in block_lines(b) if ln.strip()]

    @property
    def markdown(self) -> str:
        return render_markdown(self.blocks).strip()


@dataclass
class Document:
    """A prose document: title (level 1), the lines before the first section, the sections."""

    title: str = ""
    preamble: list[str] = field(default_factory=list)
    sections: dict[str, Section] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # section titles as they appear, repeats included


def parse_document(text: str) -> Document:
    """Split ``text`` into level-2 sections with mistune."""
    doc = Document()
    current: Section | None = None
    for token in tokens(text):
        if token.get("type") == "heading":
            level = (token.get("attrs") or {}).get("level", 0)
            title = inline_text(token.get("children"))
            if level == 1 and not doc.title:
                doc.title = title
                continue
            if level == 2:
                current = Section(title)
                doc.order.append(title)
                doc.sections.setdefault(title, current)
                continue
        if current is None:
            doc.preamble += block_lines(token)
        else:
            current.blocks.append(token)
    return doc


def render_markdown(blocks: list[dict]) -> str:
    """Blocks back to markdown text."""
    return MarkdownRenderer()(blocks, mistune.BlockState())


def walk(blocks: list[dict]):
    """Every token, depth first."""
    for token in blocks:
        yield token
        children = token.get("children")
        if isinstance(children, list):
            yield from walk(children)


_TREE_GLYPHS = re.compile(r"^(?P<prefix>(?:[│|]\s{1,3}|\s{2,4})*)(?:[├└]──|[|`]--)\s*(?P<name>.+)$")


def tree_paths(lines: list[str]) -> list[str]:
    """Paths named by a drawn file tree (``calc/``, ``├── ops.py``…), joined to their folders."""
    paths: list[str] = []
    stack: list[str] = []  # folder names by depth
    for raw in lines:
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _TREE_GLYPHS.match(line)
        if m:
            depth = 1 + len(m.group("prefix").replace("│", " ").replace("|", " ")) // 4
            name = m.group("name")
        elif not line[0].isspace():
            depth, name = 0, line.strip()
        else:
            continue
        name = name.split("#", 1)[0].split("  ", 1)[0].strip()
        if not name or " " in name:
            continue
        del stack[depth:]
        parent = "".join(stack)
        paths.append(parent + name)
        if name.endswith("/"):
            stack.append(name)
    return paths
