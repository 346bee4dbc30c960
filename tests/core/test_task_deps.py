"""Task `depends:` (SPEC §16): parsing, lint's errors with lines, the pick, and real ticks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.overview import summarize
from memento_core.plan.model import FINISHED
from memento_core.plan.scan import parse_plan, parse_plan_text
from memento_core.scaffold import init_workspace
from memento_core.scheduler import BLOCKED, COMPLETE, NOTHING_VALID, TASK, WAITING, pick
from memento_core.task_deps import waits_on
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.cli.runs import memento

FIXTURES = Path(__file__).parent / "fixtures"
SKILL = Path("/work/shared/seeds/agent-memento-SKILL.md")


def task(tid: str, status: str = " ", depends: str | None = None, extra: str = "") -> str:
    lines = [f"- [{status}] {tid} title of {tid}", "  - verify: `true`", "  - context_files: []"]
    if depends is not None:
        lines.append(f"  - depends: {depends}")
    return "\n".join(lines) + extra + "\n"


def plan_of(*phases: tuple[str, str, list[str]], max_retries: int = 3) -> str:
    out = ["# MASTER_PLAN: deps", "", "## Meta", f"- max_retries: {max_retries}", ""]
    for name, depends, tasks in phases:
        out += [f"## {name}: x", f"<!-- depends: {depends} -->", "", *tasks]
    return "\n".join(out) + "\n"


def test_depends_parses_lists_backticks_and_none():
    plan = parse_plan_text(plan_of(("Phase 1", "none", [
        task("T-1"), task("T-2", depends="T-1"), task("T-3", depends="[`T-1`, T-2]"), task("T-4", depends="none")])))
    assert [t.depends for t in plan.tasks] == [(), ("T-1",), ("T-1", "T-2"), ()]
    assert plan.errors == ()


def test_original_plans_parse_unchanged():
    """Plans written for the original (no task-level depends) keep their tasks and errors."""
    for path in [FIXTURES / "skill_template_plan.md", FIXTURES / "spec_example_plan.md"]:
        plan = parse_plan(path)
        assert all(t.depends == () for t in plan.tasks)
        assert plan.dependency_errors == () and plan.unsatisfiable == frozenset()
    if SKILL.exists():  # the original's own examples, embedded in its text
        plan = parse_plan_text(SKILL.read_text(encoding="utf-8"))
        assert plan.dependency_errors == ()


def test_lint_reports_unknown_self_and_cycles_with_their_lines():
    text = plan_of(
        ("Phase 1", "none", [task("T-1", depends="T-5"), task("T-2", depends="T-3, T-99, oops, T-2")]),
        ("Phase 2", "Phase 1", [task("T-3", depends="T-2"), task("T-5")]),
    )
    plan = parse_plan_text(text)
    lines = text.splitlines()
    got = {(e.task_id, e.message) for e in plan.errors}
    for e in plan.dependency_errors:
        assert lines[e.line - 1].strip().startswith("- depends:") and e.task_id in lines[e.line - 4]
        assert e.severity == "error" and e.scope == "task"
    assert ("T-2", "depends on unknown task `T-99`") in got
    assert ("T-2", "depends on itself") in got
    assert any(t == "T-2" and "`oops` is not a task id" in m for t, m in got)
    assert ("T-2", "dependency cycle: T-2 → T-3 → T-2") in got
    assert ("T-3", "dependency cycle: T-3 → T-2 → T-3") in got
    # T-1 (Phase 1) waits on T-5, whose Phase 2 waits on all of Phase 1: a cycle through phases
    assert ("T-1", "dependency cycle: T-1 → T-5 → Phase 1 (T-5's phase depends on it) → T-1") in got
    assert plan.unsatisfiable == {"T-1", "T-2", "T-3"}
    assert not plan.plan_errors  # the rest of the plan still runs
    v = pick(plan)
    assert v.kind == NOTHING_VALID and set(v.tasks) >= {"T-1", "T-2", "T-3"}


def test_no_cycle_when_the_phase_order_agrees():
    plan = parse_plan_text(plan_of(("Phase 1", "none", [task("T-1")]),
                                   ("Phase 2", "Phase 1", [task("T-2", depends="T-1")])))
    assert plan.errors == ()


def test_dependent_waits_until_done_or_skipped_and_independent_tasks_run():
    def verdict(s1: str) -> str:
        plan = parse_plan_text(plan_of(("Phase 1", "none", [
            task("T-1", s1), task("T-2", depends="T-1"), task("T-3", "x")])))
        v = pick(plan)
        return v.task.id if v.kind == TASK else v.kind

    assert verdict(" ") == "T-1"
    assert verdict("x") == "T-2" and verdict("-") == "T-2"
    assert verdict("~") == WAITING
    assert verdict("!") == BLOCKED  # waiting only on a blocked task: the pipeline is blocked
    plan = parse_plan_text(plan_of(("Phase 1", "none", [
        task("T-2", depends="T-1"), task("T-1", "!"), task("T-4")])))
    assert pick(plan).task.id == "T-4"  # an independent task still runs
    assert waits_on(plan) == {"T-2": ["T-1"]}


def test_retries_exhausted_dependency_blocks():
    plan = parse_plan_text(plan_of(("Phase 1", "none", [
        task("T-1", extra="\n  - retries: 2"), task("T-2", depends="T-1")]), max_retries=2))
    v = pick(plan)
    assert v.kind == BLOCKED and "T-1" in v.tasks


@st.composite
def dag_plans(draw):
    n = draw(st.integers(1, 12))
    tasks = []
    for i in range(n):
        # only earlier-numbered or later-numbered ids chosen by a random permutation: acyclic by rank
        deps = draw(st.lists(st.integers(0, n - 1), max_size=3))
        tasks.append((i, sorted({d for d in deps if d != i})))
    rank = draw(st.permutations(range(n)))
    lines = []
    for i, deps in tasks:
        ok = [d for d in deps if rank[d] < rank[i]]
        lines.append(task(f"T-{i + 1}", depends=", ".join(f"T-{d + 1}" for d in ok) if ok else None))
    return plan_of(("Phase 1", "none", lines))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_plans(), st.data())
def test_a_dependent_is_never_picked_before_its_dependencies(text, data):
    """Simulate ticks: pick, then pass or skip; every pick has its dependencies finished; all finish."""
    for _ in range(20):
        plan = parse_plan_text(text)
        assert plan.errors == ()
        v = pick(plan)
        if v.kind == COMPLETE:
            return
        assert v.kind == TASK
        for dep in v.task.depends:
            assert plan.task(dep).status in FINISHED
        mark = data.draw(st.sampled_from("x-"))
        text = text.replace(f"- [ ] {v.task.id} ", f"- [{mark}] {v.task.id} ", 1)
    raise AssertionError("never completed")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(1, 8), max_size=3), min_size=1, max_size=8),
       st.lists(st.sampled_from(" x-!"), min_size=8, max_size=8))
def test_any_depends_graph_never_picks_an_unmet_or_cyclic_task(deps, states):
    """Arbitrary dependencies (cycles, unknown ids included): the pick is always a task whose
    dependencies are done or skipped, and every task lint puts in a cycle is never picked."""
    lines = [task(f"T-{i}", states[i - 1], ", ".join(f"T-{d}" for d in ds) or None)
             for i, ds in enumerate(deps, 1)]
    plan = parse_plan_text(plan_of(("Phase 1", "none", lines)))
    cyclic = {e.task_id for e in plan.dependency_errors if "cycle" in e.message or "itself" in e.message}
    assert cyclic <= plan.unsatisfiable
    v = pick(plan)
    if v.kind == TASK:
        assert v.task.id not in plan.unsatisfiable
        assert all(plan.task(d).status in FINISHED for d in v.task.depends)
    elif any(t.status == " " and t.id not in plan.unsatisfiable and all(
            plan.task(d) is not None and plan.task(d).status in FINISHED for d in t.depends) for t in plan.tasks):
        raise AssertionError(f"a pickable task was not picked: {v}")


# ------------------------------------------------------------------ real ticks

TICK_PLAN = """# MASTER_PLAN: real deps

