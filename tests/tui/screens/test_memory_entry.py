"""screens/memory_entry.py: one memory entry, its text as written and its history in memory/'s own git
repository, newest first; a missing or refused path is said, never shown as some other file (Pilot)."""

from __future__ import annotations

import subprocess

from memento_core.memory.writes import write_entry
from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from memento_tui.screens.memory_entry import MemoryEntryScreen
from tests.tui.pilot import screen_text, settle, wait_for

ENTRY = "knowledge/lessons/division.md"


async def open_entry(app, pilot, path: str) -> str:
    app.push_screen(MemoryEntryScreen(app.ws, path))
    assert await wait_for(pilot, lambda: isinstance(app.screen, MemoryEntryScreen))
    await settle(app, pilot)
    return screen_text(app)


async def test_an_entry_shows_its_text_and_its_commits_newest_first(scripted):
    ws = Workspace(scripted)
    write_entry(ws, ENTRY, "Use // for ints.\n", "[b]integer division[/b] surprises")
    write_entry(ws, ENTRY, "Use // for ints; floor for negatives.\n", "floor division for negatives")
    shas = subprocess.run(["git", "log", "--format=%h", "--abbrev=7", "--", ENTRY], cwd=scripted / "memory",
                          capture_output=True, text=True, check=True).stdout.split()
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = await open_entry(app, pilot, ENTRY)
        assert f"Memory {ENTRY}" in text and "Use // for ints; floor for negatives." in text
        lines = text.splitlines()
        lines = lines[next(i for i, line in enumerate(lines) if line.strip() == "History"):]
        newer = next(i for i, line in enumerate(lines) if "floor division for negatives" in line)
        older = next(i for i, line in enumerate(lines) if "[b]integer division[/b] surprises" in line)  # literal
        assert newer < older
        assert lines[newer].strip().startswith(shas[0]) and lines[older].strip().startswith(shas[1])
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, MemoryEntryScreen))


async def test_a_missing_entry_and_a_path_out_of_memory_are_said(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = await open_entry(app, pilot, "knowledge/none.md")
        assert "MementoError: memory/knowledge/none.md does not exist" in text
        await pilot.press("escape")
        text = await open_entry(app, pilot, "../docs/MASTER_PLAN.md")
        assert "MementoError" in text and "T-101" not in text  # the plan is not a memory entry
