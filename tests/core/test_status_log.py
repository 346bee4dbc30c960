"""TICK_STATUS.md: parsing, formatting, locked appends, rotation without loss, races."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.durations import duration_or_none
from memento_core.errors import MementoError
from memento_core.status_log import (
    HEADER,
    SELF_COMMIT,
    TickEntry,
    _rotate_archive_step,
    append_entry,
    clean_block,
    clean_value,
    entries_with_commits,
    failed_attempts,
    format_entry,
    iter_status_archive,
    last_entry_for,
    parse_status,
    parse_status_text,
    rotate,
    with_commits,
)

SPEC_ENTRY = """\
## [2026-11-29T14:45:00Z] Tick #14
- **Task**: T-201 [MODULE:auth] Connect auth middleware to database
- **Status**: 🚫 BLOCKED (retry 3/3 — max_retries exceeded)
- **Verify Output**: `TypeError: pool.query is not a function` (exit code 1)
- **Duration**: 4m52s
- **Error Analysis**: the middleware imports `connection`, the module exports `pool`
- **Escalation**: ⚠️ NEEDS ARCHITECT ATTENTION
- **Files Modified**: (rolled back)
- **Log**: logs/tick_2026-11-29T144500Z.log
"""

SPEC_FIELDS = [
    ("Task", "T-201 [MODULE:auth] Connect auth middleware to database"),
    ("Status", "🚫 BLOCKED (retry 3/3 — max_retries exceeded)"),
    ("Verify Output", "`TypeError: pool.query is not a function` (exit code 1)"),
    ("Duration", "4m52s"),
    ("Error Analysis", "the middleware imports `connection`, the module exports `pool`"),
    ("Escalation", "⚠️ NEEDS ARCHITECT ATTENTION"),
    ("Files Modified", "(rolled back)"),
    ("Log", "logs/tick_2026-11-29T144500Z.log"),
]

ORIGINAL = """\
# TICK STATUS LOG

---

## [2025-01-15T14:35:00] Tick #012
- **Task**: T-101 [MODULE:database] Setup PostgreSQL schema
- **Status**: ✅ SUCCESS
- **Verify Output**: `PASS` (exit code 0)
- **Duration**: 2m18s
- **Files Modified**: src/db/schema.ts (+45 -0), src/db/migrations/001_init.sql (+23 -0)
- **Diff Size**: 68 lines
- **Git Commit**: `a3f7b2c` — "memento: complete T-101 database schema setup"

---

## [2025-01-15T14:35:00] Tick #012 (continued, tasks_this_tick: 2/2)
- **Task**: T-102 [MODULE:auth] Implement JWT token generation
- **Status**: ✅ SUCCESS
- **Verify Output**: `PASS` (exit code 0)
- **Duration**: 3m41s
- **Files Modified**: src/auth/jwt.ts (+67 -0), tests/auth/jwt.test.ts (+34 -0)
- **Diff Size**: 101 lines
- **Git Commit**: `b8e2d1f` — "memento: complete T-102 JWT token generation"

---

## [2025-01-15T14:40:00] Tick #013
- **Task**: T-201 [MODULE:auth] Connect auth middleware to database
- **Status**: ❌ FAILED (retry 2/3)
- **Verify Output**: `TypeError: pool.query is not a function` (exit code 1)
- **Duration**: 4m52s
- **Error Analysis**: DB module exports `pool` but middleware imports `connection`. Interface mismatch.
- **Files Modified**: (rolled back)
- **Git Commit**: (none — rollback)

---

## [2025-01-15T14:45:00] Tick #014
- **Task**: T-201 [MODULE:auth] Connect auth middleware to database
- **Status**: 🚫 BLOCKED (retry 3/3 — max_retries exceeded)
- **Verify Output**: Same error as Tick #013
- **Error Analysis**: Recurring interface mismatch. Likely needs Architect to update MODULE:database exports or redefine task scope.
- **Escalation**: ⚠️ NEEDS ARCHITECT ATTENTION
- **Files Modified**: (rolled back)

