"""widgets/continuity.py: the State tab shows CURRENT_STATE.md as written (or that it is not written yet),
the results waiting for an acknowledgement, and the doctor's findings with where each one is (Pilot)."""

from __future__ import annotations

from dataclasses import replace

from memento_core.locks import atomic_write_text
from memento_core.state import TickState
from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from memento_tui.snapshot import CHECKPOINT, Finding
from tests.tui.pilot import pane_text, settle


async def state_tab(app, pilot) -> str:
    app.screen.query_one("#tabs").active = "tab-continuity"
    await settle(app, pilot)
    return pane_text(app, "#continuity")


async def test_the_checkpoint_as_written_and_the_results_to_acknowledge(scripted):
    ws = Workspace(scripted)
    ws.checkpoint_path.unlink(missing_ok=True)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = await state_tab(app, pilot)
        assert "docs/CURRENT_STATE.md does not exist yet (the first tick writes it)" in text
        assert "a: acknowledge unsurfaced results" in text

        atomic_write_text(ws.checkpoint_path, "# Current State\n\n> as of tick 4\nT-201 is \x1b[31m[b]blocked[/b]\x07\n")
        TickState(unsurfaced=[{"task": "T-101"}, {"task": "T-102"}]).save(ws)
        app.request_refresh({CHECKPOINT, "state"})
        text = await state_tab(app, pilot)
        assert "# Current State" in text and "> as of tick 4" in text
        assert "T-201 is [b]blocked[/b]" in text and "\x1b" not in text  # literal: markup and escapes are text
        assert "2 unsurfaced result(s) — a: acknowledge" in text


async def test_the_doctors_findings_say_where_and_how_bad(scripted):
    Workspace(scripted).checkpoint_path.unlink(missing_ok=True)  # the findings in view, under one line
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        snap = app.snapshot
        findings = (Finding("WARNING", "plan", "T-9 has no verify [b]command[/b]", "docs/MASTER_PLAN.md", 12),
                    Finding("CRITICAL", "git", "not a git repository", ".git"),
                    Finding("INFO", "cron", "no cron entry"))
        app.snapshot = replace(snap, findings=findings, findings_error="", parts_read=frozenset({CHECKPOINT}))
        text = await state_tab(app, pilot)
        assert "[WARNING] docs/MASTER_PLAN.md:12: T-9 has no verify [b]command[/b]" in text
        assert "[CRITICAL] .git: not a git repository" in text and "[INFO] no cron entry" in text

        app.snapshot = replace(snap, findings=(), findings_error="", parts_read=frozenset({CHECKPOINT}))
        assert "Doctor no findings" in await state_tab(app, pilot)
        app.snapshot = replace(snap, findings=(), findings_error="doctor failed: OSError: disk gone",
                               parts_read=frozenset({CHECKPOINT}))
        text = await state_tab(app, pilot)
        assert "doctor failed: OSError: disk gone" in text and "no findings" not in text
        app.snapshot = replace(snap, findings=None, findings_error="", parts_read=frozenset({CHECKPOINT}))
        assert "doctor: not run yet" in await state_tab(app, pilot)
