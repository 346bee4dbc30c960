"""plan/scan.py: docs/MASTER_PLAN.md read to frozen values, every tolerated variant, every error
at its file, line and task."""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.plan.model import Meta
from memento_core.plan.scan import parse_plan, parse_plan_text

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_spec_example_parses_to_phases_tasks_fields_and_depends():
    plan = parse_plan(FIXTURES / "spec_example_plan.md")
    assert plan.title == "Shop API"
    assert plan.plan_errors == ()
    m = plan.meta
    assert (m.created, m.tick_mode, m.max_retries, m.max_tasks_per_tick) == ("2026-11-29", "auto", 3, 1)
    assert m.max_diff_lines == 200 and m.stale_lock_timeout == 900
    assert m.status_archive_dir == "logs/status_archive/" and m.total_tasks == 4
    assert [(p.id, p.parallel, p.depends) for p in plan.phases] == [
        ("Phase 1", False, ()),
        ("Phase 2", True, ("Phase 1",)),
    ]
    (task,) = plan.tasks
    assert task.id == "T-101" and task.module == "database" and task.title == "Set up the schema"
    assert task.status == " " and task.phase == "Phase 1" and task.valid
    assert task.verify == "pytest -q tests/test_schema.py"
    assert task.context_files == ("src/db/schema.py", "src/db/migrations/", "tests/test_schema.py")
    assert task.guard_files == ("pyproject.toml",)
    assert task.fields["estimate"] == "5min" and task.retries == 0
    assert task.accept == ("tables users and sessions exist",)
    assert task.line == 23 and task.field_lines["verify"] == 24


def test_original_skill_template_parses_unchanged():
    plan = parse_plan(FIXTURES / "skill_template_plan.md")
    assert plan.title == "<ProjectName>"
    assert plan.plan_errors == ()
    assert plan.meta.max_tasks_per_tick == 2
    assert plan.meta.clean_strategy == "git-clean" and plan.meta.clean_ignore == ".memento_cleanignore"
    assert plan.meta.last_architect_edit == "2025-01-15T14:30:00"
    assert plan.meta.extra == {}
    assert [t.id for t in plan.tasks] == ["T-101", "T-102", "T-201", "T-301"]
    assert [(p.id, p.depends, p.parallel) for p in plan.phases] == [
        ("Phase 1", (), True),
        ("Phase 2", ("Phase 1",), False),
        ("Phase 3", ("Phase 2",), True),
    ]
    t201 = plan.task("T-201")
    assert t201.verify == "cd src && npm run test:integration && echo PASS"
    assert t201.guard_files == ("src/db/schema.ts",)
    assert plan.task("T-301").guard_files == ()
    assert all(t.valid for t in plan.tasks)


VARIANTS = """\
# MASTER_PLAN: Variants

## Meta
- tick_mode: paused <!-- auto | paused | stopped -->
- max_retries: 5
- shiny_new_key: yes

## Phase A: Setup
parallel: true
depends: none

* [x] T-1: plain id with colon
  - verify: make test
  - context_files: a.py, b/
- [!] `T-2` [MODULE:ui] Blocked one [retries: 5]
    - verify: ``echo `quoted` ``
    - context_files: []

## Phase B: Later (depends on Phase A)

- [-] T-3 skipped
  - verify: true
  - context_files: [x]
  - reason: not needed
  - accept: one
  - accept: two

```markdown
- [ ] T-99 inside a fence is not a task
## Phase Z: nor is this
```

## Phase C: Plain meta lines
- depends: Phase A, Phase B
- parallel: false

- [~] T-4 In flight
  - verify: true
  - context_files: [src/**/*.py]
"""


