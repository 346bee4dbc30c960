"""forge/landing.py, the pure parts of ``land = "pr"``: which phases wait for a pull request, and a
pull request's body (text from the plan and the agents' runs defused)."""

from __future__ import annotations

import re

from memento_core.forge.landing import body, root_base, wait_message, waits
from memento_core.forge.pulls import PullRecord
from memento_core.plan.scan import parse_plan_text
from memento_core.workspace import Workspace

PLAN = """# MASTER_PLAN: p

## Phase 1: One
- [x] `T-1` a
  - verify: `true`
  - context_files: [a]

## Phase 2: Two
<!-- depends: Phase 1 -->
- [ ] `T-2` b
  - verify: `true`
  - context_files: [b]

## Phase 3: Three
<!-- depends: none -->
- [ ] `T-3` c
  - verify: `true`
  - context_files: [c]
"""


def rec(phase, state, **kw) -> PullRecord:
    return PullRecord(phase, f"memento/{phase.lower().replace(' ', '-')}", "main", state=state, **kw)


def test_phases_wait_one_at_a_time_until_the_merge():
    plan = parse_plan_text(PLAN)
    assert waits(plan, {}) == {}
    opened = {"Phase 1": rec("Phase 1", "open", number=4, url="u")}
    held = waits(plan, opened)
    assert set(held) == {"Phase 2", "Phase 3"} and held["Phase 2"].number == 4  # Phase 3 too: one at a time
    assert set(waits(plan, {"Phase 1": rec("Phase 1", "merged")})) == set()
    assert set(waits(plan, {"Phase 1": rec("Phase 1", "merged", checks="failing")})) == {"Phase 2", "Phase 3"}
    # a phase's own branch is worked (again) while its pull request is open
    assert "Phase 1" not in held
    closed = waits(plan, {"Phase 1": rec("Phase 1", "closed", number=4)})
    assert set(closed) == {"Phase 1", "Phase 2", "Phase 3"}
    assert "CLOSED" in wait_message(closed["Phase 2"])


def test_stack_lets_the_next_phase_start_on_a_finished_unmerged_phase_only():
    plan = parse_plan_text(PLAN)
    assert waits(plan, {"Phase 1": rec("Phase 1", "open")}, stack=True) == {}
    assert waits(plan, {"Phase 1": rec("Phase 1", "unpushed")}, stack=True) == {}
    unfinished = parse_plan_text(PLAN.replace("[x] `T-1`", "[ ] `T-1`"))
    assert set(waits(unfinished, {"Phase 1": rec("Phase 1", "unpushed")}, stack=True)) == {"Phase 2", "Phase 3"}
    assert set(waits(plan, {"Phase 1": rec("Phase 1", "closed")}, stack=True)) == {"Phase 1", "Phase 2", "Phase 3"}


def test_a_stacked_phase_lands_on_the_base_below_every_phase_branch():
    one = PullRecord("Phase 1", "memento/one", "main")
    two = PullRecord("Phase 2", "memento/two", "memento/one")
    three = PullRecord("Phase 3", "memento/three", "memento/two")
    records = {r.phase: r for r in (one, two, three)}
    assert [root_base(records, r) for r in (one, two, three)] == ["main", "main", "main"]


def test_a_body_keeps_what_tasks_and_agents_wrote_inert(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / "docs").mkdir()
    plan = parse_plan_text("# MASTER_PLAN: p\n\n## Phase 1: Fixes #3 @octocat\n"
                           "- [x] `GH-9` Fixes #3, thanks @octocat `x`\n  - verify: `echo ok`\n  - context_files: [a]\n"
                           "- [x] `T-2` plain\n  - verify: `true`\n  - context_files: [b]\n")
    ws.status_path.write_text("# TICK STATUS LOG\n\n## [2026-12-06T12:00:00Z] Tick #1\n"
                              "- **Task**: GH-9 Fixes #3\n- **Status**: ✅ SUCCESS\n"
                              "- **Verify Output**: `closes #4 @team` (exit code 0)\n")
    text = body(ws, plan, PullRecord("Phase 1", "memento/x", "main"), "octo-org/shop")
    outside = re.sub(r"(`+)(?s:.*?)\1", "", re.sub(r"```(?s:.*?)```", "", text))  # the text outside code
    assert "Closes #9" in outside
    assert not re.search(r"(?i)\b(fix(es|ed)?|close[sd]?|resolve[sd]?)\s+#(3|4)\b", outside), outside
    assert "@" not in outside and "closes #4 @team" in text