## Meta
- tick_mode: auto
- max_retries: 1

## Phase 1: All
<!-- depends: none -->

- [ ] `T-1` Needs T-3's file first
  - verify: `test -f one.txt`
  - context_files: [one.txt]
  - do: `test -f three.txt && echo one > one.txt`
  - depends: T-3

- [ ] `T-2` Always fails
  - verify: `false`
  - context_files: [two.txt]
  - do: `true`

- [ ] `T-3` Writes three
  - verify: `test -f three.txt`
  - context_files: [three.txt]
  - do: `echo three > three.txt`

- [ ] `T-4` Waits on the failing one
  - verify: `true`
  - context_files: [four.txt]
  - do: `echo four > four.txt`
  - depends: T-2
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_real_ticks_run_a_dependency_first_and_block_on_a_blocked_one(tmp_path: Path, git_identity):
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(TICK_PLAN)
    (root / "memento.toml").write_text('[agent]\npreset = "script"\n[sandbox]\nmode = "none"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    for _ in range(6):
        run_tick(root)
    ws = Workspace(root)
    plan = parse_plan(ws.plan_path)
    assert {t.id: t.status for t in plan.tasks} == {"T-1": "x", "T-2": "!", "T-3": "x", "T-4": " "}
    subjects = git(root, "log", "--reverse", "--format=%s").splitlines()
    done = [s.split()[2] for s in subjects if s.startswith("memento: complete")]
    assert done == ["T-3", "T-1"]  # T-1 is first in the file but ran after T-3
    assert not (root / "four.txt").exists() and "T-4" not in (root / "docs/TICK_STATUS.md").read_text()
    summary = summarize(ws, plan, [])
    assert summary["plan_state"] == "BLOCKED" and summary["waits_on"] == {"T-4": ["T-2"]}
    r = memento("tasks", "--json", str(root))
    rows = {t["id"]: t for t in json.loads(r.stdout)["tasks"]}
    assert rows["T-4"]["waits_on"] == ["T-2"] and rows["T-1"]["depends"] == ["T-3"]
    assert "waits on T-2" in memento("tasks", str(root)).stdout


def test_lint_cli_exits_2_with_file_and_line(tmp_path: Path, git_identity):
    root = tmp_path / "proj"
    assert memento("init", str(root)).returncode == 0
    text = plan_of(("Phase 1", "none", [task("T-1", depends="T-2"), task("T-2", depends="T-1, T-9")]))
    (root / "docs" / "MASTER_PLAN.md").write_text(text)
    r = memento("lint", str(root))
    assert r.returncode == 2
    out = r.stdout + r.stderr
    line_t1 = text.splitlines().index("  - depends: T-2") + 1
    assert f"docs/MASTER_PLAN.md:{line_t1}: T-1 dependency cycle: T-1 → T-2 → T-1" in out
    assert "T-2 depends on unknown task `T-9`" in out
