"""plan/edits.py: minimal line edits under the plan's lock. Each edit changes its own lines only;
every other byte (CRLF, a BOM, comments, a person's prose and concurrent edits) stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.errors import EditConflict, MementoError
from memento_core.forge.issue_block import defused_title, one_line
from memento_core.lines import decode
from memento_core.plan.edits import (
    PlanEditor,
    edit_plan,
    reset_task,
    set_meta,
    set_status,
    skip_task,
)
from memento_core.plan.scan import parse_plan, parse_plan_text
from tests.core.plan.test_scan import FIXTURES, TWO_TASKS, VARIANTS

SMALL = (FIXTURES / "spec_example_plan.md").read_text()


def _write(tmp_path: Path, text: str, *, crlf: bool = False, bom: bool = False) -> Path:
    if crlf:
        text = text.replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    path = tmp_path / "MASTER_PLAN.md"
    path.write_bytes(data)
    return path


def _changed_lines(before: bytes, after: bytes) -> list[int]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(a) == len(b)
    return [i + 1 for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("bom", [False, True])
def test_status_edit_changes_one_line_only(tmp_path, crlf, bom):
    path = _write(tmp_path, SMALL, crlf=crlf, bom=bom)
    before = path.read_bytes()
    plan = set_status(path, "T-101", "~")
    after = path.read_bytes()
    assert plan.task("T-101").status == "~"
    assert _changed_lines(before, after) == [23]
    assert after.startswith(b"\xef\xbb\xbf") == bom
    assert (b"\r\n" in after) == crlf and (b"\r\n" not in after or after.count(b"\n") == after.count(b"\r\n"))
    assert after.splitlines(keepends=True)[22].rstrip(b"\r\n") == b"- [~] `T-101` [MODULE:database] Set up the schema"


def test_field_and_meta_edits_keep_comments_and_insert_where_missing(tmp_path):
    path = _write(tmp_path, SMALL, crlf=True)

    said = []

    def apply(e):
        said.append(e.set_status("T-101", "~"))
        said.append(e.set_status("T-101", "~"))  # as it is
        said.append(e.set_field("T-101", "retries", "2"))  # in place
        said.append(e.set_field("T-101", "reason", "because"))  # a new field line
        said.append(e.set_field("T-101", "reason", "because"))  # as it is: no change
        said.append(e.remove_field("T-101", "depends"))  # not there
        e.set_meta("tick_mode", "paused")
        e.set_meta("brand_new", "1")
        e.update_counters(add_tick=True)

    plan = edit_plan(path, apply)
    assert said == [True, False, True, True, False, False]  # whether the plan changed
    text = path.read_bytes().decode()
    assert "- tick_mode: paused          <!-- auto | paused | stopped -->\r\n" in text
    assert "- total_ticks: 1           <!-- maintained by Memento -->\r\n" in text
    assert "- total_tasks: 1           <!-- maintained by Memento -->\r\n" in text
    assert "  - retries: 2\r\n" in text
    assert "  - accept: tables users and sessions exist\r\n  - reason: because\r\n" in text
    assert "- completed_tasks: 0       <!-- maintained by Memento -->\r\n- brand_new: 1\r\n" in text
    assert "\n" not in text.replace("\r\n", "")
    assert plan.task("T-101").retries == 2 and plan.meta.tick_mode == "paused"
    assert parse_plan(path).meta.extra == {"brand_new": "1"}


def test_inline_retries_is_edited_inline(tmp_path):
    path = _write(tmp_path, VARIANTS)
    edit_plan(path, lambda e: e.set_field("T-2", "retries", "0"))
    line = path.read_text().splitlines()[14]
    assert line == "- [!] `T-2` [MODULE:ui] Blocked one [retries: 0]"
    plan = reset_task(path, "T-2")
    assert plan.task("T-2").status == " " and plan.task("T-2").retries == 0


def test_meta_section_is_created_when_missing(tmp_path):
    path = _write(tmp_path, "# MASTER_PLAN: x\n\n## Phase 1: a\n- [ ] T-1 t\n  - verify: true\n  - context_files: []\n")
    plan = set_meta(path, "tick_mode", "paused")
    assert plan.meta.tick_mode == "paused" and plan.meta.line == 3
    assert path.read_text().startswith("# MASTER_PLAN: x\n\n## Meta\n- tick_mode: paused\n\n\n## Phase 1")


def test_skip_and_reset_and_conflicts(tmp_path):
    path = _write(tmp_path, VARIANTS)
    plan = skip_task(path, "T-2", "superseded   by\nT-4")
    assert plan.task("T-2").status == "-" and plan.task("T-2").reason == "superseded by T-4"
    with pytest.raises(MementoError, match="needs a reason"):
        skip_task(path, "T-2", "  ")
    with pytest.raises(EditConflict, match=r"T-1 is now \[x\] \(done\); expected"):
        set_status(path, "T-1", "~", expect=" ")
    with pytest.raises(EditConflict, match="T-77 is not in the plan"):
        set_status(path, "T-77", "x")
    with pytest.raises(EditConflict):
        reset_task(path, "T-1")  # a done task is not reset


def test_edit_reapplies_on_a_line_a_person_moved(tmp_path):
    """The edit is anchored on the id: a person inserting lines above it doesn't misplace it."""
    path = _write(tmp_path, SMALL)
    text = path.read_text().replace("## Phase 1: Foundation\n", "## Phase 1: Foundation\n\nSome prose a person added.\n\n")
    path.write_text(text)
    set_status(path, "T-101", "x")
    lines = path.read_text().splitlines()
    assert lines[25] == "- [x] `T-101` [MODULE:database] Set up the schema"
    assert "Some prose a person added." in lines