---
"""


def entry(n: int, task: str = "T-1", status: str = "❌ FAILED (retry 1/3)", **kw) -> str:
    fields = [("Task", f"{task} [MODULE:m] title {n}"), ("Status", status), ("Duration", "3s")]
    return format_entry(f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z", n, fields, **kw)


# --- parsing -----------------------------------------------------------------


def test_parse_spec_entry():
    (e,) = parse_status_text(SPEC_ENTRY)
    assert (e.line, e.timestamp, e.tick, e.continued, e.tasks_this_tick) == (
        1, "2026-11-29T14:45:00Z", 14, False, None,
    )
    assert list(e.fields) == SPEC_FIELDS
    assert e.task_id == "T-201"
    assert e.task_title == "Connect auth middleware to database"
    assert e.module == "auth"
    assert (e.status, e.is_event, e.retry) == ("BLOCKED", False, (3, 3))
    assert e.duration_seconds == 292
    assert e.log_path == "logs/tick_2026-11-29T144500Z.log"
    assert e.commit_sha is None
    assert e.error == "`TypeError: pool.query is not a function` (exit code 1)"
    assert e.field("verify output") == e.field("Verify Output")
    assert e.field("Nope", "dflt") == "dflt"


def test_parse_original_format():
    entries = parse_status_text(ORIGINAL)
    assert [(e.line, e.tick, e.continued, e.tasks_this_tick, e.status) for e in entries] == [
        (5, 12, False, None, "SUCCESS"),
        (16, 12, True, (2, 2), "SUCCESS"),
        (27, 13, False, None, "FAILED"),
        (38, 14, False, None, "BLOCKED"),
    ]
    assert [e.commit_sha for e in entries] == ["a3f7b2c", "b8e2d1f", None, None]
    assert entries[0].timestamp == "2025-01-15T14:35:00"
    assert entries[0].error is None  # success has no error
    assert entries[2].retry == (2, 3)
    assert entries[3].error == "Same error as Tick #013"


@pytest.mark.parametrize(
    ("event", "status"),
    [
        ("🔄 STALE — Stale [~] detected on T-201, reset to [ ]", "STALE"),
        ("❌ PLAN INVALID — docs/MASTER_PLAN.md:37: T-104 has no verify command", "PLAN INVALID"),
        ("⚠️ PIPELINE BLOCKED — Phase 2 has unresolved [!] tasks", "PIPELINE BLOCKED"),
        ("🎉 ALL TASKS COMPLETE", "ALL TASKS COMPLETE"),
        ("🔴 CIRCUIT BREAKER TRIGGERED — reason: 5 ticks without a pass", "CIRCUIT BREAKER"),
        ("⚠️ DIRTY TREE — uncommitted changes in src/app.py", "DIRTY TREE"),
        ("⚠️ INTERRUPTED — SIGTERM during T-3", "INTERRUPTED"),
        ("something new", "EVENT"),
    ],
)
def test_event_entries(event, status):
    text = format_entry("2026-11-29T14:45:00Z", 14, [("Event", event), ("Reason", "x")])
    (e,) = parse_status_text(text)
    assert (e.status, e.is_event, e.task_id) == (status, True, None)
    assert e.field("Event") == event


def test_status_keywords_without_event_field():
    def status_of(value: str) -> str:
        return parse_status_text(f"## [t] Tick #1\n- **Task**: T-1 x\n- **Status**: {value}\n")[0].status

    assert status_of("✅ SUCCESS") == "SUCCESS"
    assert status_of("FAILED (retry 1/3)") == "FAILED"
    assert status_of("❌ (retry 1/3)") == "FAILED"
    assert status_of("🚫 BLOCKED") == "BLOCKED"
    assert status_of("⚠️ PIPELINE BLOCKED") == "PIPELINE BLOCKED"
    assert status_of("⚠️ INTERRUPTED") == "INTERRUPTED"
    assert parse_status_text("## [t] Tick #1\n")[0].status == "EVENT"


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("✅ done", "SUCCESS"),  # the mark or the word, each alone
        ("SUCCESS (retry 2/3)", "SUCCESS"),
        ("❓ NEEDS INPUT", "NEEDS INPUT"),
        ("NEEDS INPUT — which database?", "NEEDS INPUT"),
        ("❓ which database?", "NEEDS INPUT"),
        ("which database? ❓", "EVENT"),  # the question mark counts only where the entry starts with it
        ("BLOCKED (retry 3/3)", "BLOCKED"),
        ("🚫 (retry 3/3 — max_retries exceeded)", "BLOCKED"),
    ],
)
def test_a_task_status_is_read_by_its_word_or_its_mark(value, status):
    (e,) = parse_status_text(f"## [t] Tick #1\n- **Task**: T-1 x\n- **Status**: {value}\n")
    assert (e.status, e.is_event) == (status, status == "EVENT")


def test_an_attempts_usage_is_read_back():
    (e,) = parse_status_text(format_entry("t", 1, [("Task", "T-1 x"), ("Status", "✅ SUCCESS"),
                                                   ("Usage", "12.3k in / 2.1k out tokens, $0.042")]))
    assert (e.usage.tokens_in, e.usage.tokens_out, e.usage.cost_usd) == (12300, 2100, 0.042)
    assert parse_status_text(entry(2))[0].usage is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("4m52s", 292), ("1h2m", 3720), ("38s", 38), ("0.4s", 0.4), ("5min", 300),
     ("250ms", 0.25), ("2 minutes 3 seconds", 123), ("12", 12), ("n/a", None)],
)
def test_parse_duration(text, seconds):
    assert duration_or_none(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_continuation_lines_and_error_tail_stay_in_value():
    text = """\
