"""plan/model.py: a task's values as its block says them (the field reader, unquoting, path
lists); the values the scanner fills are held in test_scan.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memento_core.plan.model import _FIELD_FIND, split_path_list, unquote


@pytest.mark.parametrize("value, bare", [("`pytest -q`", "pytest -q"), ("``grep `x` f``", "grep `x` f"),
                                         ("`", "`"), ("``", ""), ("`a", "`a"), ("a`", "a`"), (" plain ", "plain"),
                                         ("````", ""), ("```", "`"), ("`` a ``", "a")])
def test_one_layer_of_matching_backticks_is_taken_off_a_value(value, bare):
    from memento_core.plan.model import unquote

    assert unquote(value) == bare


@pytest.mark.parametrize("value, paths", [("[a, b]", ("a", "b")), ("a, b", ("a", "b")), ("[]", ()),
                                          ("['x y', `z`]", ("x y", "z")), ("[a, b", ("[a", "b")),
                                          ("a, b]", ("a", "b]"))])
def test_a_path_list_drops_its_brackets_only_when_it_has_both(value, paths):

    assert split_path_list(value) == paths


# The task field reader as it was first written (lazy value): the greedy one in model.py must read
# every block as it did, values, keys and where each match starts (Task.field_lines counts on it).
_LAZY_FIELD_FIND = re.compile(r"^[ \t]+[-*+] ([A-Za-z_][\w-]*):[ \t]*([^\n]*?)[ \t\r]*$", re.M)


field_text = st.text(alphabet=st.sampled_from(list(" \t\r\n-*+:`ab_Z9é\x0b\x0c\u00a0[]")), max_size=40)


@st.composite
def task_blocks(draw):
    """What the scanner hands a task: "\n"-led lines, mostly field-shaped, with every kind of edge."""
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            indent = draw(st.sampled_from([" ", "  ", "\t", " \t", "    "]))
            key = draw(st.sampled_from(["verify", "context_files", "Retries", "a-b", "_x", "9bad", ""]))
            lines.append(f"{indent}{draw(st.sampled_from('-*+'))} {key}:{draw(field_text)}")
        else:
            lines.append(draw(field_text))
    return "".join("\n" + line for line in lines)


@settings(max_examples=400, deadline=None)
@given(task_blocks())
def test_the_field_reader_reads_every_block_as_the_lazy_form_did(block):
    assert [(m.start(), m.groups()) for m in _FIELD_FIND.finditer(block)] == \
        [(m.start(), m.groups()) for m in _LAZY_FIELD_FIND.finditer(block)]


def _unquote_as_first_written(value: str) -> str:
    value = value.strip()
    for quote in ("``", "`"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return value[len(quote) : -len(quote)].strip()
    return value


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("` \ta\u00a0")), max_size=8))
def test_unquote_strips_as_it_was_first_written(value):
    assert unquote(value) == _unquote_as_first_written(value)


# Task.problems tells a valid task by its checks alone and builds the messages (Task._problems)
# only for a task that has one: both must say the same of every block.
_KEYS = ("verify", "context_files", "retries", "questions", "estimate", "timeout", "changes", "import_error",
         "accept", "depends", "Verify", "guard_files")
_VALUES = ("", "`", "``", "` `", "`pytest -q`", "[a, b]", "0", "12", "-1", "x", "5min", "5 parsecs", "none",
           "None", "T-1", "2h30m")


@st.composite
def usual_tasks(draw):
    """Tasks whose blocks are mostly well formed, so that both the valid and every invalid shape occur."""
    from memento_core.plan.model import Task

    keys = draw(st.lists(st.sampled_from(_KEYS), max_size=7))
    if draw(st.booleans()):
        keys = ["verify", "context_files", *keys]
    block = "".join(f"\n  - {key}: {draw(st.sampled_from(_VALUES))}" for key in keys)
    rest = draw(st.sampled_from([" Title", " Title [retries: 2]", " Title [retries: x]"]))
    return Task(draw(st.text(alphabet="T-19", min_size=1, max_size=4)), draw(st.sampled_from(" x!~-?yX")),
                draw(st.sampled_from(["Phase 1", None])), 3, rest, block + draw(st.sampled_from(["", "\n"])))


@settings(max_examples=600, deadline=None)
@given(usual_tasks())
def test_a_task_is_told_valid_only_when_the_messages_say_nothing(task):
    assert task.problems == task._problems(task.fields)



def test_a_plan_whose_meta_says_nothing_has_the_specs_defaults():
    """SPEC §3: missing Meta keys take the defaults its example shows (§13 and §18 for the diff's
    bytes and the questions)."""
    from memento_core.plan.scan import parse_plan_text

    meta = parse_plan_text("# MASTER_PLAN: p\n\n## Meta\n\n## Phase 1: A\n").meta
    assert (meta.tick_mode, meta.max_retries, meta.max_questions, meta.max_tasks_per_tick) == ("auto", 3, 3, 1)
    assert (meta.max_diff_lines, meta.max_diff_bytes, meta.stale_lock_timeout) == (200, 5 * 1024 * 1024, 900.0)
    assert (meta.circuit_breaker_threshold, meta.status_max_entries, meta.status_archive_dir) == \
        (5, 50, "logs/status_archive/")
    assert (meta.total_ticks, meta.total_tasks, meta.completed_tasks, meta.created) == (0, 0, 0, "")
    assert (meta.extra, meta.lines, meta.line) == ({}, {}, 3)


def test_a_plan_the_cache_hands_out_twice_cannot_be_changed_by_one_caller():
    """parse_plan_text keeps the last two plans and hands the same one to every caller (a tick's
    steps, the editor): a value one of them could assign would change what the others read."""
    import dataclasses

    from memento_core.plan.scan import parse_plan_text

    text = "# MASTER_PLAN: p\n\n## Meta\n- max_retries: 2\n\n## Phase 1: A\n\n- [ ] T-1 One\n  - verify: `true`\n"
    plan = parse_plan_text(text)
    for value, name, new in ((plan, "title", "other"), (plan.meta, "max_retries", 9),
                             (plan.phases[0], "parallel", True), (plan.tasks[0], "status", "x")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, new)
    again = parse_plan_text(text)
    assert again is plan and (again.title, again.meta.max_retries, again.phases[0].parallel, again.tasks[0].status) \
        == ("p", 2, False, " ")


def test_a_plan_without_a_meta_heading_says_line_0():
    from memento_core.plan.scan import parse_plan_text

    assert parse_plan_text("# MASTER_PLAN: p\n\n## Phase 1: A\n").meta.line == 0


@pytest.mark.parametrize("line, title", [("- [ ] T-1 : Title", "Title"), ("- [ ] T-1 :Title", "Title"),
                                         ("- [ ] T-1:: Title", "Title"), ("- [ ] T-1 Title: more", "Title: more"),
                                         ("- [ ] `T-1` :  [MODULE:db] Title", "Title")])
def test_a_colon_after_the_id_is_not_part_of_the_title_however_it_is_spaced(line, title):
    from memento_core.plan.scan import parse_plan_text

    (task,) = parse_plan_text(f"# MASTER_PLAN: p\n\n## Phase 1: A\n\n{line}\n").tasks
    assert task.title == title and task.label.endswith(" " + title)


def test_a_task_reads_as_its_id_status_phase_and_line_and_its_views_keep_their_docstrings():
    """A plan in a log line or a failed assertion shows each task in one short line, never its
    block; help(Task) reads what the cached views say of themselves."""
    import inspect

    from memento_core.plan.model import Task

    task = Task("T-1", " ", "Phase 1", 7, " Title", "\n  - verify: `true`\n  - context_files: [a]")
    assert repr(task) == "Task(id='T-1', status=' ', phase='Phase 1', line=7)"
    assert inspect.getdoc(Task.problems) == "Why the task can never be picked; empty when valid."
    assert inspect.getdoc(Task.depends).startswith("The task ids of ``depends: T-101, T-102``")


@pytest.mark.parametrize("second", ["verify: `false`", "Verify: `false`", "verify: `true`"])
def test_a_field_written_twice_makes_the_task_unpickable_and_the_first_is_read(second):
    from memento_core.plan.model import Task

    task = Task("T-1", " ", "Phase 1", 7, " Title", f"\n  - verify: `true`\n  - context_files: [a]\n  - {second}")
    assert task.problems == ("field `verify` is repeated",) and not task.valid
    assert task.verify == "true" and task.field_lines["verify"] == 8


VALUES = """\
# MASTER_PLAN: values