def test_the_counters_are_written_into_a_meta_that_lacks_them(tmp_path):
    path = tmp_path / "MASTER_PLAN.md"
    path.write_text(TWO_TASKS.replace("- [x] `T-1`", "- [ ] `T-1`"))
    edit_plan(path, lambda e: e.update_counters())
    meta = path.read_text().split("## Phase 1")[0]
    assert "- total_tasks: 2" in meta and "- completed_tasks: 0" in meta  # written though 0 is the default


def test_a_task_block_put_back_from_another_version_keeps_its_status_and_every_other_line(tmp_path):
    old = ("# MASTER_PLAN: t\n\n## Phase 1: One\n\n- [ ] T-1 First\n  - verify: `true`\n  - context_files: [a]\n"
           "- [ ] T-2 Second\n  - verify: `true`\n  - context_files: [b]")  # no newline at the end
    third = "- [ ] T-3 Third\n  - verify: `true`\n  - context_files: [c]\n"
    now = old.replace("- [ ] T-1 First\n  - verify: `true`", "- [~] T-1 First (edited)\n  - verify: `false`\n"
                      "  - accept: more").replace("- [ ] T-2 Second\n  - verify: `true`",
                                                  "- [x] T-2 Second (edited)\n  - verify: `exit 0`") + "\n" + third
    path = _write(tmp_path, now)
    said = []
    edit_plan(path, lambda e: said.extend([e.replace_task_block("T-1", old.encode()),
                                           e.replace_task_block("T-2", old.encode()),
                                           e.replace_task_block("T-3", old.encode())]))
    assert said == [True, True, False]  # T-3 is not in that version: left as it is
    assert path.read_text() == old.replace("- [ ] T-1", "- [~] T-1").replace("- [ ] T-2", "- [x] T-2") + "\n" + third


def test_resetting_a_skipped_task_drops_its_reason_and_a_blocked_one_keeps_its_fields(tmp_path):
    text = ("# MASTER_PLAN: t\n\n## Phase 1: One\n\n- [-] T-1 First\n  - verify: `true`\n  - reason: not now\n"
            "- [!] T-2 Second\n  - verify: `true`\n  - retries: 3\n  - reason: kept\n")
    path = _write(tmp_path, text)
    reset_task(path, "T-1")
    plan = reset_task(path, "T-2")
    assert (plan.task("T-1").status, plan.task("T-1").reason) == (" ", None)
    assert (plan.task("T-2").status, plan.task("T-2").retries, plan.task("T-2").reason) == (" ", 0, "kept")


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


STATUSES = [" ", "x", "!", "~", "-"]


prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30).map(
    lambda s: s.replace("#", "").replace("`", "").replace("~", "").strip()
)


