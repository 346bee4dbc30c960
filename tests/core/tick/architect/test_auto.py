"""architect/auto.py (SPEC §16 "[architect] auto"): a blocked tick runs the architect once per
blocked state, at most `max_runs_per_day`, and alerts when it changed nothing; without `auto`
it never runs. Fake architects under tests/agents/ through the real `command` preset, real ticks."""

from __future__ import annotations

import pytest

from memento_core.control import acknowledge_verify
from memento_core.notes import add_note
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.tick.architect.test_run import agent, entries, git, history, make_ws, seen

AUTO = "auto = true\n"


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_auto_a_blocked_tick_runs_the_architect_and_the_next_tick_passes(tmp_path, monkeypatch):
    ran = tmp_path / "ran.txt"
    monkeypatch.setenv("FAKE_ARCHITECT_SEEN", str(ran))
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"), extra=AUTO)
    outcome = run_tick(ws.root)  # finds the pipeline blocked
    assert seen(ran) == ["fix"]
    assert "architect: edited T-1; reset T-1" in outcome.message
    assert entries(ws)[-1].field("Event") == "🏗 ARCHITECT"
    # Its commit, then what the tick wrote after it (the sha in its entry, the checkpoint) on top:
    # never amended into it, whose sha the entry names; `git status` is clean.
    architect, docs = history(ws.root)[1], history(ws.root)[0]
    assert architect.endswith("memento: architect — edited T-1; reset T-1")
    assert docs.endswith("memento: tick #2 (status log and checkpoint)")
    assert entries(ws)[-1].field("Git Commit").startswith(f"`{architect[:7]}`")
    assert git(ws.root, "status", "--porcelain") == ""
    assert not ws.alert_path.exists()  # nothing is blocked any more
    acknowledge_verify(ws, ["T-1"])  # a person checked the new verify (until then T-1 waits)
    outcome = run_tick(ws.root)
    assert outcome.results and outcome.results[0].passed, outcome.message
    assert seen(ran) == ["fix"]


def test_auto_runs_once_per_blocked_state_and_alerts_when_it_changed_nothing(tmp_path, monkeypatch):
    ran = tmp_path / "ran.txt"
    monkeypatch.setenv("FAKE_ARCHITECT_SEEN", str(ran))
    ws = make_ws(tmp_path, agent("architect.py", "nothing"), extra=AUTO)
    commits = history(ws.root)
    for _ in range(3):
        run_tick(ws.root)
    assert seen(ran) == ["nothing"]  # the same blocked state: never a second run
    alert = ws.alert_path.read_text()
    assert "problem: architect: the architect changed nothing" in alert and "blocked: T-1" in alert
    assert [c for c in history(ws.root) if "architect" in c] == []
    assert history(ws.root)[len(history(ws.root)) - len(commits):] == commits
    add_note(ws.notes_path, "try a lower-case verify", target="T-1")  # something new to act on
    run_tick(ws.root)
    assert seen(ran) == ["nothing", "nothing"]


def test_auto_stops_at_the_daily_limit_and_alerts(tmp_path, monkeypatch):
    ran = tmp_path / "ran.txt"
    monkeypatch.setenv("FAKE_ARCHITECT_SEEN", str(ran))
    # Each run "repairs" T-1 with a verify that fails again: a new blocked state every time.
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q NOPE hello.txt"),
                 extra=AUTO + "max_runs_per_day = 1\n")
    run_tick(ws.root)  # blocked: the architect runs (1/1) and resets T-1
    assert seen(ran) == ["fix"]
    acknowledge_verify(ws, ["T-1"])
    outcome = run_tick(ws.root)  # T-1 fails again and blocks
    assert outcome.results and outcome.results[0].blocked
    outcome = run_tick(ws.root)  # blocked again, a new state, but today's runs are spent
    assert seen(ran) == ["fix"]
    assert "daily limit of 1 automatic run(s) is reached" in outcome.message
    assert "problem: architect: the daily limit of 1 automatic run(s) is reached" in ws.alert_path.read_text()
    from memento_core.overview import summarize

    shown = summarize(ws, parse_plan(ws.plan_path), entries(ws))["architect"]
    assert shown["last"] and shown == {"auto": True, "runs_today": 1, "max_runs_per_day": 1, "last": shown["last"]}


def test_without_auto_a_blocked_tick_never_runs_the_architect(tmp_path, monkeypatch):
    ran = tmp_path / "ran.txt"
    monkeypatch.setenv("FAKE_ARCHITECT_SEEN", str(ran))
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"))
    run_tick(ws.root)
    assert seen(ran) == [] and parse_plan(ws.plan_path).task("T-1").status == "!"
