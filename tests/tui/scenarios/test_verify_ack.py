"""The dashboard shows a verify command the architect changed under "Needs you" until the person
acknowledges it with `v` (SPEC §13, §16): Pilot, a hostile architect through the real `command`
preset, judged on disk."""

from __future__ import annotations

import json

import pytest

from memento_core.tick.architect.run import CHANGED, run_architect
from memento_tui.app import MementoApp
from tests.core.tick.architect.test_run import agent, make_ws
from tests.tui.pilot import screen_text, settle, wait_for


@pytest.fixture(scope="module", autouse=True)
def _tick_beacon_started():
    """make_ws runs a real tick in this process (its process-wide beacon thread starts for good)."""
    from memento_core.tick import record

    if record._BEACON["thread"] is None:  # noqa: SLF001
        record._beacon(None)  # noqa: SLF001


async def test_the_needs_you_strip_shows_a_weakened_verify_and_v_acknowledges_it(tmp_path, git_env):
    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"))
    assert run_architect(ws).outcome == CHANGED
    listed = ws.root / ".memento" / "verify_changes.json"
    app = MementoApp(ws.root, show_clock=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        shown = "the architect changed T-1's verify: `grep -q DONE hello.txt` → `true`"
        assert await wait_for(pilot, lambda: shown in screen_text(app))
        assert "T-1 waits: check it, then acknowledge (v)" in screen_text(app)  # the tick does not pick it until then
        await pilot.press("v")
        assert await wait_for(pilot, lambda: shown not in screen_text(app), tries=600)
        await settle(app, pilot)
    assert json.loads(listed.read_text()) == {"changes": []}
