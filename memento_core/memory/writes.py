"""`memento memory write`: one checked, atomic, serialised write and its commit (SPEC §9)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime

from ..errors import MementoError
from ..git.objects import object_format
from ..git.repo import head as git_head
from ..locks import atomic_write_text
from ..receipts import blob_id, vouch
from ..workspace import Workspace
from . import crud
from .entries import PRIORITIES, parse_text, render_front_matter, set_fields, utc_iso
from .layout import GENERATED
from .store import commit, commit_leftovers, is_person_source, jail, locked, write_index

MODES = (None, "update", "conflict")


@dataclass(frozen=True)
class WriteResult:
    path: str
    action: str  # create | append | update | conflict | noop | journal
    commit: str | None
    detail: str = ""


def default_source() -> str:
    """The running task (the tick sets MEMENTO_TASK_ID for the agent), else a person."""
    return os.environ.get("MEMENTO_TASK_ID", "").strip() or "source=human"


def write_entry(ws: Workspace, path: str, content: str, summary: str, *, source: str | None = None,
                mode: str | None = None, tags: tuple[str, ...] = (), priority: str | None = None,
                now: datetime | None = None) -> WriteResult:
    """Write ``content`` to memory/``path`` through the CRUD check; one commit, or none for a NOOP.

    A path under journal/ is appended to (the journal is append-only); any
    other path is compared with what is there (crud.decide). Raises
    MementoError for a refused path, a missing summary or empty content.
    """
    summary = " ".join((summary or "").split())
    if not summary:
        raise MementoError("a memory write needs a summary (--summary TEXT): it becomes the commit message")
    if mode not in MODES:
        raise MementoError(f"unknown write mode {mode!r}")
    if priority is not None and priority not in PRIORITIES:
        raise MementoError(f"priority must be one of {', '.join(PRIORITIES)}, not {priority!r}")
    rel, target = jail(ws, path)
    content = (content or "").replace("\r\n", "\n")
    if not content.strip():
        raise MementoError("nothing to write: the content (standard input) is empty")
    source = (source or "").strip() or default_source()
    now = now or datetime.now(UTC)
    with locked(ws) as root:
        commit_leftovers(ws, root)
        if target.is_dir():
            raise MementoError(f"{rel} is a folder, not an entry")
        try:
            old_text = target.read_text(encoding="utf-8") if target.exists() else None
        except UnicodeDecodeError:
            raise MementoError(f"{rel} is not UTF-8 text; it is not overwritten") from None
        if rel.startswith("journal/"):
            new_text, action, detail = _journal_text(old_text, content, summary, source, now, rel), "journal", ""
        else:
            new_text, action, detail = _knowledge_text(old_text, content, summary, source, mode, tags,
                                                       priority, now)
            if action == "noop":
                return WriteResult(rel, "noop", None, detail)
        before = git_head(root)
        if is_person_source(source):  # a running tick's receipt first (SPEC §13); refused inside its tree
            vouch(ws.root, {"op": "memory", "blobs": [blob_id(new_text.encode("utf-8"), object_format(root))]})
        atomic_write_text(target, new_text)
        try:
            write_index(root)
            sha = commit(root, [rel, GENERATED], summary, source=source, kind="write",
                         body=f"{action} {rel}" + (f": {detail}" if detail else ""))
        except BaseException:
            if git_head(root) != before:
                raise  # the commit landed (only the index refresh failed): keep the file as committed
            # An uncommitted write would later be committed as someone else's: undo it.
            if old_text is None:
                target.unlink(missing_ok=True)
            else:
                atomic_write_text(target, old_text)
            raise
        return WriteResult(rel, action, sha, detail)


def _knowledge_text(old_text, content, summary, source, mode, tags, priority, now) -> tuple[str, str, str]:
    today = now.strftime("%Y-%m-%d")
    incoming = parse_text(content)
    # Front matter on stdin is welcome: its tags and priority count, its body is the content.
    body_in = incoming.body if incoming.valid else content
    in_tags = incoming.meta.get("tags") if incoming.valid else None
    tags = tuple(tags) + tuple(t for t in (in_tags if isinstance(in_tags, list) else []) if isinstance(t, str))
    if priority is None and incoming.valid and str(incoming.meta.get("priority", "")) in PRIORITIES:
        priority = str(incoming.meta["priority"])
    old = parse_text(old_text) if old_text is not None else None
    decision = crud.decide(old.body if old else None, body_in, mode, date=today, source=source)
    if decision.action == "noop":
        return "", "noop", decision.detail
    if old is None:
        meta = {"summary": summary, "updated_at": utc_iso(now), "sources": [source], "tags": list(dict.fromkeys(tags)),
                "priority": priority or "normal", "status": "active", "last_verified": today}
        return render_front_matter(meta) + "\n" + decision.body, decision.action, decision.detail
    sources = list(old.meta.get("sources") or []) if isinstance(old.meta.get("sources"), list) else (
        [str(old.meta["sources"])] if old.meta.get("sources") else [])
    if source not in sources:
        sources.append(source)
    updates: dict[str, object] = {"updated_at": utc_iso(now), "sources": sources, "status": "active",
                                  "last_verified": today}
    if not old.valid or not old.meta.get("summary") or decision.action == "update":
        updates = {"summary": summary, **updates}
    if tags:
        old_tags = old.meta.get("tags") if isinstance(old.meta.get("tags"), list) else []
        updates["tags"] = list(dict.fromkeys([*map(str, old_tags), *tags]))
    if priority:
        updates["priority"] = priority
    if old.valid:
        head = "\n".join(old_text.replace("\r\n", "\n").lstrip("\ufeff").split("\n")[: old.block_end])
        text = set_fields(head, updates) + "\n" + decision.body
    else:
        # The old text (a broken block included) becomes the body: nothing a person wrote is lost.
        updates.setdefault("summary", summary)
        meta = {"summary": updates.pop("summary"), **updates}
        meta.setdefault("priority", priority or "normal")
        text = render_front_matter(meta) + "\n" + decision.body
        if old.has_block:
            broken = "\n".join(old_text.replace("\r\n", "\n").split("\n")[: old.block_end])
            text = text.rstrip("\n") + "\n\n<!-- front matter that did not parse, kept as written: -->\n" \
                + "```yaml\n" + broken + "\n```\n"
    return text, decision.action, decision.detail


def _journal_text(old_text, content, summary, source, now, rel) -> str:
    """The journal is append-only: a timestamped section at the end."""
    from .journal import journal_header

    base = old_text if old_text is not None else journal_header(rel.rsplit("/", 1)[-1].removesuffix(".md"))
    section = f"## {now.strftime('%H:%M:%SZ')} — {summary} ({source})\n\n{content.strip()}\n"
    return base.rstrip("\n") + "\n\n" + section