def test_tolerated_variants():
    plan = parse_plan_text(VARIANTS)
    assert plan.errors == ()
    assert plan.meta.tick_mode == "paused" and plan.meta.max_retries == 5
    assert plan.meta.extra == {"shiny_new_key": "yes"}
    assert [(p.id, p.parallel, p.depends) for p in plan.phases] == [
        ("Phase A", True, ()),
        ("Phase B", False, ("Phase A",)),
        ("Phase C", False, ("Phase A", "Phase B")),
    ]
    assert plan.phases[1].title == "Phase B: Later"
    t1, t2, t3, t4 = plan.tasks
    assert (t1.id, t1.status, t1.title, t1.context_files) == ("T-1", "x", "plain id with colon", ("a.py", "b/"))
    assert (t2.module, t2.title, t2.retries, t2.inline_retries) == ("ui", "Blocked one", 5, True)
    assert t2.verify == "echo `quoted`" and t2.context_files == ()
    assert t3.accept == ("one", "two") and t3.reason == "not needed" and t3.phase == "Phase B"
    assert t4.state == "in_progress" and t4.context_files == ("src/**/*.py",)
    assert "T-99" not in plan.by_id


def _messages(text: str) -> list[str]:
    return [str(e) for e in parse_plan_text(text, "docs/MASTER_PLAN.md").errors]


def test_errors_name_file_line_and_task():
    text = """\
# MASTER_PLAN: Bad

## Meta
- max_retries: three
- tick_mode: sometimes

- [ ] T-0 before any phase
  - verify: true
  - context_files: []

## Phase 1: One
<!-- depends: Phase 9 -->

- [ ] T-1 no verify
  - context_files: [a]
- [ ] T-2 no context
  - verify: true
- [%] T-3 odd status
  - verify: true
  - context_files: [a]
- [ ] T-1 duplicate
  - verify: true
  - context_files: [a]
  - retries: many
"""
    msgs = _messages(text)
    assert "docs/MASTER_PLAN.md:4: Meta `max_retries` must be a whole number, got `three`" in msgs
    assert "docs/MASTER_PLAN.md:5: Meta `tick_mode` must be auto, paused or stopped, got `sometimes`" in msgs
    assert "docs/MASTER_PLAN.md:7: T-0 task is not under a phase heading (`## Phase N: …`)" in msgs
    assert "docs/MASTER_PLAN.md:12: Phase 1 depends on unknown phase `Phase 9`" in msgs
    assert "docs/MASTER_PLAN.md:14: T-1 has no verify command" in msgs
    assert "docs/MASTER_PLAN.md:16: T-2 has no context_files" in msgs
    assert any(m.startswith("docs/MASTER_PLAN.md:18: T-3 unknown status `[%]`") for m in msgs)
    assert "docs/MASTER_PLAN.md:21: T-1 duplicate task id (first defined on line 14)" in msgs
    assert "docs/MASTER_PLAN.md:21: T-1 retries must be a whole number, got `many`" in msgs
    plan = parse_plan_text(text)
    # Plan-level errors stop the pipeline; task-level ones only make the task unpickable.
    assert {e.line for e in plan.plan_errors} == {4, 5, 12, 21}
    assert not plan.task("T-2").valid


def test_cycle_is_named():
    text = """\
# MASTER_PLAN: Cycle
## Meta
- tick_mode: auto
## Phase 1: A (depends on Phase 3)
## Phase 2: B
<!-- depends: Phase 1 -->
## Phase 3: C
<!-- depends: Phase 2 -->
"""
    msgs = _messages(text)
    assert any("dependency cycle: Phase 1 → Phase 3 → Phase 2 → Phase 1" in m for m in msgs), msgs


def test_empty_plan_is_an_error_at_line_1():
    assert _messages("") == ["docs/MASTER_PLAN.md:1: the plan is empty: no `# MASTER_PLAN:` title, no phases, no tasks"]


def test_unreadable_inputs_raise_memento_error_with_location(tmp_path):
    bad = tmp_path / "plan.md"
    bad.write_bytes(b"# MASTER_PLAN: x\n\n- ok\n\xff\xfe garbage")
    with pytest.raises(MementoError, match=r"plan.md:4: not valid UTF-8"):
        parse_plan(bad)
    with pytest.raises(MementoError, match="is a directory"):
        parse_plan(tmp_path)
    with pytest.raises(MementoError, match="plan not found"):
        parse_plan(tmp_path / "missing.md")


TWO_TASKS = """# MASTER_PLAN: t

## Meta
- tick_mode: auto

## Phase 1: One

- [x] `T-1` First
  - verify: `true`
- [ ] `T-2` Second
  - verify: `true`
  - depends: [T-1]
"""


