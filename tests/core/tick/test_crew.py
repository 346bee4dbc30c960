"""Parallel workers share the tick's state (SPEC §12, §14): its rate-limit fields change only
under the crew's lock.

A real parallel tick in this process, two workers whose agent (tests/agents/reports_like_a_cli.py
through the `command` preset, read as claude's output) is rate limited. The tick's state is
watched: every change of preset_limits, rate_limit_streak and rate_limited_until made by a
worker's thread must be made while that thread holds the crew's lock.
"""

from __future__ import annotations

import threading

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick import context as tick_context
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import AGENTS, PY
from tests.core.tick.test_workers import git, make_parallel_ws

WATCHED = ("preset_limits", "rate_limit_streak", "rate_limited_until", "rate_limited_preset")


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


class _Seen(list):
    def note(self, lock, what: str) -> None:
        if lock is not None and threading.current_thread() is not threading.main_thread():
            self.append((what, lock._is_owned()))


class _WatchedLimits(dict):
    def __init__(self, data=(), lock=None, seen=None):  # dataclasses.asdict rebuilds it from items
        super().__init__(data)
        self.lock, self.seen = lock, seen if seen is not None else _Seen()

    def __setitem__(self, key, value):
        self.seen.note(self.lock, f"preset_limits[{key}]")
        super().__setitem__(key, value)

    def pop(self, *args):
        self.seen.note(self.lock, "preset_limits.pop")
        return super().pop(*args)


class _WatchedState(TickState):
    def __setattr__(self, name, value):
        seen = self.__dict__.get("_seen")
        if seen is not None and name in WATCHED:
            seen.note(self.__dict__["_lock"], name)
        super().__setattr__(name, value)


def test_workers_change_the_ticks_rate_limit_state_only_under_the_crews_lock(tmp_path, monkeypatch):
    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    toml = (ws.root / "memento.toml").read_text()
    old = toml.split('command = """')[1].split('"""')[0]
    (ws.root / "memento.toml").write_text(
        toml.replace(old, f"{PY} {AGENTS / 'reports_like_a_cli.py'} claude-limit")
        .replace('preset = "command"', 'preset = "command"\noutput = "claude"'))
    git(ws.root, "commit", "-qam", "a rate-limited agent")
    seen = _Seen()
    post_init = tick_context.TickContext.__post_init__

    def watched(self):
        post_init(self)
        self.state.__class__ = _WatchedState
        self.state.__dict__.update(_seen=seen, _lock=self.state_lock)
        self.state.__dict__["preset_limits"] = _WatchedLimits(self.state.preset_limits, self.state_lock, seen)

    monkeypatch.setattr(tick_context.TickContext, "__post_init__", watched)
    outcome = run_tick(ws.root)
    assert outcome.exit_code in (0, 1), outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == [" ", " "]  # rate limited: set aside
    assert "RATE LIMITED" in ws.status_path.read_text()
    assert seen, "no worker thread changed the rate-limit state"
    assert {what for what, _ in seen} >= {"rate_limit_streak", "rate_limited_until"}
    assert [what for what, held in seen if not held] == []
