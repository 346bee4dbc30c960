"""Starting and stopping: `memento-tui --demo`, DIR arguments, SIGHUP, no leaked threads."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from memento_tui import app as app_module
from memento_tui.app import DEMO_INTERVAL, MementoApp, main
from tests.tui.pilot import settle


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
