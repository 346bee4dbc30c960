"""forge/issue_block.py (SPEC §19 "Issues in"): an issue's title defused and its ```memento block
read into plan values — single lines of known fields only, or one error naming the issue and the
field and no field at all. The import around it is judged in test_importer.py."""

from __future__ import annotations

import pytest

from memento_core.forge.issue_block import TITLE_CHARS, defused_title, one_line, read_issue


def test_a_title_is_one_line_with_no_markup_the_plan_would_read():
    assert defused_title("[MODULE:x] <!-- hide --> Add\n- [x] `T-1` done") == \
        "(MODULE:x) ‹!-- hide --› Add - (x) `T-1` done"
    assert defused_title(":: [retries: 9] Fix") == "(retries: 9) Fix"
    assert defused_title("\u202eevil\u200b\x1b[31mred\x1b[0m") == "evilred"
    assert defused_title("") == defused_title(None) == defused_title(" \t") == "(no title)"
    assert len(defused_title("x" * 500)) <= TITLE_CHARS


def test_one_line_drops_controls_and_format_characters_and_folds_white_space():
    assert one_line("a\tb\n\nc\u2028d  e\x00\x07f\u200d") == "a b c d ef"
    assert one_line("x" * 50, 10).startswith("x") and len(one_line("x" * 50, 10)) <= 10


def test_a_block_gives_plan_values_for_its_fields():
    body = ("Some words.\r\n\r\n~~~~ memento\r\n- verify: `pytest -q tests/test_api.py`\r\n"
            "context_files: src/api.py, `tests/`\r\n  * Depends: [GH-3, T-101, GH-3]\r\n"
            "accept: returns 200\r\naccept: \tnames the version\r\n\r\n~~~~~\r\nAfter.\r\n")
    read = read_issue(12, body)
    assert read.has_block and read.error == ""
    assert read.fields == {"verify": "`pytest -q tests/test_api.py`", "context_files": "[src/api.py, tests/]",
                           "depends": "GH-3, T-101"}
    assert read.accept == ("returns 200", "names the version")


@pytest.mark.parametrize(("raw", "value"), [
    ("verify: grep -q `x` f", "`` grep -q `x` f ``"),  # a backtick inside: the double-backtick span
    ("verify: make test", "`make test`"),
    ("depends: none", "none"),
    ("depends: []", "none"),
    ("context_files: [a.py,,b/]", "[a.py, b/]"),
])
def test_each_fields_value_is_normalised(raw, value):
    read = read_issue(1, f"```memento\n{raw}\n```")
    assert read.error == "" and list(read.fields.values()) == [value]


def test_no_block_is_no_error_and_other_fences_are_not_ours():
    assert read_issue(5, None).has_block is False
    read = read_issue(5, "```python\nverify: not ours\n```\n````\n```memento\nverify: inside another fence\n```\n````")
    assert (read.has_block, read.fields, read.error) == (False, {}, "")
    assert read_issue(5, "```memento `odd`\nverify: x\n```").has_block is False  # a backtick in a ``` info string


@pytest.mark.parametrize(("body", "error"), [
    ("~~~memento\nverify: x\n```\n", "the block is never closed (end it with ~~~)"),
    ("```memento\ncontext_files: [~/.ssh]\n```", "`context_files:` (line 1) names `~/.ssh`: paths are relative"),
    ("```memento\ncontext_files: [a\\b]\n```", "`context_files:` (line 1) names `a\\b`"),
    ("```memento\ncontext_files: [[a]]\n```", "`context_files:` (line 1) is not a list of paths"),
    ("```memento\ncontext_files: ,\n```", "`context_files:` (line 1) is empty"),
    ("```memento\n\nverify: `x`\naccept:\n```", "`accept:` (line 3) is empty"),
    ("```memento\nverify: " + "x" * 1001 + "\n```", "`verify:` (line 1) is longer than 1000 characters"),
    ("```memento\nverify: x\x1b[2J\n```", "`verify:` (line 1) holds a control or format character"),
])
def test_a_block_that_cannot_be_read_whole_gives_no_field_and_says_why(body, error):
    read = read_issue(7, body)
    assert read.has_block and read.fields == {} and read.accept == ()
    assert read.error.startswith(f"issue #7's ```memento block: {error}")


def test_only_a_fence_as_long_as_the_opening_one_closes_the_block():
    read = read_issue(3, "````memento\nverify: x\n```\ncontext_files: [a]\n````")
    assert read.error == "issue #3's ```memento block: line 2 ````` is not a field line (`verify: …`)"