def test_a_tasks_own_depends_field_is_read_and_an_unset_meta_key_has_its_default():
    plan = parse_plan_text(TWO_TASKS)
    assert plan.task("T-2").depends == ("T-1",) and plan.task("T-1").depends == ()
    assert plan.meta.status_max_entries == 50  # the status log keeps 50 entries unless Meta says otherwise


def test_a_line_that_opens_no_fence_hides_nothing_after_it_and_phases_know_their_tasks(tmp_path):
    text = ("# MASTER_PLAN: t\n\n## Phase 1: One\n\n```a`b is text, not a fence\n\n"
            "- [ ] T-1 First\n  - verify: `true`\n\n## Phase 2: Two\n\n- [ ] T-2 Second\n  - verify: `true`\n")
    plan = parse_plan_text(text)
    assert [t.id for t in plan.tasks] == ["T-1", "T-2"]
    assert [p.task_ids for p in plan.phases] == [("T-1",), ("T-2",)]


def test_the_same_bytes_parse_once_and_any_change_is_parsed_again(tmp_path):
    """A tick reads its plan at every step and the editor before every edit: the same text (and
    path) gives the plan already made (a Plan is immutable); another text, another path, or the
    file changed on disk never gets an earlier plan."""
    from memento_core.plan.scan import scan_plan

    text = "# MASTER_PLAN: p\n\n## Meta\n\n## Phase 1: A\n\n- [ ] T-1 [MODULE:m] One\n- [ ] T-2 [MODULE:m] Two\n"
    done = text.replace("- [ ] T-1", "- [x] T-1")
    first = parse_plan_text(text, "docs/MASTER_PLAN.md")
    assert parse_plan_text(text, "docs/MASTER_PLAN.md") is first
    assert parse_plan_text(done, "docs/MASTER_PLAN.md").task("T-1").status == "x"
    assert parse_plan_text(text, "docs/MASTER_PLAN.md") is first  # the last two are kept
    elsewhere = parse_plan_text(text, "other/PLAN.md")
    assert elsewhere.path == "other/PLAN.md" and elsewhere == scan_plan(text, "other/PLAN.md")
    path = tmp_path / "MASTER_PLAN.md"
    path.write_text(text, encoding="utf-8")
    assert [t.status for t in parse_plan(path, "docs/MASTER_PLAN.md").tasks] == [" ", " "]
    path.write_text(done, encoding="utf-8")
    assert [t.status for t in parse_plan(path, "docs/MASTER_PLAN.md").tasks] == ["x", " "]
    path.write_bytes(b"\xff\xfe not UTF-8")  # read at every call: what is on disk now
    with pytest.raises(MementoError):
        parse_plan(path)


_MINIMUMS = {"max_retries": 0, "max_questions": 0, "max_tasks_per_tick": 1, "max_diff_lines": 1, "max_diff_bytes": 1,
             "circuit_breaker_threshold": 1, "status_max_entries": 1, "total_ticks": 0, "total_tasks": 0,
             "completed_tasks": 0}


def test_each_meta_number_takes_its_least_value_and_refuses_one_below_it():
    """A limit of 0 retries is a plan's choice; 0 tasks a tick or a diff of 0 lines would stop all work."""
    least = "".join(f"- {key}: {n}\n" for key, n in _MINIMUMS.items())
    plan = parse_plan_text(f"# MASTER_PLAN: p\n\n## Meta\n{least}\n## Phase 1: A\n")
    assert plan.errors == ()
    assert {key: getattr(plan.meta, key) for key in _MINIMUMS} == _MINIMUMS
    below = "".join(f"- {key}: {n - 1}\n" for key, n in _MINIMUMS.items())
    assert _messages(f"# MASTER_PLAN: p\n\n## Meta\n{below}\n## Phase 1: A\n") == [
        f"docs/MASTER_PLAN.md:{line}: Meta `{key}` must be at least {n}, got {n - 1}"
        for line, (key, n) in enumerate(_MINIMUMS.items(), 4)]
    refused = parse_plan_text(f"# MASTER_PLAN: p\n\n## Meta\n{below}- tick_mode: sometimes\n\n## Phase 1: A\n").meta
    assert refused == Meta(lines=refused.lines, line=3)  # a refused value leaves its default


