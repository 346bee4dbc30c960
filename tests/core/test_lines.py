"""Lists a person reads are never cut silently (issue 25, item 7): a cut list of ids ends in
"… and N more", a long reason ends in "…", and the report groups one failure repeated nine
times into one line (×9) instead of repeating it."""

from __future__ import annotations

from memento_core import overview, report
from memento_core.lines import clipped, listed
from memento_core.state import TickState


def test_listed_and_clipped_say_what_they_cut():
    ids = [f"T-{n}" for n in range(1, 13)]
    assert listed(ids[:5]) == "T-1, T-2, T-3, T-4, T-5"
    assert listed(ids) == "T-1, T-2, T-3, T-4, T-5, … and 7 more"
    assert clipped("x" * 10, 10) == "x" * 10 and clipped("x" * 11, 10) == "x" * 9 + "…"


def test_needs_you_never_cuts_ids_without_saying_so():
    unsurfaced = [{"task": f"T-{n}"} for n in range(1, 13)]
    needs = overview.needs_you({"plan_state": "RUNNING"}, TickState(), None, (), unsurfaced)
    assert needs[-1].text == "12 passed task(s) not yet reviewed: T-1, T-2, T-3, T-4, T-5, … and 7 more"
    dirty = "\n".join(f"src/f{n}.py" for n in range(8))
    assert overview.pipeline_word({"plan_state": "RUNNING"}, TickState(dirty_signature=dirty), cron_installed=True,
                                  cron_daemon=True, auto_tick=False)[1].endswith("… and 5 more")


def _doc(failed: list[dict]) -> dict:
    return {"project": "p", "since": "a", "until": "b", "state": "BLOCKED", "needs_you": [], "ticks": 9,
            "passed": [], "failed_count": len(failed), "time_seconds": 0.0,
            "usage": {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}, "failed": {"verify": failed},
            "blocked": [{"id": "T-2", "title": "t", "retries": 9, "last_reason": "r" * 300}], "unread_notes": []}


def test_the_report_groups_a_repeated_failure():
    same = [{"task": "T-2", "reason": "verify failed with exit code 1"} for _ in range(9)]
    lines = report.report_lines(_doc([*same, {"task": "T-3", "reason": "boom"}]))
    failures = [line for line in lines if line.startswith("    ")]
    assert failures == ["    T-2: verify failed with exit code 1 ×9", "    T-3: boom"]
    assert "  verify (10):" in lines
    blocked = next(line for line in lines if line.startswith("  T-2 t"))
    assert blocked.endswith("…") and len(blocked) < 220
