"""app.py: the App and its command line. Starting and stopping (`memento-tui --demo`, DIR
arguments, SIGHUP, quit while a tick runs), the tick worker and the auto-tick countdown, and
the preload that keeps a tick's imports off the tick's own thread."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from memento_core.status_log import parse_status
from memento_tui import app as app_module
from memento_tui.app import DEMO_INTERVAL, MementoApp, main
from tests.tui.pilot import messages, plan_of, screen_text, settle, wait_for


def test_demo_creates_a_fresh_project_and_auto_ticks(monkeypatch, tmp_path, git_env):
    started = []
    monkeypatch.setattr(app_module.tempfile, "mkdtemp", lambda prefix: str(tmp_path / "fresh"))
    seen = []
    monkeypatch.setattr(MementoApp, "run", lambda self: (started.append(self),
                                                         seen.append((self.ws.root / "docs" / "MASTER_PLAN.md").exists())))
    assert main(["--demo"]) == 0
    (app,) = started
    assert app.auto_tick and app.auto_interval == DEMO_INTERVAL
    assert seen == [True]  # the project existed while the dashboard ran
    assert app.ws.root.parent == tmp_path / "fresh"
    assert not (tmp_path / "fresh").exists()  # and went with it (issue 38 item 18)


def test_a_directory_without_a_plan_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "no Memento workspace" in capsys.readouterr().err


async def test_sighup_exits_and_leaves_no_threads(demo):
    before = {t.ident for t in threading.enumerate()}
    app = MementoApp(demo, show_clock=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        if signal.getsignal(signal.SIGHUP) in (signal.SIG_DFL, None):
            pytest.fail("no SIGHUP handler installed: a dropped SSH session would leave the app behind")
        os.kill(os.getpid(), signal.SIGHUP)
        await pilot.pause(0.1)
    assert app.return_code == 129
    leaked = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not [t.name for t in leaked if "memento" in t.name or "Observer" in type(t).__name__]


async def test_tick_now_runs_one_tick_in_a_worker(demo, monkeypatch):
    release = threading.Event()
    real_run_tick = app_module.run_tick

    def held_tick(root):
        release.wait(timeout=30)  # the tick is "running" until the test has looked at the screen
        return real_run_tick(root)

    monkeypatch.setattr(app_module, "run_tick", held_tick)
    app = MementoApp(demo, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        assert app.ticking
        text = screen_text(app)
        assert "TICK RUNNING" in text and "◐ RUNNING" in text  # the UI is live while the worker runs
        await pilot.press("t")  # a second press while running does not start another
        await pilot.pause()
        assert any("already running" in m for m in messages(app))
        release.set()
        await settle(app, pilot)
        assert not app.ticking
        assert app.last_outcome is not None and app.last_outcome.exit_code == 0
        assert "TICK RUNNING" not in screen_text(app)
    assert [e.task_id for e in parse_status(demo / "docs" / "TICK_STATUS.md")] == ["T-101"]
    assert plan_of(demo).task("T-101").status == "x"


async def test_auto_tick_counts_down_and_reschedules_after_the_tick(demo):
    now = [1000.0]
    app = MementoApp(demo, auto_tick=True, auto_interval=30, clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.next_tick_at == 1030.0
        now[0] = 1010.0
        app.every_second()
        assert "next tick: in 20s" in screen_text(app)
        now[0] = 1031.0
        app.every_second()
        assert app.ticking and app.next_tick_at is None  # no countdown while the tick runs
        await settle(app, pilot)
        assert not app.ticking
        assert app.next_tick_at == 1061.0  # rescheduled only after the tick finished
        await pilot.press("o")
        assert not app.auto_tick and app.next_tick_at is None
        now[0] = 2000.0
        app.every_second()
        assert not app.ticking
    assert [e.task_id for e in parse_status(demo / "docs" / "TICK_STATUS.md")] == ["T-101"]


async def test_quit_during_a_tick_waits_on_screen_until_it_finishes(scripted):
    from memento_tui.messages import TickFinished

    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.ticking = True  # as while a tick worker runs
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.quit_requested
        assert any("closes when it has finished" in n.message for n in app._notifications)
        app.post_message(TickFinished(None, "done"))
        assert await wait_for(pilot, lambda: not app.is_running)


# A tick started from the dashboard imports nothing new: the dashboard imported all of memento_core
# in its own thread first (memento_core.tick.__main__.preload). Without it a tick pressed as the
# dashboard opened failed now and then with "ImportError: cannot import name 'DEFAULT_GRACE' from
# partially initialized module 'memento_core.agents.process'": the tick's thread and the doctor's
# were importing the agents package at the same moment. Each check runs in a fresh interpreter,
# where nothing of the tick is imported yet.
PROBE = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from memento_tui.app import MementoApp

    root, when = Path(sys.argv[1]), sys.argv[2]

    async def main():
        app = MementoApp(root, show_clock=False, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            if when == "after-paint":
                while app.first_paint_at is None:
                    await pilot.pause(0.05)
                await pilot.pause(0.2)
            before = {m for m in sys.modules if m.startswith("memento")}
            app.start_tick()  # the dashboard's `t`, before or after its first paint
            if when == "at-once":
                before = {m for m in sys.modules if m.startswith("memento")}
            while app.ticking:
                await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            outcome = app.last_outcome
            print(json.dumps({"message": outcome.message if outcome else None,
                              "new": sorted({m for m in sys.modules if m.startswith("memento")} - before)}))

    asyncio.run(main())
""")


def _tick_from_a_fresh_dashboard(demo: Path, when: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(demo), when], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_tick_pressed_after_the_first_paint_imports_nothing_new(demo):
    seen = _tick_from_a_fresh_dashboard(demo, "after-paint")
    assert seen["message"] and "passed" in seen["message"], seen
    assert seen["new"] == [], f"modules the tick imported in its own thread: {seen['new']}"


def test_a_tick_pressed_before_the_first_paint_is_preloaded_first(demo):
    seen = _tick_from_a_fresh_dashboard(demo, "at-once")
    assert seen["message"] and "passed" in seen["message"], seen
    assert seen["new"] == [], f"modules the tick imported in its own thread: {seen['new']}"
