"""CRUD validation of a knowledge write (SPEC §9, after the OpenClaw article).

Before anything is written the entry is read and compared with the new
content, block by block: already covered → NOOP; ``--update`` → the old
paragraph stays, marked ``~~Superseded~~``, the new one goes next to it;
``--conflict`` → both stay, marked ``⚠️ CONFLICT``; otherwise the new blocks
are appended (under their section when the entry already has it).

Blocks are found by a line scan (mistune tokens carry no line numbers, so
they cannot locate an edit); mistune parses each block to its plain text,
which is what gets compared, so markup and wrapping do not hide a duplicate.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ..markdown.blocks import Fence, open_fence
from ..markdown.prose import markup_tokens

NEAR_DUPLICATE = 0.9  # plain-text similarity at which a block counts as already there
RELATED = 0.3  # similarity at which an old block is the one an update or conflict is about
SUPERSEDED = "~~Superseded~~"
CONFLICT = "⚠️ CONFLICT"

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Block:
    """Lines [start, end) of a body: a heading, or a paragraph-like run of lines."""

    start: int
    end: int
    section: str  # text of the heading above it ('' before the first heading)
    heading: bool
    text: str

    @property
    def marked(self) -> str:
        first = self.text.lstrip()
        if first.startswith(SUPERSEDED):
            return "superseded"
        if first.startswith(CONFLICT):
            return "conflict"
        return ""


@dataclass(frozen=True)
class Decision:
    action: str  # create | noop | append | update | conflict
    body: str
    detail: str = ""


def split_blocks(body: str) -> list[Block]:
    """Headings and blank-line separated blocks, fenced code kept whole."""
    lines = body.split("\n")
    blocks: list[Block] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        m = _HEADING_RE.match(line)
        if m:
            section = m.group(2).strip()
            blocks.append(Block(i, i + 1, section, True, line))
            i += 1
            continue
        start = i
        fence: Fence | None = None
        while i < len(lines):
            cur = lines[i]
            if fence is not None:
                if fence.closed_by(cur):
                    fence = None
            else:
                fence = open_fence(cur)
                if fence is None and i > start and (not cur.strip() or _HEADING_RE.match(cur)):
                    break
            i += 1
        blocks.append(Block(start, i, section, False, "\n".join(lines[start:i])))
    return blocks


def _text_of(tokens: list) -> list[str]:
    out: list[str] = []
    for tok in tokens:
        if not isinstance(tok, dict):
            continue
        raw = tok.get("raw")
        if isinstance(raw, str):
            out.append(raw)
        children = tok.get("children")
        if isinstance(children, list):
            out.extend(_text_of(children))
    return out


def plain(markdown: str) -> str:
    """The words of a block: markup, markers and wrapping removed, case folded."""
    text = markdown.replace(SUPERSEDED, " ").replace(CONFLICT, " ")
    try:
        words = " ".join(_text_of(markup_tokens(text)))
    except Exception:  # noqa: BLE001 - a parser hiccup must not block a write
        words = text
    words = re.sub(r"[^\w\s]", " ", words.casefold())
    return " ".join(words.split())


def similarity(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < RELATED or matcher.quick_ratio() < RELATED:
        return matcher.quick_ratio() * 0.5
    return matcher.ratio()


_FILLER = frozenset("a an the this that these those is are was were be been it its of to in on at for "
                    "and or with by as so also just".split())
# Words that turn a sentence around: a text differing in one of them is news, not a duplicate.
_POLARITY = frozenset("not no never none always must should don t cannot can avoid only without "
                      "instead before after".split())


def _words(text: str) -> set[str]:
    return {w.rstrip("s") if len(w) > 3 else w for w in text.split() if w not in _FILLER}


def near_duplicate(new: str, old: str) -> bool:
    """Is plain text ``new`` already said by ``old``?

    The same content words (order, filler, plurals, markup and wrapping aside),
    or a near-identical text whose few differing words carry no number and no
    polarity ("never" for "always"): a text that only changes a number or a
    "not" is a new fact, an update or a conflict, never a NOOP.
    """
    a, b = _words(new), _words(old)
    if a and a == b:
        return True
    diff = a ^ b
    if len(diff) > 2 or any(any(ch.isdigit() for ch in w) or w in _POLARITY for w in diff):
        return False
    return similarity(new, old) >= NEAR_DUPLICATE


def _stamp_line(marker: str, note: str) -> str:
    return f"{marker} {note}".rstrip()


def decide(old_body: str | None, new: str, mode: str | None = None, *,
           date: str = "", source: str = "") -> Decision:
    """The write to make of ``new`` against ``old_body`` (None: the entry does not exist)."""
    new = new.replace("\r\n", "\n").strip("\n")
    if old_body is None or not old_body.strip():
        return Decision("create", new + "\n", "new entry")
    old_body = old_body.replace("\r\n", "\n")
    old_blocks = split_blocks(old_body)
    active_plain = [(b, plain(b.text)) for b in old_blocks if not b.heading and b.marked != "superseded"]
    whole = " ".join(p for _, p in active_plain)
    new_blocks = split_blocks(new)
    incoming = [b for b in new_blocks if not b.heading]
    fresh = [b for b in incoming if not _covered(plain(b.text), whole, active_plain, mode)]
    if not fresh:
        return Decision("noop", old_body, "already covered by the entry")
    lines = old_body.rstrip("\n").split("\n")
    if mode in ("update", "conflict"):
        by = f"({date}{', ' + source if source else ''})" if date or source else ""
        targets = _targets(fresh, old_blocks, active_plain, mode)
        marker = _mark_and_insert(lines, targets, fresh, mode, by)
        return Decision(mode, _body(lines), f"{len(targets)} paragraph(s) marked {marker}")
    _append(lines, old_blocks, fresh, new_blocks)
    return Decision("append", _body(lines), f"{len(fresh)} new block(s), {len(incoming) - len(fresh)} already covered")


def _covered(p: str, whole: str, active_plain: list[tuple[Block, str]], mode: str | None) -> bool:
    """Whether the plain text ``p`` of a new block is already in the entry."""
    if not p or f" {p} " in f" {whole} ":
        return True
    if mode in ("update", "conflict"):
        return False  # the caller says it is news: only the very same text is a NOOP
    return any(near_duplicate(p, q) for _, q in active_plain)


def _targets(fresh: list[Block], old_blocks: list[Block], active_plain: list[tuple[Block, str]],
             mode: str) -> list[Block]:
    """The old paragraphs an update replaces or a conflict contradicts."""
    targets: list[Block] = []
    for b in fresh:
        p = plain(b.text)
        scored = [(similarity(p, q), ob) for ob, q in active_plain if ob.marked != "conflict" or mode == "update"]
        best = max(scored, key=lambda s: s[0], default=(0.0, None))
        if best[1] is not None and best[0] >= RELATED and best[1] not in targets:
            targets.append(best[1])
    if not targets:
        # Nothing resembles the new text: it is about the entry as a whole (its section if named).
        named = {b.section for b in fresh} & {b.section for b in old_blocks if b.heading}
        targets = [ob for ob, _ in active_plain if not named or ob.section in named]
    return targets


def _mark_and_insert(lines: list[str], targets: list[Block], fresh: list[Block], mode: str, by: str) -> str:
    """Mark ``targets`` superseded or in conflict and put the new text after the last of them;
    returns the marker used."""
    marker = SUPERSEDED if mode == "update" else CONFLICT
    note = (f"{by} — replaced by the text below it" if mode == "update"
            else f"{by} — contradicted by a later paragraph; both kept until a person decides")
    already = "superseded" if mode == "update" else "conflict"
    shift = 0
    for ob in sorted(targets, key=lambda b: b.start, reverse=True):
        if ob.marked != already:
            lines.insert(ob.start, _stamp_line(marker, note.strip()))
            shift += 1
    new_text = "\n\n".join(b.text for b in fresh)
    if mode == "conflict":
        new_text = _stamp_line(CONFLICT, f"{by} — contradicts the paragraph(s) marked above:".strip()) \
            + "\n" + new_text
    # The new version goes right after the last paragraph it replaces or contradicts.
    after = max(ob.end for ob in targets) + shift if targets else len(lines)
    lines[after:after] = ["", *new_text.split("\n")]
    return marker


def _append(lines: list[str], old_blocks: list[Block], fresh: list[Block], new_blocks: list[Block]) -> None:
    """Add ``fresh`` under the same section when the entry has it, else at the end (with its heading)."""
    sections = {b.section for b in old_blocks if b.heading}
    tail: list[str] = []
    inserts: dict[int, list[str]] = {}
    new_headings: set[str] = set()
    for b in fresh:
        if b.section and b.section in sections:
            last = max(ob.end for ob in old_blocks if ob.section == b.section)
            inserts.setdefault(last, []).append(b.text)
        else:
            if b.section and b.section not in new_headings:
                heading = next(h.text for h in new_blocks if h.heading and h.section == b.section)
                tail += ["", heading]
                new_headings.add(b.section)
            tail += ["", b.text]
    for at in sorted(inserts, reverse=True):
        chunk: list[str] = []
        for text in inserts[at]:
            chunk += ["", *text.split("\n")]
        lines[at:at] = chunk
    lines += tail


def _body(lines: list[str]) -> str:
    body = "\n".join(lines).rstrip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", body)
