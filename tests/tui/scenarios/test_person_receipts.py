"""The dashboard is a person: its skip during an unconfined run carries a receipt and is kept (SPEC §13).

A cron-like tick runs in its own process (unconfined); its agent
(tests/agents/waits_for_a_person.py) says WAITING and waits until the plan holds the
skip's reason. The dashboard, outside the tick's process tree, skips T-2 with `s`: the
tick takes the change for a person's, the task passes, and the skip is on disk and in git.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from textual.widgets import Input

from memento_core.plan.scan import parse_plan
from memento_core.status_log import parse_status
from memento_tui.app import MementoApp
from tests.core.scenarios.test_during_the_run import PERSON_TASKS
from tests.core.scenarios.test_engine import agent, git, make_ws
from tests.tui.pilot import select_task, settle, wait_for


@pytest.fixture(scope="module", autouse=True)
def _tick_beacon_started():
    """The dashboard's own tick starts the tick's one process-wide beacon thread (tick/record.py)
    for good: start it before the per-test thread-leak check looks (as screens/test_architect.py does)."""
    from memento_core.tick import record

    if record._BEACON["thread"] is None:  # noqa: SLF001
        record._beacon(None)  # noqa: SLF001


async def skip_when_the_agent_waits(app, pilot, ws) -> None:
    """When the agent says WAITING, skip T-2 with `s` and the reason the agent waits for."""
    waiting = await wait_for(pilot, lambda: any("WAITING" in p.read_text(errors="replace")
                                                for p in ws.logs_dir.glob("tick_*.log")), tries=600)
    assert waiting, "the agent never started"
    select_task(app, "T-2")
    await pilot.press("s")
    await pilot.pause()
    app.screen.query_one(Input).value = "not needed now"
    await pilot.press("enter")
    await settle(app, pilot)


async def test_a_dashboard_skip_during_an_unconfined_run_is_kept(tmp_path, git_env):
    ws = make_ws(tmp_path, agent("waits_for_a_person.py", "docs/MASTER_PLAN.md", "'reason: not needed now'"),
                 tasks=PERSON_TASKS)
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    tick = subprocess.Popen([sys.executable, "-m", "memento_core.tick", "--project", str(ws.root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        app = MementoApp(ws.root, show_clock=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await skip_when_the_agent_waits(app, pilot, ws)
            assert await wait_for(pilot, lambda: tick.poll() is not None, tries=1200), "the tick did not end"
        _, err = tick.communicate(timeout=60)
    finally:
        if tick.poll() is None:
            tick.kill()
            tick.wait()
    assert tick.returncode == 0 and b"Traceback" not in err, err
    (entry,) = parse_status(ws.status_path)
    assert entry.status == "SUCCESS", entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "x"
    assert (plan.task("T-2").status, plan.task("T-2").reason) == ("-", "not needed now")
    committed = git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")
    assert "reason: not needed now" in committed and committed == ws.plan_path.read_text()


async def test_a_dashboard_skip_during_its_own_tick_is_kept(tmp_path, git_env):
    """The dashboard's own tick runs in a thread of its process: the skip comes from the tick's
    own process (not a child of it), so it is a person's too."""
    ws = make_ws(tmp_path, agent("waits_for_a_person.py", "docs/MASTER_PLAN.md", "'reason: not needed now'"),
                 tasks=PERSON_TASKS)
    app = MementoApp(ws.root, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.start_tick()
        await skip_when_the_agent_waits(app, pilot, ws)
        assert await wait_for(pilot, lambda: not app.ticking, tries=1200), "the tick did not end"
        assert app.last_outcome is not None and app.last_outcome.exit_code == 0
    (entry,) = parse_status(ws.status_path)
    assert entry.status == "SUCCESS", entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "x"
    assert (plan.task("T-2").status, plan.task("T-2").reason) == ("-", "not needed now")
    assert "reason: not needed now" in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")
