"""`memento tick` (cli/commands/tick.py), a real subprocess: one tick as cron runs it, its outcome in one
line whose prefix and exit code follow it (a pass [ok]; a failure [warn], exit 0; a block, exit 1)."""

from __future__ import annotations

from pathlib import Path

from memento_core.status_log import parse_status
from tests.core.cli.runs import PLAN, WORDS_PLAN, memento


def last_attempt(words_ws: Path):
    return [e for e in parse_status(words_ws / "docs/TICK_STATUS.md") if e.field("Task")][-1]


def test_a_failed_or_blocked_tick_is_not_ok(words_ws: Path):
    r = memento("tick", str(words_ws))
    assert (r.returncode, r.stdout) == (0, "[ok] tick #1: T-1 passed\n")
    r = memento("tick", str(words_ws))
    assert r.returncode == 0  # a recorded failure: the tick itself ran
    assert r.stdout == "[warn] tick #2: T-2 failed: verify failed with exit code 1\n"
    r = memento("tick", str(words_ws))
    assert r.returncode == 1 and r.stdout.startswith("[warn] tick #3: T-2 blocked: ")
    entry = last_attempt(words_ws)
    # `false` prints nothing: the field says the reason once, not "… exit code 1` (exit code 1)".
    assert entry.field("Verify Output") == "`verify failed with exit code 1`"
    r = memento("status", str(words_ws))  # half the tasks blocked: the breaker paused the project over them
    assert r.returncode == 1 and r.stdout.startswith("[warn] words: BLOCKED")


def test_a_failure_with_output_keeps_its_exit_code(words_ws: Path):
    (words_ws / PLAN).write_text(WORDS_PLAN.replace("verify: `false`", "verify: `echo boom; exit 3`"))
    memento("tick", str(words_ws))
    memento("tick", str(words_ws))
    entry = last_attempt(words_ws)
    assert entry.field("Verify Output") == "`boom` (exit code 3)"