# TICK STATUS LOG

## [2026-01-01T00:00:00] Tick #3
- **Task**: `T-7`: [MODULE:x] Title
- **Error Analysis**: first line
  continued indented
lazy continuation
- **Error Tail**:
  ````
  ```
  ## [2099-01-01] Tick #99
  ---
  ```
  ````
- **Log**: `logs/tick_1.log`
<!-- a comment
## [1999-01-01] Tick #0
-->
- **Outputs**:
~~~
--- ~~~ is not closed by backticks ```
~~~

---
## Not an entry
- **Task**: T-8 ignored
"""
    (e,) = parse_status_text(text)
    assert e.task_id == "T-7" and e.task_title == "Title"
    assert e.field("Error Analysis") == "first line\ncontinued indented\nlazy continuation"
    assert e.error_tail == "```\n## [2099-01-01] Tick #99\n---\n```"
    assert e.log_path == "logs/tick_1.log"
    assert e.field("Outputs") == "--- ~~~ is not closed by backticks ```"


def test_fields_as_a_person_writes_them_by_hand():
    text = ("## [t] Tick #1\n* **Task:** T-1 [MODULE:m] by hand\n+ **Status** : 🚫 BLOCKED\n"
            "   - **Reason** the words after\n* a bullet goes on the reason\nx\n#2 also\n")
    (e,) = parse_status_text(text)
    assert e.fields == (("Task", "T-1 [MODULE:m] by hand"), ("Status", "🚫 BLOCKED"),
                        ("Reason", "the words after\n* a bullet goes on the reason\nx\n#2 also"))
    assert (e.task_id, e.module, e.status) == ("T-1", "m", "BLOCKED")


def test_an_indented_separator_or_heading_ends_an_entry_and_a_fence_before_any_field_is_no_value():
    text = ("## [t] Tick #1\n```\nnot a value\n```\n- **Task**: T-1 x\n   ---\nafter the separator\n"
            "## [t] Tick #2\n- **Task**: T-2 y\n   ## Notes by hand\n- **Reason**: not the entry's\n")
    first, second = parse_status_text(text)
    assert (first.fields, second.fields) == ((("Task", "T-1 x"),), (("Task", "T-2 y"),))


def test_a_fence_left_open_at_the_end_holds_the_rest_of_the_file():
    (e,) = parse_status_text("## [t] Tick #1\n- **Error Tail**:\n```\nhalf a tail\n## [t] Tick #2\n")
    assert e.fields == (("Error Tail", "half a tail\n## [t] Tick #2"),)
    (e,) = parse_status_text("## [t] Tick #1\n```\nno field to hold it\n")
    assert e.fields == ()


def test_missing_file_and_bad_utf8(tmp_path):
    assert parse_status(tmp_path / "missing.md") == []
    bad = tmp_path / "TICK_STATUS.md"
    bad.write_bytes(b"# TICK STATUS LOG\n\n## [x] Tick #1\n- **Task**: \xc3\x28\n")
    with pytest.raises(MementoError) as info:
        parse_status(bad)
    assert info.value.line == 4


def test_tick_entry_is_frozen():
    (e,) = parse_status_text(SPEC_ENTRY)
    assert isinstance(e, TickEntry)
    with pytest.raises(AttributeError):
        e.tick = 3  # type: ignore[misc]


# --- format_entry ----------------------------------------------------------------


def test_format_entry_matches_spec_text():
    assert format_entry("2026-11-29T14:45:00Z", 14, SPEC_FIELDS) == SPEC_ENTRY


def test_format_continued_and_error_tail():
    text = format_entry(
        "2026-11-29T14:45:00Z", 14, [("Task", "T-2 x"), ("Status", "❌ FAILED (retry 1/3)")],
        continued=(2, 2), error_tail="E   assert 1 == 2\n",
    )
    assert text == (
        "## [2026-11-29T14:45:00Z] Tick #14 (continued, tasks_this_tick: 2/2)\n"
        "- **Task**: T-2 x\n- **Status**: ❌ FAILED (retry 1/3)\n"
        "- **Error Tail**:\n```\nE   assert 1 == 2\n```\n"
    )
    (e,) = parse_status_text(text)
    assert (e.continued, e.tasks_this_tick, e.error_tail) == (True, (2, 2), "E   assert 1 == 2")
    assert e.error == "E   assert 1 == 2"  # no Verify Output: the tail's last line


