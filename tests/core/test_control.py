"""control.py: a person's changes from the command line or the dashboard, in-process on a real committed
workspace: the mode (a resume clears a tripped breaker), a reset or skip (never of an id defined twice;
the failure streak afresh; the alert made true again), what still keeps the pipeline from running, and
a running architect told what the person changed."""

from __future__ import annotations

import json

import pytest

from memento_core import control
from memento_core.errors import MementoError
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.workspace import Workspace
from tests.core.scenarios.test_engine import HELLO, make_ws

TWO = HELLO.replace("- [ ] `T-1`", "- [!] `T-1`") + "\n" + HELLO.replace("T-1", "T-2").replace(
    "Write hello", "Second")


@pytest.fixture
def ws(tmp_path, git_identity) -> Workspace:
    return make_ws(tmp_path, "true", tasks=TWO)


def tripped(ws: Workspace) -> None:
    state = TickState.load(ws)
    state.breaker_reason, state.breaker_at = "5 consecutive ticks attempted work and passed nothing", "now"
    state.consecutive_failed_ticks = 5
    state.save(ws)


def test_a_resume_clears_the_breaker_a_pause_does_not(ws):
    tripped(ws)
    plan = control.set_mode(ws, "paused")
    assert plan.meta.tick_mode == "paused" == parse_plan(ws.plan_path).meta.tick_mode
    assert TickState.load(ws).breaker_reason.startswith("5 consecutive")
    control.set_mode(ws, "auto")
    state = TickState.load(ws)
    assert (state.breaker_reason, state.breaker_at, state.consecutive_failed_ticks) == ("", "", 0)
    assert parse_plan(ws.plan_path).meta.tick_mode == "auto"
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        control.set_mode(ws, "fast")


def test_a_reset_and_a_skip_start_the_failure_streak_again_and_make_the_alert_true(ws):
    control.after_person(ws, parse_plan(ws.plan_path))  # T-1 is blocked: the alert says so
    assert "T-1" in ws.alert_path.read_text()
    state = TickState.load(ws)
    state.consecutive_failed_ticks = 3
    state.save(ws)
    plan = control.reset_task(ws, "T-1")
    assert plan.task("T-1").status == " " and TickState.load(ws).consecutive_failed_ticks == 0
    assert not ws.alert_path.exists()  # nothing needs the person any more
    state = TickState.load(ws)
    state.consecutive_failed_ticks = 2
    state.save(ws)
    plan = control.skip_task(ws, "T-2", "done by hand")
    assert plan.task("T-2").status == "-" and TickState.load(ws).consecutive_failed_ticks == 0


def test_an_id_defined_twice_is_neither_reset_nor_skipped(ws):
    text = ws.plan_path.read_text() + "\n" + HELLO.replace("Write hello", "Again")
    ws.plan_path.write_text(text)
    for act in (lambda: control.reset_task(ws, "T-1"), lambda: control.skip_task(ws, "T-1", "x")):
        with pytest.raises(MementoError, match=r"T-1 is defined 2 times \(lines \d+, \d+\)"):
            act()
    assert ws.plan_path.read_text() == text


def test_what_still_keeps_the_pipeline_from_running(ws):
    plan = parse_plan(ws.plan_path)
    assert control.still_not_running(plan) == ""  # auto
    paused = control.set_mode(ws, "paused")
    assert control.still_not_running(paused) == "the pipeline is still paused: `memento resume` to run it"
    tripped(ws)
    assert control.still_not_running(paused, TickState.load(ws), resume="press m") == (
        "the pipeline is still paused (the circuit breaker paused it: 5 consecutive ticks attempted work "
        "and passed nothing): press m to run it")
    assert control.still_not_running(control.set_mode(ws, "stopped")).startswith("the pipeline is still stopped")


def test_a_running_architect_is_told_what_the_person_changed(ws, tmp_path):
    records = ws.memento_dir / "records"
    control.skip_task(ws, "T-2", "not now")  # no architect running: nothing written
    assert not (records / "ARCHITECT.person").exists()
    records.mkdir(parents=True, exist_ok=True)
    (records / "ARCHITECT.json").write_text("{}")
    control.reset_task(ws, "T-2")
    control.set_mode(ws, "paused")
    lines = (records / "ARCHITECT.person").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"op": "reset", "task": "T-2"}, {"op": "mode", "mode": "paused"}]
    persons = tmp_path / "thesis.tex"  # the architect's agent put a link there: not written through
    persons.write_text("mine\n")
    (records / "ARCHITECT.person").unlink()
    (records / "ARCHITECT.person").symlink_to(persons)
    control.set_mode(ws, "auto")
    assert persons.read_text() == "mine\n"