ODD = """
# master_plan: Odd one
# A second title is prose

## META
- created: <!-- fill in
- max_retries: 4 <!-- a comment never closed
- max_retries: 5
- stale_lock_timeout: a fortnight
- status_archive_dir: ../elsewhere
- Created: 2026-12-07

### Phase 0: a level-3 heading is prose
## Phase 1: One
- [ ] no id here
- [ ] T-1 First
  - verify: `true`
  - context_files: [a]
parallel: true
```a`b is text
- [ ] T-2 Right after a line that opens no fence
  - verify: `true`
  - context_files: [a]
```
- [ ] T-3 fenced
```
- [ ] T-4 Right after a fence
  - verify: `true`
  - context_files: [a]
"""


def test_an_odd_plan_as_a_model_might_write_it_is_read_tolerantly_and_each_slip_said_at_its_line():
    plan = parse_plan_text(ODD)
    assert plan.title == "Odd one" and plan.meta.line == 5  # `## META` is the Meta; the file opens blank
    assert (plan.meta.created, plan.meta.max_retries, plan.meta.stale_lock_timeout) == ("", 4, 900.0)
    assert plan.meta.status_archive_dir == "logs/status_archive/"  # never outside the project
    assert plan.meta.extra == {"Created": "2026-12-07"} and plan.meta.lines["max_retries"] == 7
    assert [(p.id, p.line, p.parallel, p.task_ids) for p in plan.phases] == \
        [("Phase 1", 14, False, ("T-1", "T-2", "T-4"))]  # `parallel:` after a task is prose
    assert [(t.id, t.line, t.valid) for t in plan.tasks] == [("T-1", 16, True), ("T-2", 21, True), ("T-4", 27, True)]
    assert [(e.line, e.message, e.severity, e.scope) for e in plan.errors] == [
        (8, "Meta key `max_retries` is repeated (first on line 7)", "error", "plan"),
        (9, "Meta `stale_lock_timeout`: invalid duration 'a fortnight': expected e.g. 90s, 5min, 5m, 1h, 1h30m, "
            "2d or seconds", "error", "plan"),
        (10, "Meta `status_archive_dir`: `../elsewhere` leads outside the project (`..`); the status log rotates "
             "into the default logs/status_archive/", "error", "task"),
        (15, "checkbox line without a task id like `T-101`; it is not a task", "warning", "task"),
    ]
    assert [e.line for e in plan.plan_errors] == [8, 9]


def test_a_plan_without_meta_and_with_a_fence_never_closed_is_warned_of_and_hides_nothing_before_it():
    plan = parse_plan_text("# Plain title\n\n## Phase 1: A\n- [ ] T-1 x\n  - verify: `true`\n  - context_files: [a]\n"
                           "~~~\n- [ ] T-2 never closed\n")
    assert plan.title == "Plain title" and [t.id for t in plan.tasks] == ["T-1"]
    assert [(e.line, e.message, e.severity, e.scope) for e in plan.errors] == [
        (1, "no `## Meta` section; defaults apply", "warning", "task"),
        (7, "code fence ~~~ is never closed", "warning", "task"),
    ]
    assert plan.plan_errors == ()


PHASES = """\
# MASTER_PLAN: phases
## Meta
## Phase 1: A
parallel: yes
## Phase 2: B
<!-- parallel: 1 -->
<!-- depends: phase 1, , none, Phase 2 -->
## Phase 3: C
- parallel: No
- depends: Phase 4
## Phase 4: D
parallel: 0
depends: Phase 3
## Phase 5: E
parallel: maybe
depends: Phase 9, Phase 5
## Phase 1: Again
depends: Phase 4
"""