def test_a_continued_heading_says_which_task_of_how_many():
    text = format_entry("t", 9, [("Task", "T-3 x")], continued=(1, 3))
    assert text.startswith("## [t] Tick #9 (continued, tasks_this_tick: 1/3)\n")
    assert parse_status_text(text)[0].tasks_this_tick == (1, 3)


HOSTILE_VALUES = [
    "[x] done [bold red]markup[/] [b]",
    "---",
    "## [2026-01-01T00:00:00Z] Tick #99",
    "```python\nprint('x')\n```",
    "\x1b[31mred\x1b[0m \x1b]0;title\x07 bell\x07 nul\x00",
    "multi\nline\r\nvalue\u2028sep",
    "emoji 🎉🚫✅ **bold**: not a field",
    "<!-- opens a comment",
    "- **Fake**: field",
    "",
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_hostile_values_do_not_break_parsing(value):
    text = format_entry("2026-01-01T00:00:00Z", 5, [("Task", "T-1 t"), ("Verify Output", value)],
                        error_tail=value)
    followed = text + "\n---\n\n" + entry(6)
    first, second = parse_status_text(followed)
    assert first.field("Verify Output") == clean_value(value)
    assert "\n" not in first.field("Verify Output")
    assert "\x1b" not in text and "\x00" not in text and "\x07" not in text
    assert first.error_tail == (clean_block(value) or None)
    assert second.tick == 6


def test_error_tail_fence_is_longer_than_any_backtick_run():
    tail = "a ``` b\n`````\nc ````````"
    text = format_entry("t", 1, [], error_tail=tail)
    assert "\n`````````\n" in text  # nine backticks: one more than the longest run
    assert parse_status_text(text)[0].error_tail == tail


def test_format_entry_rejects_bad_field_names():
    with pytest.raises(ValueError):
        format_entry("t", 1, [("**", "x")])
    assert parse_status_text(format_entry("t", 1, [("We*ird:", "v")]))[0].fields == (("Weird", "v"),)


_hostile_text = st.lists(
    st.sampled_from(list("`~#-*[]<!>\\: \tab\n\r\x1b\x00\x07\u2028é🎉")
                    + ["```", "---", "## [", "- **", "<!--", "-->", "Tick #"]),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.tuples(st.sampled_from(["Task", "Status", "Verify Output", "Log", "X"]),
                              _hostile_text), max_size=5),
    tail=st.none() | _hostile_text,
    stamp=_hostile_text,
)
def test_property_format_then_parse(values, tail, stamp):
    text = format_entry(stamp, 7, values, error_tail=tail)
    entries = parse_status_text(text + "\n---\n\n" + entry(8))
    assert len(entries) == 2
    first = entries[0]
    expected = [(name, clean_value(v)) for name, v in values]
    cleaned_tail = clean_block(tail) if tail else ""
    if cleaned_tail:
        expected.append(("Error Tail", cleaned_tail))
    assert list(first.fields) == expected
    assert first.tick == 7


# --- append_entry ----------------------------------------------------------------


def test_append_creates_file_with_header(tmp_path):
    path = tmp_path / "docs" / "TICK_STATUS.md"
    append_entry(path, SPEC_ENTRY)
    assert path.read_text() == f"{HEADER}\n\n{SPEC_ENTRY}"
    append_entry(path, entry(2))
    assert path.read_text() == f"{HEADER}\n\n{SPEC_ENTRY}\n---\n\n{entry(2)}"
    assert [e.tick for e in parse_status(path)] == [14, 2]


@pytest.mark.parametrize(("crlf", "bom"), [(True, False), (True, True), (False, True)])
def test_append_keeps_every_existing_byte(tmp_path, crlf, bom):
    path = tmp_path / "TICK_STATUS.md"
    text = ORIGINAL.replace("\n", "\r\n") if crlf else ORIGINAL
    before = (("\ufeff" if bom else "") + text).encode()
    path.write_bytes(before)
    append_entry(path, entry(1))
    after = path.read_bytes()
    assert after.startswith(before)
    added = after[len(before) :]
    if crlf:
        assert b"\n" not in added.replace(b"\r\n", b"")
    # ORIGINAL ends with a separator already: no second one
    assert added.count(b"---") == 0
    assert [e.tick for e in parse_status(path)] == [12, 12, 13, 14, 1]


