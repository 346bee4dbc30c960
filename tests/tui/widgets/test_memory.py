"""The State and Memory tabs read their files: the doctor's findings, the memory tree, one entry's history."""

from __future__ import annotations

from memento_core.locks import atomic_write_text
from memento_tui.app import MementoApp
from memento_tui.screens.memory_entry import MemoryEntryScreen
from tests.tui.conftest import HOSTILE
from tests.tui.pilot import screen_text, settle, wait_for


async def test_state_and_memory_tabs(scripted):
    state = scripted / "docs" / "CURRENT_STATE.md"
    atomic_write_text(state, f"# Current State\n\n## Objective\nkeep {HOSTILE[1]} literal\n")
    entry = scripted / "memory" / "knowledge" / "lessons" / "division.md"
    atomic_write_text(entry, "---\nsummary: integer division surprises\npriority: core\n---\nUse //.\n")
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#tabs").active = "tab-continuity"
        await settle(app, pilot)
        text = screen_text(app)
        assert f"keep {HOSTILE[1]} literal" in text
        assert "Doctor" in text
        assert "[CRITICAL]" in text or "[WARNING]" in text or "[OK]" in text or "[INFO]" in text
        app.screen.query_one("#tabs").active = "tab-memory"
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: "division.md" in screen_text(app))
        tree = app.screen.query_one("#memory-tree")
        leaf = next(node for node in _walk(tree.root) if node.data and node.data.endswith("division.md"))
        tree.select_node(leaf)
        await pilot.pause()
        await settle(app, pilot)
        assert isinstance(app.screen, MemoryEntryScreen)
        assert "History" in screen_text(app)


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)