def test_phase_lines_in_every_spelling_and_each_wrong_one_said():
    plan = parse_plan_text(PHASES)
    assert [(p.id, p.line, p.parallel, p.depends) for p in plan.phases] == [
        ("Phase 1", 3, True, ()), ("Phase 2", 5, True, ("Phase 1",)), ("Phase 3", 8, False, ("Phase 4",)),
        ("Phase 4", 11, False, ("Phase 3",)), ("Phase 5", 14, False, ()), ("Phase 1", 17, False, ("Phase 4",))]
    assert [(e.line, e.message) for e in plan.errors] == [
        (7, "Phase 2 depends on itself"),
        (11, "dependency cycle: Phase 4 → Phase 3 → Phase 4"),  # said once, though both phases lead into it
        (15, "`parallel` of Phase 5 must be true or false, got `maybe`"),
        (16, "Phase 5 depends on unknown phase `Phase 9`"),
        (16, "Phase 5 depends on itself"),
        (17, "phase `Phase 1` is defined twice (first on line 3)"),
    ]
    assert all(e.scope == "plan" and e.severity == "error" for e in plan.errors)


def test_a_bom_and_a_nul_byte_in_the_file(tmp_path):
    path = tmp_path / "MASTER_PLAN.md"
    path.write_bytes(b"\xef\xbb\xbf# MASTER_PLAN: with a BOM\n\n## Meta\n")
    assert parse_plan(path).title == "with a BOM" and parse_plan(path).meta.line == 3
    assert parse_plan_text("\ufeff# MASTER_PLAN: with a BOM\n").title == "with a BOM"
    path.write_bytes(b"# MASTER_PLAN: p\n\n## Meta\x00\n")
    with pytest.raises(MementoError, match=r"MASTER_PLAN.md:3: contains NUL bytes"):
        parse_plan(path)
    with pytest.raises(MementoError, match=r"^docs/MASTER_PLAN.md:3: contains NUL bytes"):
        parse_plan(path, "docs/MASTER_PLAN.md")


def test_a_plan_that_ends_in_prose_or_lacks_meta_or_phases():
    plan = parse_plan_text("# MASTER_PLAN: p\n\n## Meta\n\n## Phase 1: A\n\n- [ ] T-1 One\n  - verify: `true`\n"
                           "  - context_files: [a]\n\nSome closing words, then none.")
    assert [t.id for t in plan.tasks] == ["T-1"] and plan.errors == ()
    no_meta = "docs/MASTER_PLAN.md:1: no `## Meta` section; defaults apply"
    assert _messages("# MASTER_PLAN: p\n\n## Phase 1: A\n") == [no_meta]
    assert _messages("# MASTER_PLAN: p\n\n- [ ] T-1 One\n  - verify: `true`\n  - context_files: [a]\n") == \
        [no_meta, "docs/MASTER_PLAN.md:3: T-1 task is not under a phase heading (`## Phase N: …`)"]
    assert _messages("# MASTER_PLAN: p\n\nOnly prose.\n") == []


def test_the_errors_that_stop_the_pipeline_come_in_line_order():
    """The duplicate id is found while scanning, the Meta's and the phases' errors after it: the
    tick and `memento lint` show them as the file reads."""
    text = ("# MASTER_PLAN: p\n\n## Meta\n- max_retries: -1\n\n## Phase 1: A\n<!-- depends: Phase 1 -->\n\n"
            "- [ ] T-1 One\n- [ ] T-1 Again\n")
    plan = parse_plan_text(text)
    assert [(e.line, e.message) for e in plan.plan_errors] == [
        (4, "Meta `max_retries` must be at least 0, got -1"), (7, "Phase 1 depends on itself"),
        (10, "duplicate task id (first defined on line 9)")]
    assert [e.line for e in plan.structure_errors] == [4, 7, 10]


def test_a_cycle_is_named_by_its_phases_alone_and_once():
    text = """\
# MASTER_PLAN: cycles
## Meta
## Phase 1: A
depends: Phase 2, Phase 3
## Phase 2: B
## Phase 3: C
depends: Phase 1, Phase 1
"""
    assert _messages(text) == ["docs/MASTER_PLAN.md:3: dependency cycle: Phase 1 → Phase 3 → Phase 1"]


def test_an_archive_folder_inside_the_project_is_taken_as_written():
    plan = parse_plan_text("# MASTER_PLAN: p\n\n## Meta\n- status_archive_dir: logs/old/ <!-- ours -->\n- created: /x\n")
    assert (plan.meta.status_archive_dir, plan.meta.created, plan.errors) == ("logs/old/", "/x", ())