def test_append_adds_separator_and_newline_when_missing(tmp_path):
    path = tmp_path / "s.md"
    path.write_bytes(b"# TICK STATUS LOG\n\n## [t] Tick #1\n- **Task**: T-1 x")
    append_entry(path, "\n\n" + entry(2) + "\n---\n")
    assert path.read_bytes() == (
        b"# TICK STATUS LOG\n\n## [t] Tick #1\n- **Task**: T-1 x\n\n---\n\n" + entry(2).encode()
    )


def test_append_adds_missing_header_and_closes_a_hand_left_fence(tmp_path):
    path = tmp_path / "s.md"
    path.write_text("## [t] Tick #1\n- **Error Tail**:\n```\nhalf a tail\n")
    append_entry(path, entry(2))
    text = path.read_text()
    assert text.startswith(f"{HEADER}\n\n## [t] Tick #1\n- **Error Tail**:\n```\nhalf a tail\n```\n")
    assert [e.tick for e in parse_status(path)] == [1, 2]


def test_append_closes_a_comment_a_hand_left_open(tmp_path):
    path = tmp_path / "s.md"
    path.write_text(f"{HEADER}\n\n## [t] Tick #1\n- **Task**: T-1 x\n<!-- a person's note, never closed\n")
    append_entry(path, entry(2))
    assert path.read_text() == (f"{HEADER}\n\n## [t] Tick #1\n- **Task**: T-1 x\n<!-- a person's note, never closed\n"
                                f"-->\n\n---\n\n{entry(2)}")
    assert [e.tick for e in parse_status(path)] == [1, 2]


def test_append_refuses_text_that_is_not_an_entry(tmp_path):
    with pytest.raises(ValueError):
        append_entry(tmp_path / "s.md", "just words\n")
    assert not (tmp_path / "s.md").exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 5), crlf=st.booleans(), bom=st.booleans(), tail=st.none() | _hostile_text)
def test_property_append_keeps_prefix_and_parses(n, crlf, bom, tail):
    nl = "\r\n" if crlf else "\n"
    body = f"{HEADER}\n\n" + "\n---\n\n".join(entry(i, error_tail=tail) for i in range(n))
    before = (("\ufeff" if bom else "") + body.replace("\n", nl)).encode()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "TICK_STATUS.md"
        path.write_bytes(before)
        old = parse_status(path)
        append_entry(path, entry(100, error_tail=tail))
        after = path.read_bytes()
        assert after.startswith(before)
        new = parse_status(path)
        assert new[:-1] == old and new[-1].tick == 100
        assert len(new) == n + 1


# --- queries -------------------------------------------------------------------


def test_last_entry_and_failed_attempts():
    log = "\n---\n\n".join([
        entry(1, "T-1", "❌ FAILED (retry 1/3)"),
        entry(2, "T-1", "✅ SUCCESS"),
        entry(3, "T-2", "❌ FAILED (retry 1/3)"),
        entry(4, "T-1", "❌ FAILED (retry 1/3)"),
        format_entry("t", 5, [("Event", "🔄 STALE — Stale [~] detected on T-1, reset to [ ]")]),
        entry(6, "T-1", "🚫 BLOCKED (retry 3/3)"),
    ])
    entries = parse_status_text(log)
    assert [e.tick for e in failed_attempts(entries, "T-1")] == [4, 6]
    assert [e.tick for e in failed_attempts(entries, "T-2")] == [3]
    assert failed_attempts(entries, "T-9") == []
    assert last_entry_for(entries, "T-1").tick == 6
    assert last_entry_for(entries, "T-9") is None


def test_parse_five_thousand_entries(tmp_path):
    path = tmp_path / "TICK_STATUS.md"
    body = "\n---\n\n".join(
        entry(i, f"T-{i % 50}", error_tail=f"Traceback\n## [fake] Tick #{i}\n---\nE {i}")
        for i in range(5000)
    )
    path.write_text(f"{HEADER}\n\n{body}")
    entries = parse_status(path)
    assert len(entries) == 5000
    assert [e.tick for e in entries] == list(range(5000))
    assert entries[4321].error_tail == "Traceback\n## [fake] Tick #4321\n---\nE 4321"



# --- the commit that adds an entry ------------------------------------------------