@st.composite
def plans(draw):
    """A plan in a random mix of the tolerated variants, with its expected task states."""
    n_phases = draw(st.integers(1, 4))
    lines = ["# MASTER_PLAN: Generated", "", "## Meta", "- tick_mode: auto   <!-- auto | paused | stopped -->",
             "- max_retries: 3", "- total_ticks: 0", ""]
    expected: dict[str, tuple[str, int]] = {}
    n = 0
    for p in range(1, n_phases + 1):
        if draw(st.booleans()):
            lines += [f"## Phase {p}: Part {p}", "<!-- parallel: false -->", f"<!-- depends: {'none' if p == 1 else f'Phase {p - 1}'} -->"]
        else:
            lines += [f"## Phase {p}: Part {p}" + (f" (depends on Phase {p - 1})" if p > 1 else "")]
        lines.append("")
        for _ in range(draw(st.integers(0, 4))):
            n += 1
            tid = f"T-{n}"
            status = draw(st.sampled_from(STATUSES))
            retries = draw(st.integers(0, 9))
            shown = draw(st.sampled_from([f"`{tid}`", tid, f"{tid}:"]))
            module = draw(st.sampled_from(["", "[MODULE:core] "]))
            title = draw(prose) or "untitled"
            inline = draw(st.booleans())
            lines.append(f"- [{status}] {shown} {module}{title}" + (f" [retries: {retries}]" if inline else ""))
            indent = draw(st.sampled_from(["  ", "    ", "\t"]))
            lines.append(f"{indent}- verify: `true`")
            lines.append(f"{indent}- context_files: [src/{n}.py]")
            if not inline and draw(st.booleans()):
                lines.append(f"{indent}- retries: {retries}")
            elif not inline:
                retries = 0
            if draw(st.booleans()):
                lines.append(f"{indent}- accept: {draw(prose)}")
            if draw(st.booleans()):
                lines.append("")
            expected[tid] = (status, retries)
        if draw(st.booleans()):
            lines += ["Some prose about this phase.", "```", "- [ ] T-999 fenced, not a task", "```", ""]
    text = "\n".join(lines) + "\n"
    return text, expected


edits = st.lists(
    st.tuples(st.sampled_from(["status", "retries", "reason", "meta"]), st.integers(0, 50),
              st.sampled_from(STATUSES), st.integers(0, 9)),
    max_size=8,
)


def _diff_window(a: list[bytes], b: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """The changed middle of two line lists after removing the common prefix and suffix."""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[-1 - j] == b[-1 - j]:
        j += 1
    return a[i : len(a) - j], b[i : len(b) - j]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=plans(), ops=edits, crlf=st.booleans(), bom=st.booleans())
def test_edits_touch_only_their_line(tmp_path: Path, plan, ops, crlf, bom):
    text, expected = plan
    if crlf:
        text = text.replace("\n", "\r\n")
    path = tmp_path / "MASTER_PLAN.md"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    ids = list(expected)
    for kind, index, status, number in ops:
        before = path.read_bytes()
        if kind == "meta":
            edit_plan(path, lambda e, n=number: e.set_meta("total_ticks", str(n)))
        elif not ids:
            continue
        else:
            tid = ids[index % len(ids)]
            if kind == "status":
                edit_plan(path, lambda e, t=tid, s=status: e.set_status(t, s))
                expected[tid] = (status, expected[tid][1])
            elif kind == "retries":
                edit_plan(path, lambda e, t=tid, n=number: e.set_field(t, "retries", str(n)))
                expected[tid] = (expected[tid][0], number)
            else:
                edit_plan(path, lambda e, t=tid, n=number: e.set_field(t, "reason", f"because {n}"))
        after = path.read_bytes()
        old, new = _diff_window(before.splitlines(keepends=True), after.splitlines(keepends=True))
        assert len(old) <= 1 and len(new) <= 1, (old, new)
        assert after.startswith(b"\xef\xbb\xbf") == bom
        assert (b"\r\n" in after) == crlf or not ids
        if crlf:
            assert after.count(b"\n") == after.count(b"\r\n")
    parsed = parse_plan(path)
    assert {t.id: (t.status, t.retries) for t in parsed.tasks} == expected
    assert "T-999" not in parsed.by_id
    assert parsed.plan_errors == ()


