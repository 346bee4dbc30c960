"""The dashboard's architect (SPEC §16): `A` runs a dry run, shows its diff, `y` applies it (Pilot, a fake
architect through the real `command` preset, judged on disk and in git)."""

from __future__ import annotations

import subprocess

import pytest

from memento_core.plan.scan import parse_plan
from memento_tui.app import MementoApp
from memento_tui.screens.architect import ArchitectScreen
from tests.core.tick.architect.test_run import agent, make_ws, seen, tree
from tests.tui.pilot import screen_text, settle, wait_for


@pytest.fixture(scope="module", autouse=True)
def _tick_beacon_started():
    """make_ws runs a real tick in this process, which starts the tick's one process-wide beacon
    thread (tick/record.py) for good: start it before the per-test thread-leak check looks."""
    from memento_core.tick import record

    if record._BEACON["thread"] is None:  # noqa: SLF001
        record._beacon(None)  # noqa: SLF001


def log(root) -> list[str]:
    return subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.splitlines()


async def test_A_shows_the_dry_runs_diff_and_y_applies_it(tmp_path, git_env, monkeypatch):
    ran = tmp_path / "ran.txt"
    monkeypatch.setenv("FAKE_ARCHITECT_SEEN", str(ran))
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"))
    before, commits = tree(ws.root), log(ws.root)
    app = MementoApp(ws.root, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ArchitectScreen))
        assert await wait_for(pilot, lambda: app.screen.proposal is not None, tries=600)
        await pilot.pause()
        text = screen_text(app)
        assert "Proposed: edited T-1; reset T-1" in text
        assert "+  - verify: `grep -q done hello.txt`" in text
        # The dry run changed nothing on disk or in git.
        assert tree(ws.root) == before and log(ws.root) == commits
        await pilot.press("y")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, ArchitectScreen), tries=600)
        await settle(app, pilot)
    assert seen(ran) == ["fix"]  # applied as shown: the agent ran once
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert log(ws.root)[0] == "memento: architect — edited T-1; reset T-1"


async def test_escape_cancels_and_a_rolled_back_run_offers_nothing(tmp_path, git_env):
    ws = make_ws(tmp_path, agent("architect.py", "mark_done", "T-1"))
    before, commits = tree(ws.root), log(ws.root)
    app = MementoApp(ws.root, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.run_action("command_palette")  # the palette entry runs the same action
        await pilot.pause()
        for ch in "Architect":
            await pilot.press(ch)
        await pilot.pause(0.3)
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: isinstance(app.screen, ArchitectScreen))
        assert await wait_for(pilot, lambda: "marked T-1 [x]" in screen_text(app), tries=600)
        await pilot.press("y")  # nothing to apply
        await pilot.pause()
        assert isinstance(app.screen, ArchitectScreen)
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, ArchitectScreen))
        await settle(app, pilot)
    assert tree(ws.root) == before and log(ws.root) == commits
