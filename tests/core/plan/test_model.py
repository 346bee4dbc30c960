"""plan/model.py: a task's values as its block says them (the field reader, unquoting, path
lists); the values the scanner fills are held in test_scan.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memento_core.plan.model import _FIELD_FIND, split_path_list, unquote


@pytest.mark.parametrize("value, bare", [("`pytest -q`", "pytest -q"), ("``grep `x` f``", "grep `x` f"),
                                         ("`", "`"), ("``", ""), ("`a", "`a"), ("a`", "a`"), (" plain ", "plain")])
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