def _commit(root: Path, message: str) -> str:
    subprocess.run(["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", message], check=True)
    return subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_commit_that_adds_an_entry_is_named_by_its_trailer(repo, git_identity):
    """Only an entry that says SELF_COMMIT is resolved, by its own tick and task, and only its
    Git Commit changes; an entry naming its sha already, an event, or a tick without a commit stay."""
    own = _commit(repo, "memento: complete T-1 one\n\nMemento-Tick: 3 T-1")
    other = _commit(repo, "memento: complete T-2 two\n\nMemento-Tick: 4 T-2")
    said = SELF_COMMIT + ' — "memento: complete T-1 one"'
    log = "\n---\n\n".join([
        format_entry("t3", 3, [("Task", "T-1 one"), ("Status", "✅ SUCCESS"), ("Git Commit", said),
                               ("Duration", "3s")]),
        format_entry("t4", 4, [("Task", "T-2 two"), ("Status", "✅ SUCCESS"), ("Git Commit", "`abc1234`")]),
        format_entry("t5", 5, [("Event", "🎉 ALL TASKS COMPLETE"), ("Git Commit", SELF_COMMIT)]),
        format_entry("t6", 6, [("Task", "T-3 three"), ("Status", "✅ SUCCESS"), ("Git Commit", SELF_COMMIT)]),
        format_entry("t7", 7, [("Task", "T-1 one"), ("Status", "❌ FAILED (retry 1/3)")]),
    ])
    entries = parse_status_text(log)
    resolved = entries_with_commits(repo, iter(entries))
    assert resolved[0].fields == (("Task", "T-1 one"), ("Status", "✅ SUCCESS"),
                                  ("Git Commit", f'`{own}` — "memento: complete T-1 one"'), ("Duration", "3s"))
    assert resolved[0].commit_sha == own != other
    assert resolved[1:] == entries[1:]
    assert entries_with_commits(repo, entries[:2]) == resolved[:2]  # one entry alone needs a sha
    assert with_commits(entries, {(3, "T-1"): "1234567"})[0].commit_sha == "1234567"
    assert with_commits(entries, {(4, "T-2"): "1234567", (6, "T-4"): "1234567", (7, "T-1"): "1234567"}) == entries


def test_entries_without_the_commit_that_adds_them_are_returned_as_they_are(tmp_path):
    """No entry needs a sha: no git is asked (tmp_path is no repository) and the entries come back."""
    entries = parse_status_text(entry(1) + "\n---\n\n" + format_entry("t", 2, [("Git Commit", "`abc1234`")]))
    assert entries_with_commits(tmp_path / "gone", iter(entries)) == entries


# --- rotation ------------------------------------------------------------------


def _blocks(entries: list[TickEntry]) -> list[tuple]:
    return [(e.timestamp, e.tick, e.continued, e.fields) for e in entries]


def _fill(path: Path, ticks: range) -> None:
    for i in ticks:
        append_entry(path, entry(i, error_tail="err ```x```\n---"))


def test_rotate_moves_oldest_and_keeps_half(tmp_path):
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "logs" / "status_archive"
    _fill(path, range(50))
    assert rotate(path, archive, 50) is None  # not over the limit
    assert not archive.exists()
    _fill(path, range(50, 61))
    original = parse_status(path)
    written = rotate(path, archive, 50)
    assert written is not None and written.parent == archive
    assert written.name == "TICK_STATUS_2026-01-01T00-00-00Z_2026-01-01T00-00-35Z.md"
    remaining = parse_status(path)
    assert [e.tick for e in remaining] == list(range(36, 61))  # newest 50 // 2 stay
    assert _blocks(iter_status_archive(archive) + remaining) == _blocks(original)
    assert path.read_text().startswith(f"{HEADER}\n\n## [")
    assert rotate(path, archive, 50) is None


def test_the_smallest_rotation_moves_one_entry_and_a_file_under_the_limit_is_not_rewritten(tmp_path):
    """max_entries 1 over two entries moves exactly the first; under the limit, nothing is
    written at all (the same inode: a dashboard watching the file sees no change)."""
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(1))
    inode = path.stat().st_ino
    assert rotate(path, archive, 1) is None
    assert path.stat().st_ino == inode and not archive.exists()
    _fill(path, range(1, 2))
    written = rotate(path, archive, 1)
    assert written is not None
    assert [e.tick for e in iter_status_archive(archive)] == [0]
    assert [e.tick for e in parse_status(path)] == [1]

def test_rotate_keeps_preamble_and_crlf(tmp_path):
    path, archive = tmp_path / "s.md", tmp_path / "a"
    pre = "\ufeff# TICK STATUS LOG\r\n\r\n<!-- written by memento -->\r\n\r\n---\r\n\r\n"
    body = "\r\n---\r\n\r\n".join(entry(i).replace("\n", "\r\n") for i in range(6))
    path.write_bytes((pre + body).encode())
    rotate(path, archive, 4)
    data = path.read_bytes().decode()
    assert data.startswith(pre)
    assert data == pre + "\r\n---\r\n\r\n".join(entry(i).replace("\n", "\r\n") for i in range(4, 6))
    assert [e.tick for e in iter_status_archive(archive)] == [0, 1, 2, 3]


