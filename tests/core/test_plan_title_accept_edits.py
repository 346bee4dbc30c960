"""The plan edits the GitHub import uses (plan.PlanEditor.set_title, set_repeated, insert_lines): each
changes its own lines only, every other byte of the file (CRLF, a BOM, a person's prose) stays."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memento_core.forge.issue_block import defused_title, one_line
from memento_core.lines import decode
from memento_core.plan.edits import PlanEditor
from memento_core.plan.scan import parse_plan_text

PLAN = ("\ufeff# MASTER_PLAN: p\r\n\r\n## Meta\r\n- max_retries: 2\r\n\r\n## Phase 1: A\r\n<!-- depends: none -->\r\n\r\n"
        "- [ ] `GH-1`: [MODULE:api] Old title [retries: 1]\r\n  - verify: `true`\r\n  - accept: one\r\n"
        "  - context_files: [a]\r\n  - accept: two\r\n\r\nA person's words.\r\n\r\n"
        "- [x] T-2 Other\r\n  - verify: `true`\r\n  - context_files: [b]\r\n")

titles = st.text(min_size=1, max_size=80).map(defused_title)
accepts = st.lists(st.text(min_size=1, max_size=40).map(one_line).filter(bool), max_size=4)


def edited(fn) -> tuple[bytes, bytes]:
    data = PLAN.encode()
    editor = PlanEditor(decode(data, "plan"), "docs/MASTER_PLAN.md")
    fn(editor)
    return data, editor.doc.encode()


@settings(max_examples=60, deadline=None)
@given(title=titles, accept=accepts)
def test_title_and_accept_change_their_lines_only(title, accept):
    before, after = edited(lambda e: (e.set_title("GH-1", title), e.set_repeated("GH-1", "accept", accept)))
    plan = parse_plan_text(after.decode("utf-8"))
    task = plan.task("GH-1")
    assert (task.title, list(task.accept), task.module, task.retries, task.status) == \
        (title, accept, "api", 1, " ")
    assert task.verify == "true" and task.context_files == ("a",)
    assert after.startswith(b"\xef\xbb\xbf") and b"\n" not in after.replace(b"\r\n", b"")
    untouched = [ln for ln in before.split(b"\r\n") if b"GH-1" not in ln and b"accept:" not in ln]
    kept = [ln for ln in after.split(b"\r\n") if b"GH-1" not in ln and b"accept:" not in ln]
    assert kept == untouched
    assert plan.task("T-2").status == "x" and plan.errors == ()


def test_accept_lines_come_where_the_first_was_and_none_may_remain():
    _, after = edited(lambda e: e.set_repeated("GH-1", "accept", ["only"]))
    lines = after.decode("utf-8").split("\r\n")
    at = lines.index("  - accept: only")
    assert lines[at - 1] == "  - verify: `true`" and lines[at + 1] == "  - context_files: [a]"
    assert sum("accept" in ln for ln in lines) == 1
    _, after = edited(lambda e: e.set_repeated("GH-1", "accept", []))
    assert b"accept" not in after and parse_plan_text(after.decode()).task("GH-1").context_files == ("a",)


def test_a_title_edit_with_nothing_to_change_changes_nothing():
    before, after = edited(lambda e: e.set_title("GH-1", "Old title"))
    assert before == after


def test_insert_lines_after_a_last_line_without_newline():
    data = b"# MASTER_PLAN: p\n\n## Phase 1: A\n- [ ] T-1 x\n  - verify: `true`\n  - context_files: [a]"
    editor = PlanEditor(decode(data, "plan"), "plan")
    editor.insert_lines(6, ["", "## GitHub issues", "<!-- depends: none -->"])
    assert editor.doc.encode() == data + b"\n\n## GitHub issues\n<!-- depends: none -->\n"
    assert [p.id for p in editor.plan.phases] == ["Phase 1", "GitHub issues"]