def test_a_field_is_added_with_the_tasks_own_indent_and_a_space_after_a_bare_colon(tmp_path):
    text = ("# MASTER_PLAN: p\n\n## Meta\n\n## Phase 1: A\n\n- [ ] T-1 Tabs\n\t- verify: `true`\n\t- retries:2\n"
            "- [ ] T-2 Four spaces, the last line without a newline\n    - verify: `true`")
    path = _write(tmp_path, text)
    said = []
    edit_plan(path, lambda e: said.extend([e.set_field("T-1", "reason", "r"), e.set_field("T-1", "retries", "3"),
                                           e.set_field("T-2", "reason", "s"), e.set_repeated("T-1", "accept", ["a"]),
                                           e.set_repeated("T-2", "accept", ["b", "c"]),
                                           e.set_repeated("T-2", "accept", ["b", "c"])]))
    assert said == [True, True, True, True, True, False]
    assert path.read_text() == (
        "# MASTER_PLAN: p\n\n## Meta\n\n## Phase 1: A\n\n- [ ] T-1 Tabs\n\t- verify: `true`\n\t- retries: 3\n"
        "\t- reason: r\n\t- accept: a\n- [ ] T-2 Four spaces, the last line without a newline\n    - verify: `true`\n"
        "    - reason: s\n    - accept: b\n    - accept: c\n")


def test_a_task_without_fields_gets_its_first_two_spaces_in(tmp_path):
    path = _write(tmp_path, "# MASTER_PLAN: p\n\n## Phase 1: A\n- [ ] T-1 Bare\n- [ ] T-2 Next\n")
    edit_plan(path, lambda e: (e.set_field("T-1", "verify", "`true`"), e.set_repeated("T-2", "accept", ["x"])))
    assert path.read_text() == "# MASTER_PLAN: p\n\n## Phase 1: A\n- [ ] T-1 Bare\n  - verify: `true`\n- [ ] T-2 Next\n" \
                               "  - accept: x\n"


def test_inline_retries_said_unchanged_when_the_same_and_an_accept_is_never_replaced_by_set_field(tmp_path):
    path = _write(tmp_path, VARIANTS)
    before = path.read_bytes()
    said = []
    edit_plan(path, lambda e: said.extend([e.set_field("T-2", "retries", "5"), e.set_field("T-2", "reason", "why"),
                                           e.set_field("T-2", "retries", "6")]))
    assert said == [False, True, True]
    assert path.read_text().splitlines()[14:18] == ["- [!] `T-2` [MODULE:ui] Blocked one [retries: 6]",
                                                     "    - verify: ``echo `quoted` ``", "    - context_files: []",
                                                     "    - reason: why"]
    path.write_bytes(before)
    edit_plan(path, lambda e: e.set_field("T-3", "accept", "three"))
    assert parse_plan(path).task("T-3").accept == ("one", "two", "three")


def test_a_title_given_to_a_task_that_had_none(tmp_path):
    path = _write(tmp_path, "# MASTER_PLAN: p\n\n## Phase 1: A\n- [ ] T-1\n  - verify: `true`\n- [ ] `T-2`:\n")
    edit_plan(path, lambda e: (e.set_title("T-1", "Now named"), e.set_title("T-2", "Named too")))
    assert path.read_text().splitlines()[3:6] == ["- [ ] T-1 Now named", "  - verify: `true`", "- [ ] `T-2`: Named too"]


def test_an_unknown_status_is_refused_and_nothing_is_written(tmp_path):
    path = _write(tmp_path, TWO_TASKS)
    with pytest.raises(ValueError, match="unknown status 'y'"):
        set_status(path, "T-2", "y")
    assert path.read_text() == TWO_TASKS


def test_an_empty_plan_is_refused_and_errors_name_the_plan_as_a_person_finds_it(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "MASTER_PLAN.md").write_bytes(b"")
    with pytest.raises(MementoError, match="plan not found or empty"):
        set_status(docs / "MASTER_PLAN.md", "T-1", "x")
    assert (docs / "MASTER_PLAN.md").read_bytes() == b""
    (docs / "MASTER_PLAN.md").write_text(TWO_TASKS)
    with pytest.raises(EditConflict) as conflict:
        set_status(docs / "MASTER_PLAN.md", "T-9", "x")
    assert str(conflict.value).startswith("docs/MASTER_PLAN.md: task T-9 is not in the plan")
    for other in (tmp_path / "MASTER_PLAN.md", docs / "PLAN.md", tmp_path / "notdocs" / "MASTER_PLAN.md"):
        other.parent.mkdir(exist_ok=True)
        other.write_text(TWO_TASKS)
        with pytest.raises(EditConflict) as conflict:
            set_status(other, "T-9", "x")
        assert str(conflict.value).startswith(f"{other}: task T-9")


