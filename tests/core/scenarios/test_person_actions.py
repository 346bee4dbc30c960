"""A person's reset or skip starts the breaker's failure streak afresh; tick numbers never repeat.

Real ticks, real git, the hostile agent exits non-zero (tests/agents/exits_nonzero.py).
"""

from __future__ import annotations

import subprocess
import sys

from memento_core import control
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick

from .test_engine import HELLO, agent, entries, make_ws

PY = sys.executable
# Four tasks: one blocked task is 25 %, under the breaker's 30 % blocked share.
FOUR = HELLO + "".join(HELLO.replace("T-1", f"T-{n}").replace("Write hello", f"Write {n}") for n in (2, 3, 4))


def _block(ws) -> None:
    for _ in range(3):
        run_tick(ws.root)
    assert parse_plan(ws.plan_path).task("T-1").status == "!"
    assert TickState.load(ws).consecutive_failed_ticks == 3


def test_reset_of_a_blocked_task_starts_the_failure_streak_afresh(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), tasks=FOUR)
    _block(ws)
    control.reset_task(ws, "T-1")
    assert TickState.load(ws).consecutive_failed_ticks == 0
    run_tick(ws.root)
    run_tick(ws.root)
    # 3 + 2 failed ticks would have tripped the breaker (threshold 5): the reset started afresh.
    state = TickState.load(ws)
    assert state.breaker_reason == "" and state.consecutive_failed_ticks == 2
    assert parse_plan(ws.plan_path).meta.tick_mode == "auto"
    assert not [e for e in entries(ws) if e.status == "CIRCUIT BREAKER"]


def test_the_cli_reset_and_skip_start_the_streak_afresh(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), tasks=FOUR)
    _block(ws)
    r = subprocess.run([PY, "-m", "memento_core.cli", "reset", "T-1", str(ws.root)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert TickState.load(ws).consecutive_failed_ticks == 0
    run_tick(ws.root)
    assert TickState.load(ws).consecutive_failed_ticks == 1
    r = subprocess.run([PY, "-m", "memento_core.cli", "skip", "T-1", "--reason", "not needed", str(ws.root)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert TickState.load(ws).consecutive_failed_ticks == 0


def test_tick_numbers_never_repeat_after_a_plan_invalid_tick(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), max_retries=50)
    run_tick(ws.root)  # tick #1: a failure
    good = ws.plan_path.read_text()
    ws.plan_path.write_text(good + "\n" + HELLO)  # a duplicate id: the plan is invalid
    subprocess.run(["git", "commit", "-qam", "broken plan"], cwd=ws.root, check=True)
    assert run_tick(ws.root).exit_code == 2  # tick #2: PLAN INVALID
    ws.plan_path.write_text(good)
    subprocess.run(["git", "commit", "-qam", "fixed plan"], cwd=ws.root, check=True)
    run_tick(ws.root)  # tick #3
    numbers = [e.tick for e in entries(ws)]
    assert len(numbers) == 3 and numbers == sorted(set(numbers)), numbers
    assert "PLAN INVALID" in entries(ws)[1].field("Event")
    assert parse_plan(ws.plan_path).meta.total_ticks == 3
