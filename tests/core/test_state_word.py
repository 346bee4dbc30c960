"""state_word.py: the one word and the pick it is judged on, from the files a tick reads.

Every surface asking the word is tests/core/scenarios/test_one_state_word.py's; here the
pick itself: what the tick passes over (a task whose verify the architect changed, a phase
waiting for its pull request's merge) makes the word WAITING, not RUNNING or IDLE.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core import scheduler
from memento_core.config.model import Config
from memento_core.forge import pulls
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.state_word import pipeline_word, plan_state, tick_pick
from memento_core.verify_changes import VerifyChange, record
from memento_core.workspace import Workspace

PLAN = """# MASTER_PLAN: shop

## Meta
- tick_mode: auto
- max_retries: 2

---

## Phase 1: Foundation
<!-- depends: none -->

- [x] `T-101` Write one
  - verify: `true`
  - context_files: [out.txt]

## Phase 2: Integration
<!-- depends: Phase 1 -->

- [ ] `T-201` Write two
  - verify: `true`
  - context_files: [out.txt]

- [ ] `T-202` Write three
  - verify: `true`
  - context_files: [out.txt]
"""


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "MASTER_PLAN.md").write_text(PLAN, encoding="utf-8")
    (tmp_path / ".memento").mkdir()
    return Workspace(tmp_path)


def facts(plan, verdict) -> dict:
    return {"plan_state": plan_state(plan, verdict), "git_error": None, "config_error": None, "root": "."}


def test_a_phase_waiting_for_its_pull_request_is_waiting_for_a_person_until_it_lands(ws):
    plan = parse_plan(ws.plan_path)
    first = plan.phases[0].id
    pulls.save(ws, {first: pulls.PullRecord(first, "memento/foundation", "main", number=12,
                                            url="https://github.com/o/r/pull/12", state="open")})
    verdict = tick_pick(ws, plan, Config(forge_land="pr"))
    assert (verdict.kind, verdict.on_person, verdict.task) == (scheduler.WAITING, True, None)
    assert "#12" in verdict.message and "https://github.com/o/r/pull/12" in verdict.message
    assert pipeline_word(facts(plan, verdict), TickState(), cron_installed=True, cron_daemon=True) == ("WAITING", "")
    # Direct landing reads no record: the next task runs, and cron makes the word RUNNING.
    direct = tick_pick(ws, plan, Config())
    assert (direct.kind, direct.task.id, direct.on_person) == (scheduler.TASK, "T-201", False)
    assert pipeline_word(facts(plan, direct), TickState(), cron_installed=True, cron_daemon=True)[0] == "RUNNING"
    # Merged with its checks passing: the phase has landed, the next one runs.
    pulls.save(ws, {first: pulls.PullRecord(first, "memento/foundation", "main", number=12, state="merged",
                                            checks="passing")})
    landed = tick_pick(ws, plan, Config(forge_land="pr"))
    assert (landed.kind, landed.task.id, landed.on_person) == (scheduler.TASK, "T-201", False)
    # An invalid memento.toml (no Config): no pull request is looked at.
    assert tick_pick(ws, plan, None).task.id == "T-201"


def test_a_task_held_for_a_persons_ack_makes_the_word_waiting_only_when_nothing_else_runs(ws):
    record(ws, [VerifyChange("T-201", "pytest -q", "true", "2026-12-06T22:00:00Z")])
    plan = parse_plan(ws.plan_path)
    other = tick_pick(ws, plan, Config())
    assert (other.kind, other.task.id, other.on_person) == (scheduler.TASK, "T-202", False)
    ws.plan_path.write_text(PLAN.replace("- [ ] `T-202`", "- [x] `T-202`"), encoding="utf-8")
    plan = parse_plan(ws.plan_path)
    held = tick_pick(ws, plan, Config())
    assert (held.kind, held.tasks, held.on_person) == (scheduler.WAITING, ("T-201",), True)
    assert "the architect changed the verify of T-201" in held.message
    assert plan_state(plan, held) == "WAITING"
    assert plan_state(plan) == "RUNNING"  # the plan alone knows nothing of the hold


def test_tasks_in_progress_are_no_wait_for_a_person(ws):
    ws.plan_path.write_text(PLAN.replace("- [ ] `T-201`", "- [~] `T-201`").replace("- [ ] `T-202`", "- [x] `T-202`"),
                            encoding="utf-8")
    plan = parse_plan(ws.plan_path)
    verdict = tick_pick(ws, plan, Config())
    assert (verdict.kind, verdict.on_person) == (scheduler.WAITING, False)
    assert pipeline_word(facts(plan, verdict), TickState(), ticking=True) == ("RUNNING", "a tick is running now")