## Meta
- tick_mode: auto

## Phase 1: One

- [ ] T-1 [MODULE:db] Plain
  - verify: `true`
  - context_files: [a]
- [ ] T-2 Written in full
  - verify: `true`
  - context_files: [a]
  - do: `make it so`
  - question: which database?
  - questions: 2
  - retries: 1
  - timeout: 90s
  - estimate: 5min
  - depends: T-1, none, T-1, T-99
- [ ] GH-12 From an issue
  - context_files: [a]
- [ ] T-3 Says when it is due
  - verify: `true`
  - context_files: [a]
  - estimate: 5 parsecs
  - timeout: soon
  - retries: x
  - questions: -1
- [ ] T-4 Records the changes of the schema
  - verify: `true`
  - context_files: [a]
  - do: write down the changes
- [ ] T-5 Only checks
  - verify: `true`
  - context_files: [a]
  - changes: ` None `
- [ ] T-6 Says something else of its changes
  - verify: `true`
  - context_files: [a]
  - changes: some
- [ ] T-7 Only its estimate is wrong
  - verify: `true`
  - context_files: [a]
  - estimate: a while
- [ ] T-8 Only its timeout is wrong
  - verify: `true`
  - context_files: [a]
  - timeout: 5 parsecs
- [ ] T-9 Imported from an issue that could not be read
  - verify: `true`
  - context_files: [a]
  - import_error: the ```memento block is not TOML

## Phase 2: Two (depends on Phase 1)
"""


def test_a_tasks_values_as_its_block_says_them_and_their_defaults():
    from memento_core.plan.scan import parse_plan_text

    plan = parse_plan_text(VALUES)
    t1, t2, t3 = plan.task("T-1"), plan.task("T-2"), plan.task("T-3")
    assert (t1.label, t2.label) == ("T-1 [MODULE:db] Plain", "T-2 Written in full")
    assert (t1.do, t1.question, t1.reason, t1.retries, t1.questions, t1.timeout_seconds, t1.depends) == \
        (None, None, None, 0, 0, None, ())
    assert (t2.do, t2.question, t2.questions, t2.retries, t2.timeout_seconds) == \
        ("make it so", "which database?", 2, 1, 90.0)
    assert t2.depends == ("T-1", "T-99") and t2.valid  # an unknown id is the plan's error, not the task's
    assert (t3.retries, t3.questions) == (0, 0)  # not whole numbers: 0, and the task is unpickable
    assert not plan.task("T-4").check_only and plan.task("T-4").valid
    assert plan.task("T-5").check_only and plan.task("T-5").valid
    assert not plan.task("T-6").check_only and not plan.task("T-6").valid


def test_each_problem_is_said_at_its_fields_line_and_an_issues_task_says_which_issue_lacks_what():
    from memento_core.plan.scan import parse_plan_text

    plan = parse_plan_text(VALUES)
    said = [(e.line, e.task_id, e.message) for e in plan.errors]
    assert said == [
        (20, "T-2", "depends on unknown task `T-99`"),
        (21, "GH-12", "has no verify command (GitHub issue #12 has no ```memento block line `verify: …`: "
                      "add it to the issue and `memento plan import` again, or write the field here)"),
        (23, "T-3", "retries must be a whole number, got `x`"),
        (23, "T-3", "questions must be a whole number, got `-1`"),
        (26, "T-3", "estimate: unknown unit 'parsecs' in duration '5 parsecs' (use s, min or m, h, d)"),
        (27, "T-3", "timeout: invalid duration 'soon': expected e.g. 90s, 5min, 5m, 1h, 1h30m, 2d or seconds"),
        (41, "T-6", "changes: `some` is not understood: `- changes: none` says the task only checks (its verify "
                    "alone judges it; an attempt that changes nothing is otherwise a failure); leave the field "
                    "out for a task that changes files"),
        (45, "T-7", "estimate: invalid duration 'a while': expected e.g. 90s, 5min, 5m, 1h, 1h30m, 2d or seconds"),
        (49, "T-8", "timeout: unknown unit 'parsecs' in duration '5 parsecs' (use s, min or m, h, d)"),
        (53, "T-9", "import_error: the ```memento block is not TOML (fix the issue and import again, or write the "
                    "task's fields here and delete this line)"),
    ]
    assert all(e.scope == "task" for e in plan.errors) and plan.plan_errors == ()
    assert plan.unsatisfiable == {"T-2"} and plan.task("T-2").valid  # never picked, though valid itself
    assert plan.task("T-1").problems == ()
    assert "GitHub" not in " ".join(parse_plan_text(VALUES.replace("GH-12", "T-12")).task("T-12").problems)


def test_a_phase_is_found_by_its_id():
    from memento_core.plan.scan import parse_plan_text

    plan = parse_plan_text(VALUES)
    assert plan.phase("Phase 2") == plan.phases[1] and plan.phase("Phase 2").depends == ("Phase 1",)
    assert plan.phase("Phase 1").task_ids == ("T-1", "T-2", "GH-12", "T-3", "T-4", "T-5", "T-6", "T-7", "T-8", "T-9")
    assert plan.phase("Phase 3") is None and plan.phase("phase 1") is None


def test_the_memo_of_durations_stays_bounded_and_answers_after_it_is_emptied():
    """A dashboard reads plan after plan for days: the memo of duration checks is emptied past
    4,096 values rather than grow with every value ever read."""
    from memento_core.plan.model import _DURATION_CHECK, _duration_problem

    for n in range(5000):
        assert _duration_problem(f"{n}s") == ""
        assert len(_DURATION_CHECK) <= 4097
    assert _duration_problem("5 parsecs") == _duration_problem("5 parsecs") != ""