def test_rotate_crash_after_archive_write_then_rerun(tmp_path):
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(60))
    original = parse_status(path)
    crashed = _rotate_archive_step(path, archive, 50)  # archive written, status untouched
    assert crashed is not None and crashed.exists()
    assert parse_status(path) == original
    assert rotate(path, archive, 50) == crashed  # completes the interrupted rotation
    assert sorted(archive.iterdir()) == [crashed]
    assert _blocks(iter_status_archive(archive) + parse_status(path)) == _blocks(original)


def test_rotate_killed_between_its_two_writes_then_rerun(tmp_path):
    """A real kill -9 at rotate's crash point (the archive written, the status file not yet)."""
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(6))
    before = path.read_bytes()
    script = ("import sys; from pathlib import Path; from memento_core.status_log import rotate\n"
              "rotate(Path(sys.argv[1]), Path(sys.argv[2]), 4)\n")
    killed = subprocess.run([sys.executable, "-c", script, str(path), str(archive)], timeout=60,
                            cwd=Path(__file__).resolve().parents[2],  # memento_core importable
                            env={**os.environ, "MEMENTO_CRASH_AT": "rotate:after-archive"})
    assert killed.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    (written,) = archive.iterdir()
    assert rotate(path, archive, 4) == written
    assert [e.tick for e in iter_status_archive(archive) + parse_status(path)] == list(range(6))


def test_rotate_crash_then_appends_then_rerun(tmp_path):
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(51))
    _rotate_archive_step(path, archive, 50)
    _fill(path, range(51, 53))  # ticks keep appending before the next rotate
    rotate(path, archive, 50)
    all_entries = iter_status_archive(archive) + parse_status(path)
    assert [e.tick for e in all_entries] == list(range(53))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    max_entries=st.integers(1, 8),
    plan=st.lists(st.tuples(st.integers(1, 6), st.booleans(), st.booleans()), min_size=1, max_size=12),
)
def test_property_rotation_never_loses_or_doubles(max_entries, plan):
    """Append, sometimes crash half way through a rotation, rotate: every entry exactly once."""
    with tempfile.TemporaryDirectory() as d:
        path, archive = Path(d) / "TICK_STATUS.md", Path(d) / "archive"
        tick = 0
        for appends, crash, crash_twice in plan:
            _fill(path, range(tick, tick + appends))
            tick += appends
            if crash:
                _rotate_archive_step(path, archive, max_entries)
                if crash_twice:
                    _rotate_archive_step(path, archive, max_entries)
                # mid-rotation the archive may repeat leading entries; nothing is missing
                ticks = [e.tick for e in iter_status_archive(archive) + parse_status(path)]
                assert set(ticks) == set(range(tick))
            else:
                rotate(path, archive, max_entries)
                all_entries = iter_status_archive(archive) + parse_status(path)
                assert [e.tick for e in all_entries] == list(range(tick))
        rotate(path, archive, max_entries)
        assert len(parse_status(path)) <= max_entries
        assert [e.tick for e in iter_status_archive(archive) + parse_status(path)] == list(range(tick))


def test_a_limit_of_one_keeps_the_newest_entry(tmp_path):
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(3))
    rotate(path, archive, 1)
    assert [e.tick for e in parse_status(path)] == [2]
    assert [e.tick for e in iter_status_archive(archive)] == [0, 1]


@pytest.mark.parametrize(("taken", "written"), [(1, "_2"), (2, "_3")])
def test_a_different_file_under_the_archives_name_is_never_overwritten(tmp_path, taken, written):
    """A person's file under the archive's name, and a link under its next name: each left as it
    was, the archive written under the first name free."""
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    name = "TICK_STATUS_2026-01-01T00-00-00Z_2026-01-01T00-00-01Z"
    archive.mkdir()
    (archive / f"{name}.md").write_text("a person's file\n")
    if taken == 2:
        (archive / f"{name}_2.md").symlink_to(path)
    _fill(path, range(3))
    assert rotate(path, archive, 2) == archive / f"{name}{written}.md"
    assert (archive / f"{name}.md").read_text() == "a person's file\n"
    if taken == 2:
        assert os.readlink(archive / f"{name}_2.md") == str(path)
    assert [e.tick for e in parse_status(archive / f"{name}{written}.md")] == [0, 1]
    assert [e.tick for e in parse_status(path)] == [2]