@pytest.mark.parametrize("text, expected", [
    ("# MASTER_PLAN: p", "# MASTER_PLAN: p\n\n## Meta\n- tick_mode: paused\n\n"),
    ("Prose first.\n## Phase 1: A\n", "## Meta\n- tick_mode: paused\n\nProse first.\n## Phase 1: A\n"),
    ("Prose\n# Title\n## Phase 1: A\n", "Prose\n# Title\n\n## Meta\n- tick_mode: paused\n\n## Phase 1: A\n"),
])
def test_a_meta_section_goes_below_the_title_or_at_the_top(tmp_path, text, expected):
    path = _write(tmp_path, text)
    assert set_meta(path, "tick_mode", "paused").meta.tick_mode == "paused"
    assert path.read_text() == expected


def test_a_meta_value_without_a_space_after_its_colon_gets_one_and_the_same_value_writes_nothing(tmp_path):
    path = _write(tmp_path, "# MASTER_PLAN: p\n\n## Meta\n- tick_mode:auto\n- max_retries: 3 <!-- c -->\n")
    said = []
    edit_plan(path, lambda e: said.extend([e.set_meta("max_retries", "3"), e.set_meta("tick_mode", "paused"),
                                           e.set_meta("total_ticks", "1")]))
    assert said == [False, True, True]
    assert path.read_text() == "# MASTER_PLAN: p\n\n## Meta\n- tick_mode: paused\n- max_retries: 3 <!-- c -->\n" \
                               "- total_ticks: 1\n"


def test_the_counters_leave_skipped_tasks_out_and_count_done_ones(tmp_path):
    text = ("# MASTER_PLAN: p\n\n## Meta\n- total_tasks: 9\n- completed_tasks: 9\n\n## Phase 1: A\n"
            "- [x] T-1 a\n- [-] T-2 b\n- [ ] T-3 c\n- [!] T-4 d\n- [x] T-5 e\n")
    path = _write(tmp_path, text)
    meta = edit_plan(path, lambda e: e.update_counters()).meta
    assert (meta.total_tasks, meta.completed_tasks, meta.total_ticks) == (4, 2, 0)
    assert "total_ticks" not in path.read_text()


def test_a_task_block_put_back_at_the_end_of_the_file_keeps_the_files_last_byte(tmp_path):
    old = "# MASTER_PLAN: t\n\n## Phase 1: One\n\n- [ ] T-1 First\n  - verify: `true`"
    path = _write(tmp_path, old.replace("`true`", "`false`").replace("[ ]", "[~]"))
    edit_plan(path, lambda e: e.replace_task_block("T-1", old.encode()))
    assert path.read_text() == old.replace("[ ]", "[~]")


