"""markdown/blocks.py: which lines are inside a fence or an HTML comment, on values."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memento_core.lines import split_lines
from memento_core.markdown.blocks import (
    COMMENT,
    FENCE_BODY,
    FENCE_CLOSE,
    FENCE_OPEN,
    SEPARATOR_RE,
    TEXT,
    BlockScanner,
    Fence,
    Kind,
    open_fence,
)
from memento_core.notes import parse_notes_text
from memento_core.plan.scan import parse_plan_text
from memento_core.status_log import parse_status_text


def line_kinds(text: str) -> list[Kind]:
    """The kind of every line of ``text``, as one scanner steps through them."""
    step = BlockScanner().step
    return [step(line.rstrip("\r\n")) for line in split_lines(text)]


def test_backtick_and_tilde_fences():
    text = "a\n```python\n# not a heading\n```\nb\n~~~\n<!-- not a comment\n~~~\nc\n"
    assert line_kinds(text) == [
        TEXT, FENCE_OPEN, FENCE_BODY, FENCE_CLOSE, TEXT, FENCE_OPEN, FENCE_BODY, FENCE_CLOSE, TEXT,
    ]


def test_a_fence_closes_only_with_the_same_character_at_least_as_long_and_no_info():
    text = "````\n```\n~~~~\n```` python\n`````   \t\nafter\n"
    assert line_kinds(text) == [FENCE_OPEN, FENCE_BODY, FENCE_BODY, FENCE_BODY, FENCE_CLOSE, TEXT]


def test_indentation_up_to_three_spaces():
    assert open_fence("   ```") == Fence("```", 3)
    assert open_fence("    ```") is None  # four spaces: indented code, not a fence
    assert open_fence("\t```") is None
    assert line_kinds("  ~~~~\n   ~~~~\n") == [FENCE_OPEN, FENCE_CLOSE]
    assert line_kinds("~~~\n    ~~~\n") == [FENCE_OPEN, FENCE_BODY]


def test_two_characters_or_a_backtick_in_the_info_string_open_nothing():
    assert open_fence("``") is None
    assert open_fence("```a`b") is None
    assert open_fence("~~~a`b") == Fence("~~~", 0)  # the backtick rule is for backtick fences only
    assert open_fence("```` info string") == Fence("````", 0)
    assert line_kinds("```a`b\n# heading\n") == [TEXT, TEXT]


def test_an_unclosed_fence_runs_to_the_end():
    scanner = BlockScanner()
    kinds = [scanner.step(line) for line in ["x", "~~~~ text", "- [ ] T-1", "~~~", "<!--"]]
    assert kinds == [TEXT, FENCE_OPEN, FENCE_BODY, FENCE_BODY, FENCE_BODY]
    assert scanner.fence == Fence("~~~~", 0)
    assert not scanner.in_comment


def test_a_comment_spanning_lines_and_one_on_a_single_line():
    text = "<!-- starts\n## inside\nends -->\nafter\n  <!-- one line -->\ntext <!-- not at the start\n"
    assert line_kinds(text) == [COMMENT, COMMENT, COMMENT, TEXT, COMMENT, TEXT]
    assert line_kinds("    <!--\nx\n") == [TEXT, TEXT]  # four spaces in: not a comment block


def test_an_unclosed_comment_runs_to_the_end():
    scanner = BlockScanner()
    assert [scanner.step(line) for line in ["<!--", "```", "x"]] == [COMMENT, COMMENT, COMMENT]
    assert scanner.in_comment and scanner.fence is None


def test_a_fence_inside_a_comment_opens_nothing():
    text = "<!--\n```\n-->\n# heading\n```\n"
    assert line_kinds(text) == [COMMENT, COMMENT, COMMENT, TEXT, FENCE_OPEN]


def test_a_comment_marker_inside_a_fence_opens_nothing():
    text = "```\n<!--\n```\nafter\n-->\n"
    assert line_kinds(text) == [FENCE_OPEN, FENCE_BODY, FENCE_CLOSE, TEXT, TEXT]


def test_crlf_line_endings():
    text = "```\r\n<!--\r\n```  \r\n<!-- a\r\nb -->\r\nc\r\n"
    assert line_kinds(text) == [FENCE_OPEN, FENCE_BODY, FENCE_CLOSE, COMMENT, COMMENT, TEXT]
    fence = open_fence("```\r")
    assert fence == Fence("```", 0) and fence.closed_by("```\r")


def test_find_close_in_a_whole_text():
    text = "```\n``\n  ````\nafter\n"
    fence = open_fence("```")
    close = fence.find_close(text, len("```"))
    assert close is not None and close.group() == "  ````"
    assert fence.find_close("```\nnever\n", 3) is None


def test_separator_lines():
    assert SEPARATOR_RE.match("---") and SEPARATOR_RE.match("   -----  ")
    assert not SEPARATOR_RE.match("--") and not SEPARATOR_RE.match("    ---") and not SEPARATOR_RE.match("--- x")


def test_the_plan_the_notes_and_the_status_log_agree_on_fences():
    # ~~~ does not close a ~~~~ fence, ``` does not either, ~~~~~ does; ```a`b opens none.
    fenced = "~~~~\n~~~\n```\n{line}\n~~~~~\n```a`b\n"
    plan = parse_plan_text("# MASTER_PLAN: p\n## Phase 1: a\n" + fenced.format(line="- [ ] T-9 fenced")
                           + "- [ ] T-1 real\n")
    assert [t.id for t in plan.tasks] == ["T-1"]
    assert not [e for e in plan.errors if "never closed" in e.message]
    notes = parse_notes_text("## Active Notes\n### [NOTE] 2026-01-01T00:00:00 → T-1\n"
                             + fenced.format(line="### [NOTE] 2026-01-02T00:00:00 → T-2"))
    assert [n.target for n in notes] == ["T-1"]
    entries = parse_status_text("## [t] Tick #1\n- **Error Tail**:\n"
                                + fenced.format(line="## [u] Tick #2") + "## [v] Tick #3\n")
    assert [e.tick for e in entries] == [1, 3]
    assert entries[0].error_tail == "~~~\n```\n## [u] Tick #2\n```a`b"  # text after the fence


@pytest.mark.parametrize("module", ["memento_core.markdown.blocks", "memento_core.plan.edits"])
def test_importing_the_scanners_loads_no_mistune(module):
    code = f"import sys, {module}; print('mistune' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
