"""Property tests: for generated plans and random edit sequences, only the edited line changes."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.plan.edits import edit_plan
from memento_core.plan.model import _FIELD_FIND, unquote
from memento_core.plan.scan import parse_plan

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


# The task field reader as it was first written (lazy value): the greedy one in plan.py must read
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
