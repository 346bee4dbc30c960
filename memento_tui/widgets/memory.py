"""Memory: the memory/ tree with each entry's summary; enter opens an entry and its history."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, Tree

from memento_core.workspace import Workspace

from ..literal import literal

if TYPE_CHECKING:
    from memento_core.memory.entries import MemoryEntry


@dataclass(frozen=True)
class MemoryItem:
    path: str
    summary: str
    priority: str
    status: str
    updated_at: str


def _item(entry: MemoryEntry) -> MemoryItem:
    return MemoryItem(path=entry.path, summary=entry.summary, priority=entry.priority,
                      status=entry.status, updated_at=entry.updated_at)


class MemoryPane(Vertical):
    """Loads the entries in a worker whenever it is asked to refresh."""

    class Loaded(Message):
        def __init__(self, items: list[MemoryItem], error: str) -> None:
            super().__init__()
            self.items = items
            self.error = error

    class OpenEntry(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, ws: Workspace, **kwargs):
        super().__init__(**kwargs)
        self.ws = ws

    def compose(self) -> ComposeResult:
        yield Static(Text("enter: open an entry and its history", style="dim"), id="memory-hint")
        tree: Tree[str] = Tree("memory/", id="memory-tree")
        tree.show_root = False
        yield tree

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False, description="read memory/")
    def _load(self) -> None:
        # Imported when the tab first opens, in this worker: it brings in python-frontmatter (YAML).
        from memento_core.memory.tree import list_entries

        try:
            items = [_item(e) for e in list_entries(self.ws)]
        except Exception as exc:
            self.post_message(self.Loaded([], f"memory: {type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Loaded(items, ""))

    def on_memory_pane_loaded(self, message: Loaded) -> None:
        hint = self.query_one("#memory-hint", Static)
        tree = self.query_one(Tree)
        if message.error:
            hint.update(literal(message.error, "dim"))
        tree.clear()
        folders: dict[str, Any] = {}
        for item in sorted(message.items, key=lambda i: i.path):
            parts = PurePosixPath(item.path).parts
            node = tree.root
            for i, part in enumerate(parts[:-1]):
                key = "/".join(parts[: i + 1])
                if key not in folders:
                    folders[key] = node.add(literal(part + "/", "bold", one_line=True), expand=True)
                node = folders[key]
            label = literal(parts[-1] if parts else item.path, one_line=True)
            if item.priority == "core":
                label.append(" ★", style="yellow")
            if item.status and item.status not in ("active", "ok"):
                label.append_text(literal(f" ({item.status})", "dim", one_line=True))
            if item.summary:
                label.append(" — ", style="dim")
                label.append_text(literal(item.summary, "dim", one_line=True))
            node.add_leaf(label, data=item.path)

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data:
            event.stop()
            self.post_message(self.OpenEntry(event.node.data))
