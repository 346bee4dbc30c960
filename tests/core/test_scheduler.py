"""The pick algorithm of SPEC §4 step 6 and the progress figures."""

from __future__ import annotations

import pytest

from memento_core.plan.scan import parse_plan_text
from memento_core.scheduler import (
    BLOCKED,
    COMPLETE,
    EMPTY,
    NOTHING_VALID,
    TASK,
    WAITING,
    estimate_left,
    overlap,
    phase_progress,
    pick,
    plan_progress,
)


def plan_of(*phases: tuple[str, str, list[tuple[str, str]]], max_retries: int = 3):
    """phases: (name, depends, [(status, id or id+' retries=N' or id+' novalid')])."""
    lines = ["# MASTER_PLAN: t", "## Meta", f"- max_retries: {max_retries}", ""]
    for name, depends, tasks in phases:
        lines += [f"## {name}: x", f"<!-- depends: {depends} -->", ""]
        for status, spec in tasks:
            tid, *extra = spec.split()
            lines.append(f"- [{status}] {tid} title of {tid}")
            if "novalid" not in extra:
                lines.append("  - verify: true")
            lines.append("  - context_files: []")
            for e in extra:
                if e.startswith("retries="):
                    lines.append(f"  - retries: {e.split('=')[1]}")
    return parse_plan_text("\n".join(lines) + "\n")


def test_first_pending_task_in_file_order():
    plan = plan_of(("Phase 1", "none", [("x", "T-1"), (" ", "T-2"), (" ", "T-3")]))
    v = pick(plan)
    assert v.kind == TASK and v.task.id == "T-2" and v.phase == "Phase 1"


def test_dependency_gates_later_phase_until_only_done_or_skipped():
    plan = plan_of(("Phase 1", "none", [("x", "T-1"), ("!", "T-2")]), ("Phase 2", "Phase 1", [(" ", "T-3")]))
    v = pick(plan)
    assert v.kind == BLOCKED and v.phase == "Phase 1" and v.tasks == ("T-2",)
    assert v.message == "⚠️ PIPELINE BLOCKED — Phase 1 has unresolved [!] tasks"
    plan = plan_of(("Phase 1", "none", [("x", "T-1"), ("-", "T-2")]), ("Phase 2", "Phase 1", [(" ", "T-3")]))
    assert pick(plan).task.id == "T-3"


def test_independent_phase_still_runs_while_another_is_blocked():
    plan = plan_of(("Phase 1", "none", [("!", "T-1")]), ("Phase 2", "none", [(" ", "T-2")]))
    assert pick(plan).task.id == "T-2"


def test_retries_exhausted_and_invalid_tasks_are_skipped():
    plan = plan_of(("Phase 1", "none", [(" ", "T-1 retries=3"), (" ", "T-2 novalid"), (" ", "T-3 retries=2")]))
    assert pick(plan).task.id == "T-3"
    plan = plan_of(("Phase 1", "none", [(" ", "T-2 novalid")]))
    v = pick(plan)
    assert v.kind == NOTHING_VALID and v.tasks == ("T-2",) and "T-2" in v.message
    plan = plan_of(("Phase 1", "none", [(" ", "T-1 retries=3")]))
    assert pick(plan).kind == BLOCKED


def test_complete_waiting_empty():
    assert pick(plan_of(("Phase 1", "none", [("x", "T-1"), ("-", "T-2")]))).kind == COMPLETE
    v = pick(plan_of(("Phase 1", "none", [("x", "T-1"), ("~", "T-2")])))
    assert v.kind == WAITING and v.tasks == ("T-2",)
    assert pick(plan_of(("Phase 1", "none", []))).kind == EMPTY


def test_exclude_lets_a_second_worker_take_the_next_task():
    plan = plan_of(("Phase 1", "none", [(" ", "T-1"), (" ", "T-2")]))
    assert pick(plan, exclude={"T-1"}).task.id == "T-2"


def test_progress_and_estimate():
    plan = plan_of(
        ("Phase 1", "none", [("x", "T-1"), ("x", "T-2"), ("-", "T-3")]),
        ("Phase 2", "Phase 1", [("!", "T-4"), (" ", "T-5"), ("~", "T-6")]),
    )
    p = plan_progress(plan)
    assert (p.total, p.done, p.blocked, p.pending, p.in_progress, p.skipped) == (5, 2, 1, 1, 1, 1)
    assert p.left == 3
    per = {ph.id: pr for ph, pr in phase_progress(plan)}
    assert per["Phase 1"].done == per["Phase 1"].total == 2 and per["Phase 2"].done == 0
    assert estimate_left(plan, [60.0, 120.0]) == 90.0 * 3
    assert estimate_left(plan, []) is None


@pytest.mark.parametrize("a, b, meet", [
    (["src/a.py"], ["src/a.py"], True),  # an equal path
    (["./src/a.py"], ["src/a.py"], True),
    (["src/a.py"], ["src/b.py"], False),
    (["src/"], ["src/a.py"], True),  # a folder holds the other's path
    (["src"], ["src/x/a.py"], True),
    (["docs"], ["docs/a.md"], True),
    ([".github/workflows/"], [".github/workflows/ci.yml"], True),
    (["src/*.py"], ["src/a.py"], True),  # a pattern matches it
    (["src/*.py"], ["src/a.md"], False),
    (["src/*"], ["src/x/y.py"], True),
    (["src/**"], ["src/x/y/z.py"], True),
    (["src/**/*.py"], ["src/a.py"], True),
    (["src/**/test_*.py"], ["src/a/test_x.py"], True),
    (["src/**/test_*.py"], ["lib/test_x.py"], False),
    (["*.py"], ["deep/x/a.py"], True),  # a name at any depth, as the guards read it
    (["*.py"], ["docs/a.md"], False),
    (["*.py"], ["src/"], True),
    (["/a.py"], ["x/a.py"], False),  # anchored
    (["a.py"], ["x/a.py"], False),
    (["src/[ab].py"], ["src/a.py"], True),
    (["src/[ab].py"], ["src/c.py"], False),
    (["src/*.py"], ["src/*.md"], False),  # two patterns: can one name match both?
    (["src/a*.py"], ["src/*b.py"], True),
    (["*.py"], ["*.md"], False),
    (["/"], ["x"], True),  # the whole tree
    (["tests/"], ["src/b.py", "tests/test_a.py"], True),  # any entry of one against any of the other
    (["a.txt"], ["b.txt"], False),
    ([], ["a.txt"], False),
])
def test_overlap_of_context_files(a, b, meet):
    assert overlap(a, b) is meet and overlap(b, a) is meet


def test_a_task_overlapping_a_running_one_waits_and_a_disjoint_one_is_picked():
    text = """# MASTER_PLAN: t
## Meta
- max_retries: 3

## Phase 1: x
<!-- depends: none -->
<!-- parallel: true -->

- [~] T-1 first
  - verify: true
  - context_files: [src/api/]
- [ ] T-2 second
  - verify: true
  - context_files: [src/api/orders.py]
- [ ] T-3 third
  - verify: true
  - context_files: [src/*.py, docs/]
- [ ] T-4 fourth
  - verify: true
  - context_files: [docs/orders.md]
"""
    plan = parse_plan_text(text)
    running = [plan.task("T-1")]
    assert pick(plan, beside=running).task.id == "T-3"  # T-2 is inside T-1's folder
    assert pick(plan, beside=[*running, plan.task("T-3")]).kind == WAITING  # T-4 is in T-3's docs/
    assert pick(plan).task.id == "T-2"  # nothing running beside it: file order