def _tick_listening(plan: Path, reply: dict):
    """A stand-in for a running tick's receipt socket (SPEC §13) in the workspace of ``plan``
    (docs/MASTER_PLAN.md): it records each receipt a person's command announces with the plan's
    bytes at that moment, and answers ``reply``, once."""
    import json
    import socket
    import threading

    from memento_core.receipts import socket_name

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_name(plan.parent.parent))
    server.listen(1)
    heard: list[tuple[dict, bytes]] = []

    def serve() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    data += conn.recv(4096)
                heard.append((json.loads(data), plan.read_bytes()))
                conn.sendall(json.dumps(reply).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return heard, thread


@pytest.mark.parametrize("op", ["reset", "skip"])
def test_a_persons_reset_or_skip_is_announced_to_the_running_tick_before_the_plan_is_written(tmp_path, op):
    (tmp_path / "docs").mkdir()
    path = tmp_path / "docs" / "MASTER_PLAN.md"
    text = TWO_TASKS.replace("- [ ] `T-2`", "- [!] `T-2`")
    path.write_text(text)
    heard, thread = _tick_listening(path, {"ok": True})
    plan = reset_task(path, "T-2") if op == "reset" else skip_task(path, "T-2", "not  needed")
    thread.join(10)
    receipt = {"op": "reset", "task": "T-2"} if op == "reset" else {"op": "skip", "task": "T-2", "reason": "not needed"}
    assert heard == [(receipt, text.encode())]
    assert plan.task("T-2").status == (" " if op == "reset" else "-")
    heard, thread = _tick_listening(path, {"ok": False, "why": "the tick says no"})
    before = path.read_bytes()
    with pytest.raises(MementoError, match="refused: the tick says no; nothing was changed"):
        reset_task(path, "T-2") if op == "skip" else skip_task(path, "T-2", "after all")
    thread.join(10)
    assert len(heard) == 1 and path.read_bytes() == before


def test_each_edited_line_keeps_its_own_line_ending_in_a_file_of_mixed_endings(tmp_path):
    """A plan edited on two systems: the edit writes each line back with the ending it had."""
    data = (b"# MASTER_PLAN: p\n\n## Meta\n- tick_mode: auto\r\n\n## Phase 1: A\n"
            b"- [ ] T-1 a\r\n  - verify: `true`\n- [ ] T-2 b\n  - verify: `true`\r\n")
    path = tmp_path / "MASTER_PLAN.md"
    path.write_bytes(data)
    edit_plan(path, lambda e: (e.set_status("T-1", "x"), e.set_status("T-2", "~"), e.set_meta("tick_mode", "paused"),
                               e.set_field("T-2", "verify", "`false`")))
    assert path.read_bytes() == data.replace(b"[ ] T-1", b"[x] T-1").replace(b"[ ] T-2", b"[~] T-2").replace(
        b"auto\r\n", b"paused\r\n").replace(b"`true`\r\n", b"`false`\r\n")


def test_each_edit_says_whether_it_changed_the_plan():
    said = []
    before, after = edited(lambda e: said.extend([e.set_title("GH-1", "Old title"), e.set_title("GH-1", "New"),
                                                  e.remove_field("GH-1", "verify"), e.remove_field("GH-1", "verify"),
                                                  e.set_repeated("GH-1", "accept", ["one", "two"]),
                                                  e.set_status("T-2", "x"), e.set_status("T-2", "!")]))
    assert said == [False, True, True, False, False, False, True]
    task = parse_plan_text(after.decode("utf-8")).task("GH-1")
    assert (task.title, task.verify, task.accept) == ("New", None, ("one", "two"))


def test_accept_lines_added_to_the_last_task_of_a_file_without_a_last_newline():
    data = b"# MASTER_PLAN: p\n\n## Phase 1: A\n- [ ] T-1 x\n  - verify: `true`"
    editor = PlanEditor(decode(data, "plan"), "plan")
    assert editor.set_repeated("T-1", "accept", ["a", "b"])
    assert editor.doc.encode() == data + b"\n  - accept: a\n  - accept: b\n"


def test_a_meta_section_made_where_there_was_none_goes_below_the_first_title_and_says_it_changed(tmp_path):
    path = _write(tmp_path, "# MASTER_PLAN: p\n\n# Notes\n\n## Phase 1: A\n- [ ] T-1 a\n")
    said = []
    edit_plan(path, lambda e: said.append(e.set_meta("tick_mode", "paused")))
    assert said == [True]
    assert path.read_text() == ("# MASTER_PLAN: p\n\n## Meta\n- tick_mode: paused\n\n\n# Notes\n\n"
                                "## Phase 1: A\n- [ ] T-1 a\n")


def test_the_counters_are_written_when_they_are_0_and_the_meta_lacks_them(tmp_path):
    # Every task skipped: total_tasks 0 equals the default, and the line is written all the same.
    path = _write(tmp_path, "# MASTER_PLAN: p\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: A\n- [-] T-1 a\n  - reason: no\n")
    edit_plan(path, lambda e: e.update_counters())
    meta = path.read_text().split("## Phase 1")[0]
    assert "- total_tasks: 0\n" in meta and "- completed_tasks: 0\n" in meta


def test_a_skip_and_a_reset_of_a_skipped_task_recount_the_plan(tmp_path):
    path = _write(tmp_path, "# MASTER_PLAN: p\n\n## Meta\n- total_tasks: 3\n- completed_tasks: 1\n\n## Phase 1: A\n"
                            "- [x] T-1 a\n- [ ] T-2 b\n- [ ] T-3 c\n")
    skip_task(path, "T-2", "not needed")
    meta = parse_plan(path).meta
    assert (meta.total_tasks, meta.completed_tasks) == (2, 1)
    reset_task(path, "T-2")
    meta = parse_plan(path).meta
    assert (meta.total_tasks, meta.completed_tasks) == (3, 1)