def test_an_archive_under_the_first_stamp_with_other_text_is_not_taken_for_this_files(tmp_path):
    """After an interrupted rotation a person corrected an entry by hand: the archive no longer
    holds the file's leading entries, so none is dropped as archived (the next rotation archives
    the corrected text anew)."""
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(6))
    crashed = _rotate_archive_step(path, archive, 4)
    path.write_text(path.read_text().replace("title 1", "title 1, corrected"))
    before = path.read_bytes()
    assert rotate(path, archive, 6) is None
    assert path.read_bytes() == before
    written = rotate(path, archive, 4)
    assert written not in (None, crashed)
    assert [e.task_title for e in parse_status(written)][:2] == ["title 0", "title 1, corrected"]


def test_an_interrupted_rotation_whose_kept_entries_a_person_removed_completes(tmp_path):
    """Every entry left in the file is in the interrupted rotation's archive: they are dropped as
    archived (not looked past the last one), nothing lost or doubled."""
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(6))
    crashed = _rotate_archive_step(path, archive, 4)
    text = path.read_text()
    path.write_text(text[: text.index("## [2026-01-01T00:00:04Z]")])  # entries 4 and 5 removed by hand
    assert rotate(path, archive, 4) == crashed
    assert parse_status(path) == []
    assert [e.tick for e in iter_status_archive(archive)] == [0, 1, 2, 3]


def test_of_two_copies_of_an_interrupted_rotations_archive_the_first_completes_it(tmp_path):
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(6))
    crashed = _rotate_archive_step(path, archive, 4)
    copy = crashed.with_name(crashed.stem + "_copy.md")
    copy.write_bytes(crashed.read_bytes())
    _fill(path, range(6, 7))
    assert rotate(path, archive, 4) == crashed
    assert [e.tick for e in parse_status(path)] == [4, 5, 6]


@pytest.mark.parametrize("leads_to", ["the status file", "a copy outside"])
def test_a_link_in_the_archive_is_never_taken_for_entries_archived(tmp_path, leads_to):
    """A link named as an interrupted rotation's archive (the first entry's stamp), leading to the
    status file itself or to a copy of it elsewhere: rotation reads no archive through a link, so
    no entry is dropped as archived (through the link to the status file, every one was lost)."""
    path, archive = tmp_path / "TICK_STATUS.md", tmp_path / "archive"
    _fill(path, range(4))
    before = path.read_bytes()
    target = path
    if leads_to == "a copy outside":
        target = tmp_path / "elsewhere" / "copy.md"
        target.parent.mkdir()
        target.write_bytes(before)
    archive.mkdir()
    link = archive / "TICK_STATUS_2026-01-01T00-00-00Z_2026-01-01T00-00-03Z.md"
    link.symlink_to(target)
    assert rotate(path, archive, 50) is None
    assert path.read_bytes() == before
    assert rotate(path, archive, 2) != link
    assert [e.tick for e in parse_status(path)] == [3]
    assert [e.tick for e in parse_status(target)] == ([3] if leads_to == "the status file" else [0, 1, 2, 3])
    assert [p.name for p in sorted(archive.iterdir()) if not p.is_symlink()] == [
        "TICK_STATUS_2026-01-01T00-00-00Z_2026-01-01T00-00-02Z.md"]
    assert os.readlink(link) == str(target)
    # Nor read as an archive by what shows the history (the architect's and reviewer's prompts,
    # `memento tasks`): the status file's entries, or the copy's, are not shown a second time.
    assert [e.tick for e in iter_status_archive(archive)] == [0, 1, 2]


def test_rotate_rejects_nonsense_limit(tmp_path):
    path = tmp_path / "s.md"
    _fill(path, range(3))
    with pytest.raises(ValueError):
        rotate(path, tmp_path / "a", 0)


def test_iter_status_archive_missing_dir(tmp_path):
    assert iter_status_archive(tmp_path / "none") == []


# --- races ---------------------------------------------------------------------


def _append_many(path: str, worker: int, count: int) -> None:
    for i in range(count):
        append_entry(Path(path), format_entry(f"w{worker}", worker * 1000 + i,
                                              [("Task", f"T-{worker} x"), ("Status", "✅ SUCCESS")]))


def test_two_processes_appending_concurrently(tmp_path):
    path = tmp_path / "TICK_STATUS.md"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(path), w, 100)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    ticks = [e.tick for e in parse_status(path)]
    assert sorted(ticks) == sorted(w * 1000 + i for w in (1, 2) for i in range(100))
    for w in (1, 2):
        assert [t for t in ticks if t // 1000 == w] == [w * 1000 + i for i in range(100)]
    assert path.read_text().count("\n---\n") == 199
