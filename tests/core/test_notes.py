"""HUMAN_NOTES.md: parsing, locked minimal edits, round trips and races."""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.errors import MementoError
from memento_core.notes import (
    ANSWER,
    Note,
    add_note,
    archive_read,
    clean_note_text,
    mark_read,
    notes_for_task,
    parse_notes,
    parse_notes_text,
    unread_older_than,
)

SPEC_EXAMPLE = """\
# HUMAN NOTES

## Active Notes

### [NOTE] 2026-11-29T15:00:00 → T-201
Use Redis for sessions instead of PostgreSQL; see redis.conf.

### [NOTE:READ] 2026-11-29T14:00:00 → T-102
Read JWT_SECRET from the environment, never hard-code it.

---

## Archive
"""

NOW = datetime(2026, 11, 29, 16, 0, 0, tzinfo=UTC)


def write(path: Path, text: str, *, crlf: bool = False, bom: bool = False) -> bytes:
    if crlf:
        text = text.replace("\n", "\r\n")
    data = (("\ufeff" if bom else "") + text).encode("utf-8")
    path.write_bytes(data)
    return data


# --- parsing -----------------------------------------------------------------


def test_parse_spec_example():
    notes = parse_notes_text(SPEC_EXAMPLE)
    assert [(n.line, n.timestamp, n.target, n.read, n.archived) for n in notes] == [
        (5, "2026-11-29T15:00:00", "T-201", False, False),
        (8, "2026-11-29T14:00:00", "T-102", True, False),
    ]
    assert notes[0].text == "Use Redis for sessions instead of PostgreSQL; see redis.conf."
    assert not notes[0].is_global


def test_parse_original_format_with_comments_and_archive():
    text = """\
# HUMAN NOTES

<!-- 格式：每条批注带时间戳和目标（global / 具体 Task ID） -->
<!-- Worker 执行完相关批注后，将 [NOTE] 改为 [NOTE:READ] -->

## Active Notes

### [NOTE] 2025-01-15T15:10:00 → global
暂停 Phase 3 的所有任务，等 Phase 2 全部稳定再说。

---

## Archive
<!-- Architect 把已处理的批注移到这里 -->

### [NOTE:READ] 2025-01-14T09:00:00 → T-101
old one
"""
    notes = parse_notes_text(text)
    assert [(n.target, n.read, n.archived) for n in notes] == [
        ("global", False, False),
        ("T-101", True, True),
    ]
    assert notes[0].is_global
    assert notes[0].text == "暂停 Phase 3 的所有任务，等 Phase 2 全部稳定再说。"
    assert notes[1].text == "old one"


@pytest.mark.parametrize(
    ("heading", "stamp", "target", "read"),
    [
        ("### [NOTE] 2026-11-29T15:00:00 -> T-201", "2026-11-29T15:00:00", "T-201", False),
        ("### [NOTE] 2026-11-29T15:00", "2026-11-29T15:00:00", "global", False),
        ("### [NOTE] 2026-11-29T15:00:00Z → global", "2026-11-29T15:00:00", "global", False),
        ("### [NOTE] 2026-11-29 15:00 → AUTH-7", "2026-11-29T15:00:00", "AUTH-7", False),
        ("### [note:read] 2026-11-29T15:00:00 → T-9 <!-- done -->", "2026-11-29T15:00:00", "T-9", True),
        ("### [NOTE] 2026-11-29T17:00:00+02:00 → `T-3`", "2026-11-29T15:00:00", "T-3", False),
        ("### [NOTE] → T-4", "", "T-4", False),
        ("### [NOTE]", "", "global", False),
        ("### [NOTE] 2026-11-29T15:00:00 T-5", "2026-11-29T15:00:00", "T-5", False),
        ("### [NOTE] 2026-11-29 15:00 T-6", "2026-11-29T15:00:00", "T-6", False),
        ("### [NOTE] 2026-11-29 15:00", "2026-11-29T15:00:00", "global", False),
        # a date Python reads but the note format does not: kept as written, never a date
        ("### [NOTE] 20261129 → T-7", "20261129", "T-7", False),
        # the first arrow splits; a second one is part of the target
        ("### [NOTE] 2026-11-29T15:00:00 → T-8 → later", "2026-11-29T15:00:00", "T-8 → later", False),
    ],
)
def test_heading_variants(heading, stamp, target, read):
    (note,) = parse_notes_text(f"## Active Notes\n\n{heading}\nbody\n")
    assert (note.timestamp, note.target, note.read, note.text) == (stamp, target, read, "body")


def test_an_answer_heading_is_an_answer_with_its_source_and_a_note_is_not():
    text = ("## Active Notes\n\n### [ANSWER] 2026-11-29T15:00:00 → T-8 <!-- from Telegram -->\nyes\n\n"
            "### [NOTE] 2026-11-29T15:00:00 → T-8\nyes\n")
    answer, note = parse_notes_text(text)
    assert (answer.kind, answer.is_answer, answer.source) == (ANSWER, True, "telegram")
    assert (note.kind, note.is_answer, note.source) == ("NOTE", False, "")
    assert answer.key != note.key


def test_structure_inside_comments_and_fences_is_text_or_ignored():
    text = """\
<!--
### [NOTE] 2026-01-01T00:00:00 → T-1
-->
## Active Notes

### [NOTE] 2026-01-02T00:00:00 → T-2
before
```
### [NOTE] not a heading
## Archive
---
```
\\### escaped heading
\\\\--- two backslashes
<!-- a comment line is not text -->
after

## Archive
"""
    (note,) = parse_notes_text(text)
    assert note.target == "T-2" and not note.archived
    assert note.text == (
        "before\n```\n### [NOTE] not a heading\n## Archive\n---\n```\n"
        "### escaped heading\n\\--- two backslashes\nafter"
    )


def test_other_headings_end_a_note():
    text = "## Active Notes\n### [NOTE] 2026-01-01T00:00:00\nbody\n### Random heading\nstray\n"
    (note,) = parse_notes_text(text)
    assert note.text == "body"
    (note,) = parse_notes_text("## Active Notes\n### [NOTE] 2026-01-01T00:00:00\nbody\n---\nstray\n")
    assert note.text == "body"


def test_only_a_level_one_or_two_heading_starting_archive_opens_the_archive():
    text = ("## Active Notes\n### [NOTE] 2026-01-01T00:00:00\nfirst\n### Archive\n"
            "### [NOTE] 2026-01-02T00:00:00\nafter a level-3 heading\n"
            "## Notes to archive\n### [NOTE] 2026-01-03T00:00:00\nin a section ending in archive\n"
            "## Archive of 2025\n### [NOTE:READ] 2026-01-04T00:00:00\narchived\n")
    assert [(n.text, n.archived) for n in parse_notes_text(text)] == [
        ("first", False), ("after a level-3 heading", False), ("in a section ending in archive", False),
        ("archived", True)]


def test_missing_file_and_bad_utf8(tmp_path):
    assert parse_notes(tmp_path / "nope.md") == []
    bad = tmp_path / "HUMAN_NOTES.md"
    bad.write_bytes(b"# HUMAN NOTES\n\nok\n\xff\xfe bad\n")
    with pytest.raises(MementoError) as info:
        parse_notes(bad)
    assert info.value.line == 4
    assert "HUMAN_NOTES.md:4" in str(info.value)


def test_key_is_stable_across_read_and_distinguishes_duplicates():
    base = "## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00 → T-1\nsame\n\n"
    twice = parse_notes_text(base + base.replace("## Active Notes\n\n", ""))
    assert len({n.key for n in twice}) == 2
    thrice = parse_notes_text(base + base.replace("## Active Notes\n\n", "") * 2)
    assert [n.occurrence for n in thrice] == [0, 1, 2]  # how many earlier notes read the same
    read = parse_notes_text(base.replace("[NOTE]", "[NOTE:READ]"))
    assert read[0].key == twice[0].key
    edited = parse_notes_text(base.replace("same", "different"))
    assert edited[0].key != twice[0].key


# --- add_note ------------------------------------------------------------------


def test_add_note_creates_file_from_template(tmp_path):
    path = tmp_path / "docs" / "HUMAN_NOTES.md"
    note = add_note(path, "Use Redis.", "T-201", now=datetime(2026, 11, 29, 15, 0, 0))
    assert path.read_text() == (
        "# HUMAN NOTES\n\n## Active Notes\n\n### [NOTE] 2026-11-29T15:00:00 → T-201\nUse Redis.\n"
        "\n---\n\n## Archive\n"
    )
    assert note == parse_notes(path)[0]
    assert (note.line, note.target, note.read, note.text) == (5, "T-201", False, "Use Redis.")


def test_add_note_appends_at_end_of_active_section_keeping_bytes(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    write(path, SPEC_EXAMPLE)
    note = add_note(path, "global one", now=NOW)
    lines = path.read_text().splitlines(keepends=True)
    old = SPEC_EXAMPLE.splitlines(keepends=True)
    assert lines[:10] == old[:10]
    assert lines[10:13] == ["### [NOTE] 2026-11-29T16:00:00 → global\n", "global one\n", "\n"]
    assert lines[13:] == old[10:]
    notes = parse_notes(path)
    assert [n.target for n in notes] == ["T-201", "T-102", "global"]
    assert notes[-1] == note and not note.archived


@pytest.mark.parametrize("bom", [False, True])
def test_add_note_preserves_crlf_and_bom(tmp_path, bom):
    path = tmp_path / "HUMAN_NOTES.md"
    before = write(path, SPEC_EXAMPLE, crlf=True, bom=bom)
    add_note(path, "line one\nline two", "T-1", now=NOW)
    after = path.read_bytes()
    assert after.startswith(before[: before.index(b"---")])
    assert after.endswith(before[before.index(b"---") :])
    inserted = after[before.index(b"---") : len(after) - len(before) + before.index(b"---")]
    assert b"\n" not in inserted.replace(b"\r\n", b"")
    assert after.startswith(b"\xef\xbb\xbf") == bom
    assert parse_notes(path)[-1].text == "line one\nline two"


def test_add_note_adds_missing_sections(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    write(path, "# HUMAN NOTES\n\nSome preface a person wrote.")
    add_note(path, "first", now=NOW)
    text = path.read_text()
    assert text == ("# HUMAN NOTES\n\nSome preface a person wrote.\n\n## Active Notes\n\n"
                    "### [NOTE] 2026-11-29T16:00:00 → global\nfirst\n\n---\n\n## Archive\n")
    (note,) = parse_notes(path)
    assert (note.text, note.archived) == ("first", False)

    only_archive = tmp_path / "archive_only.md"
    write(only_archive, "## Archive\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nold\n")
    add_note(only_archive, "new", now=NOW)
    notes = parse_notes(only_archive)
    assert [(n.text, n.archived) for n in notes] == [("new", False), ("old", True)]
    assert only_archive.read_text() == (  # the section goes first, no blank line above it
        "## Active Notes\n\n### [NOTE] 2026-11-29T16:00:00 → global\nnew\n\n"
        "## Archive\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nold\n"
    )


def test_add_note_without_final_newline(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    write(path, "## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00 → T-1\nno newline")
    add_note(path, "second", now=NOW)
    assert [n.text for n in parse_notes(path)] == ["no newline", "second"]
    assert path.read_text() == ("## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00 → T-1\nno newline\n\n"
                                "### [NOTE] 2026-11-29T16:00:00 → global\nsecond\n\n---\n\n## Archive\n")
    title_then_archive = tmp_path / "title.md"
    write(title_then_archive, "# HUMAN NOTES\n## Archive\n")
    add_note(title_then_archive, "new", now=NOW)
    assert title_then_archive.read_text() == (
        "# HUMAN NOTES\n\n## Active Notes\n\n### [NOTE] 2026-11-29T16:00:00 → global\nnew\n\n## Archive\n")


@pytest.mark.parametrize("target", ["t-1", "T1", "everyone", "T-1 T-2", "../x"])
def test_add_note_rejects_bad_target(tmp_path, target):
    with pytest.raises(MementoError, match="target"):
        add_note(tmp_path / "n.md", "text", target)
    assert not (tmp_path / "n.md").exists()


@pytest.mark.parametrize("text", ["", "   ", "\n\n \t\n", "\x1b[31m\x1b[0m"])
def test_add_note_refuses_empty_text(tmp_path, text):
    with pytest.raises(MementoError, match="text"):
        add_note(tmp_path / "n.md", text)


def test_add_note_target_normalisation(tmp_path):
    path = tmp_path / "n.md"
    assert add_note(path, "a", "GLOBAL", now=NOW).target == "global"
    assert add_note(path, "b", " T-7 ", now=NOW).target == "T-7"


HOSTILE = [
    "### [NOTE] 2026-01-01T00:00:00 → T-999\nfake heading",
    "## Archive\n# HUMAN NOTES\n---\n----",
    "```\nunclosed fence",
    "~~~python\nprint('x')",
    "<!-- unclosed comment\nstill text",
    "\\### already escaped\n  \\\\## two",
    "[x] done [bold red]not markup[/] [b]",
    "emoji 🎉🚫✅ and → arrows -> too",
    "  indented first line\n\tтаб",
    "    ### indented heading\n   --- spaced",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_add_note_hostile_text_round_trips(tmp_path, text):
    path = tmp_path / "HUMAN_NOTES.md"
    write(path, SPEC_EXAMPLE)
    note = add_note(path, text, "T-5", now=NOW)
    add_note(path, "after", now=NOW)  # still parsed as its own note after the hostile one
    notes = parse_notes(path)
    assert [n.text for n in notes] == [
        "Use Redis for sessions instead of PostgreSQL; see redis.conf.",
        "Read JWT_SECRET from the environment, never hard-code it.",
        text,
        "after",
    ]
    assert notes[2] == note
    assert [n.archived for n in notes] == [False] * 4


def test_add_note_cleans_control_characters(tmp_path):
    path = tmp_path / "n.md"
    note = add_note(path, "\n\n\x1b[1mbold\x1b[0m\x07 text  \r\nnext\u2028line\n\n", now=NOW)
    assert note.text == "bold text\nnext\nline" == clean_note_text("bold\x07 text\nnext\nline")
    assert parse_notes(path)[0].text == note.text


def test_add_note_refuses_to_write_into_unclosed_fence(tmp_path):
    path = tmp_path / "n.md"
    original = "## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00\n```\nopen\n"
    write(path, original)
    with pytest.raises(MementoError) as info:
        add_note(path, "x", now=NOW)
    assert info.value.line == 4
    assert path.read_text() == original


def test_a_fence_left_open_in_active_notes_below_the_archive_is_refused_at_its_line(tmp_path):
    """Both sections there (the Archive first), a fence opened among the active notes and never closed:
    the note would go inside it. Refused, naming the fence's line, and the file kept."""
    path = tmp_path / "n.md"
    original = "# HUMAN NOTES\n\n## Archive\n\n## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00\n```\nopen\n"
    write(path, original)
    with pytest.raises(MementoError, match="close it before adding notes") as info:
        add_note(path, "x", now=NOW)
    assert info.value.line == 8
    assert path.read_text() == original


def test_a_note_added_through_memento_is_announced_to_a_running_tick_by_its_key(tmp_path):
    """SPEC §13: the tick keeps a note a person added while it ran only when it was told its key."""
    from tests.core.test_receipts import Listener

    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    path = root / "docs" / "HUMAN_NOTES.md"
    write(path, SPEC_EXAMPLE)
    listener = Listener(root, b'{"ok": true}\n')
    try:
        note = add_note(path, "keep the cache warm", "T-7", now=NOW)
    finally:
        listener.close()
    assert listener.got == [f'{{"op": "note", "key": "{note.key}"}}'.encode()]


@pytest.mark.parametrize(("original", "line"), [
    ("# HUMAN NOTES\n\n<!-- a person's comment, never closed\nstill the comment\n", 3),
    ("# HUMAN NOTES\n\n```\na fence never closed", 3),
    ("## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00\nbody\n\n<!-- open\n", 6),  # no Archive
])
def test_a_block_left_open_where_a_missing_section_would_go_is_refused_and_the_file_kept(tmp_path, original, line):
    """Appended below it, the section would be inside the block: read as no section at all."""
    path = tmp_path / "n.md"
    write(path, original)
    with pytest.raises(MementoError, match="never closed") as info:
        add_note(path, "x", now=NOW)
    assert info.value.line == line
    assert path.read_text() == original


def test_a_comment_left_open_at_the_end_of_a_file_with_both_sections_is_no_matter(tmp_path):
    path = tmp_path / "n.md"
    write(path, SPEC_EXAMPLE + "<!-- a person's comment, never closed\n")
    assert add_note(path, "x", "T-1", now=NOW).text == "x"
    assert [n.text for n in parse_notes(path)][-1] == "x"


@pytest.mark.parametrize("block", ["```\nnever closed", "<!-- never closed\n"])
def test_archiving_into_a_missing_archive_below_a_block_left_open_is_refused_and_the_file_kept(tmp_path, block):
    path = tmp_path / "n.md"
    original = f"## Active Notes\n\n### [NOTE:READ] 2026-01-01T00:00:00\nbody\n\n## Later\n\n{block}"
    write(path, original)
    with pytest.raises(MementoError, match="never closed") as info:
        archive_read(path)
    assert info.value.line == 8
    assert path.read_text() == original


_line_text = st.lists(
    st.sampled_from(
        list("#-`~<!>\\ \tabcXYZ[]:→*_\n\r\x1b\u2028é🎉") + ["### [NOTE] ", "## ", "---", "```", "<!--"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_line_text, crlf=st.booleans(), bom=st.booleans())
def test_property_add_note_then_parse_returns_text(text, crlf, bom):
    expected = clean_note_text(text)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "HUMAN_NOTES.md"
        before = write(path, SPEC_EXAMPLE, crlf=crlf, bom=bom)
        if not expected:
            with pytest.raises(MementoError):
                add_note(path, text, now=NOW)
            assert path.read_bytes() == before
            return
        note = add_note(path, text, "T-1", now=NOW)
        notes = parse_notes(path)
        assert len(notes) == 3
        assert notes[2].text == expected == note.text
        # untouched lines stay byte-identical
        old_lines = before.splitlines(keepends=True)
        new_lines = path.read_bytes().splitlines(keepends=True)
        split = 9  # "---" line index in SPEC_EXAMPLE
        assert new_lines[:split] == old_lines[:split]
        assert new_lines[-(len(old_lines) - split) :] == old_lines[split:]


# --- mark_read -----------------------------------------------------------------


@pytest.mark.parametrize(("crlf", "bom"), [(False, False), (True, True)])
def test_mark_read_edits_only_heading_lines(tmp_path, crlf, bom):
    path = tmp_path / "HUMAN_NOTES.md"
    text = SPEC_EXAMPLE.replace(
        "---\n", "### [NOTE] 2026-11-29T15:10:00 → global\nPause phase 3.\n\n---\n"
    )
    before = write(path, text, crlf=crlf, bom=bom)
    notes = parse_notes(path)
    target = [n for n in notes if n.target == "global"]
    assert mark_read(path, [target[0].key, "no-such-key"]) == 1
    after = path.read_bytes()
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [target[0].line - 1]
    assert new_lines[changed[0]] == old_lines[changed[0]].replace(b"[NOTE]", b"[NOTE:READ]")
    reparsed = parse_notes(path)
    assert [n.read for n in reparsed] == [False, True, True]
    assert [n.key for n in reparsed] == [n.key for n in notes]
    # already read: nothing to do, file untouched
    assert mark_read(path, [n.key for n in reparsed if n.read]) == 0
    assert path.read_bytes() == after


def test_mark_read_marks_the_headings_first_mark_only(tmp_path):
    path = tmp_path / "n.md"
    write(path, "## Active Notes\n### [NOTE] 2026-01-01T00:00:00 → T-1 <!-- was [NOTE] twice -->\nbody\n")
    assert mark_read(path, [parse_notes(path)[0].key]) == 1
    assert path.read_text() == (
        "## Active Notes\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1 <!-- was [NOTE] twice -->\nbody\n")


def test_mark_read_missing_file_and_no_keys(tmp_path):
    assert mark_read(tmp_path / "missing.md", ["x"]) == 0
    assert not (tmp_path / "missing.md").exists()
    assert mark_read(tmp_path / "missing.md", []) == 0


def test_mark_read_skips_a_note_edited_since_it_was_read(tmp_path):
    path = tmp_path / "n.md"
    add_note(path, "original", "T-1", now=NOW)
    key = parse_notes(path)[0].key
    path.write_text(path.read_text().replace("original", "edited by a person"))
    assert mark_read(path, [key]) == 0
    assert not parse_notes(path)[0].read


_note_spec = st.tuples(
    st.sampled_from(["T-1", "T-2", "global"]),
    st.booleans(),
    st.lists(st.sampled_from(["plain", "`code`", "[x] box", "  indented", "", "<!-- c -->"]),
             min_size=1, max_size=3),
)


def _render_notes(specs, nl: str) -> str:
    out = ["# HUMAN NOTES", "", "Preface by a person.", "", "## Active Notes", ""]
    for k, (target, read, body) in enumerate(specs):
        mark = "[NOTE:READ]" if read else "[NOTE]"
        out.append(f"### {mark} 2026-01-{k % 28 + 1:02d}T10:00:00 → {target}")
        out.extend([*body, "body " + str(k), ""])
    out += ["---", "", "## Archive", "<!-- archived notes -->", ""]
    return nl.join(out)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(_note_spec, min_size=1, max_size=8),
    crlf=st.booleans(),
    bom=st.booleans(),
    data=st.data(),
)
def test_property_mark_read_keeps_untouched_lines(specs, crlf, bom, data):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "HUMAN_NOTES.md"
        before = write(path, _render_notes(specs, "\r\n" if crlf else "\n"), bom=bom)
        notes = parse_notes(path)
        assert len(notes) == len(specs)
        chosen = data.draw(st.lists(st.sampled_from(notes), unique_by=lambda n: n.key))
        expected_changed = {n.line - 1 for n in chosen if not n.read}
        assert mark_read(path, [n.key for n in chosen]) == len(expected_changed)
        old_lines = before.splitlines(keepends=True)
        new_lines = path.read_bytes().splitlines(keepends=True)
        assert len(old_lines) == len(new_lines)
        for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)):
            if i in expected_changed:
                assert b == a.replace(b"[NOTE]", b"[NOTE:READ]", 1)
            else:
                assert a == b
        after = parse_notes(path)
        assert [n.key for n in after] == [n.key for n in notes]
        assert [n.text for n in after] == [n.text for n in notes]


# --- archive_read --------------------------------------------------------------


def test_archive_read_moves_read_notes_verbatim(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    text = SPEC_EXAMPLE.replace(
        "---\n", "### [NOTE] 2026-11-29T15:10:00 → global\nPause phase 3.\n\n---\n"
    )
    write(path, text, crlf=True)
    before = parse_notes(path)
    assert archive_read(path) == 1
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    after = parse_notes(path)
    assert sorted(n.key for n in after) == sorted(n.key for n in before)
    assert [(n.target, n.read, n.archived) for n in after] == [
        ("T-201", False, False),
        ("global", False, False),
        ("T-102", True, True),
    ]
    assert data.endswith(
        b"## Archive\r\n\r\n### [NOTE:READ] 2026-11-29T14:00:00 \xe2\x86\x92 T-102\r\n"
        b"Read JWT_SECRET from the environment, never hard-code it.\r\n"
    )
    assert archive_read(path) == 0
    assert path.read_bytes() == data


def test_archive_read_appends_after_existing_archive_and_creates_section(tmp_path):
    path = tmp_path / "n.md"
    write(
        path,
        "## Active Notes\n\n### [NOTE:READ] 2026-01-02T00:00:00 → T-2\nsecond\n\n---\n\n"
        "## Archive\n<!-- keep me -->\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nfirst\n",
    )
    assert archive_read(path) == 1
    assert [(n.text, n.archived) for n in parse_notes(path)] == [("first", True), ("second", True)]
    assert "<!-- keep me -->" in path.read_text()

    no_newline = tmp_path / "no_newline.md"  # the archive's last line has no line break to write after
    write(no_newline, "## Active Notes\n\n### [NOTE:READ] 2026-01-02T00:00:00 → T-2\nsecond\n\n---\n\n"
                      "## Archive\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nfirst")
    assert archive_read(no_newline) == 1
    assert no_newline.read_text() == (
        "## Active Notes\n\n---\n\n## Archive\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nfirst\n\n"
        "### [NOTE:READ] 2026-01-02T00:00:00 → T-2\nsecond\n")

    no_archive = tmp_path / "no_archive.md"  # the section made below a last line with no line break
    write(no_archive, "## Active Notes\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nread\n\n"
                      "### [NOTE] 2026-01-02T00:00:00 → T-2\nunread")
    assert archive_read(no_archive) == 1
    assert no_archive.read_text() == (
        "## Active Notes\n\n### [NOTE] 2026-01-02T00:00:00 → T-2\nunread\n\n---\n\n"
        "## Archive\n\n### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nread\n")

    bare = tmp_path / "bare.md"
    write(bare, "### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nonly")
    assert archive_read(bare) == 1
    (note,) = parse_notes(bare)
    assert (note.text, note.archived) == ("only", True)
    assert bare.read_text() == ("# HUMAN NOTES\n\n## Active Notes\n\n---\n\n## Archive\n\n"
                                "### [NOTE:READ] 2026-01-01T00:00:00 → T-1\nonly\n")  # its line ended now


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(_note_spec, min_size=1, max_size=8), crlf=st.booleans(), bom=st.booleans())
def test_property_archive_read_loses_and_doubles_nothing(specs, crlf, bom):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "HUMAN_NOTES.md"
        before_bytes = write(path, _render_notes(specs, "\r\n" if crlf else "\n"), bom=bom)
        before = parse_notes(path)
        moved = archive_read(path)
        assert moved == sum(1 for n in before if n.read)
        after = parse_notes(path)
        assert sorted((n.key, n.text) for n in after) == sorted((n.key, n.text) for n in before)
        assert all(n.archived == n.read for n in after)
        # every original non-blank line is still there, as many times, byte for byte
        def content(data: bytes) -> list[bytes]:
            return sorted(ln for ln in data.splitlines(keepends=True) if ln.strip())

        assert content(path.read_bytes()) == content(before_bytes)


# --- queries -------------------------------------------------------------------


def test_notes_for_task_and_unread_older_than():
    text = """\
## Active Notes
### [NOTE] 2026-11-27T10:00:00 → T-1
old for T-1
### [NOTE] 2026-11-29T15:30:00 → global
fresh global
### [NOTE:READ] 2026-11-20T10:00:00 → T-1
read
### [NOTE] 2026-11-20T10:00:00 → T-2
other task
### [NOTE] someday → T-1
no date
---
## Archive
### [NOTE] 2026-11-01T10:00:00 → T-1
archived unread
"""
    notes = parse_notes_text(text)
    assert [n.text for n in notes_for_task(notes, "T-1")] == ["old for T-1", "fresh global", "no date"]
    assert [n.text for n in notes_for_task(notes, "T-3")] == ["fresh global"]
    stale = unread_older_than(notes, timedelta(days=1), NOW)
    assert [n.text for n in stale] == ["old for T-1", "other task"]
    naive_now = NOW.replace(tzinfo=None)
    assert unread_older_than(notes, timedelta(days=1), naive_now) == stale
    fresh = next(n for n in notes if n.text == "fresh global")  # 2026-11-29T15:30:00
    exactly = fresh.when.replace(tzinfo=UTC) + timedelta(minutes=30)
    assert unread_older_than([fresh], timedelta(minutes=30), exactly) == []  # "more than", not "at least"
    assert unread_older_than([fresh], timedelta(minutes=30), exactly + timedelta(seconds=1)) == [fresh]


def test_note_is_frozen():
    note = parse_notes_text(SPEC_EXAMPLE)[0]
    assert isinstance(note, Note)
    with pytest.raises(AttributeError):
        note.read = True  # type: ignore[misc]


# --- races ---------------------------------------------------------------------


def _add_many(path: str, worker: int, count: int) -> None:
    for i in range(count):
        add_note(Path(path), f"worker {worker} note {i}", "T-1" if i % 2 else "global")


def test_two_processes_adding_notes_concurrently(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_add_many, args=(str(path), w, 100)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    texts = [n.text for n in parse_notes(path)]
    assert sorted(texts) == sorted(f"worker {w} note {i}" for w in (1, 2) for i in range(100))
    for w in (1, 2):  # each writer's notes stay in its own order
        mine = [t for t in texts if t.startswith(f"worker {w} ")]
        assert mine == [f"worker {w} note {i}" for i in range(100)]


def test_a_level_four_heading_inside_a_note_is_part_of_its_text():
    (note,) = parse_notes_text("### [NOTE] 2026-12-01T09:00:00 → T-1\nuse the pool\n#### Why\nfewer connections\n")
    assert note.text == "use the pool\n#### Why\nfewer connections"


def test_a_note_added_in_a_workspace_is_remembered_as_added_through_memento(tmp_path):
    """A tick running meanwhile keeps such a note; one written into the file by hand it does not."""
    from memento_core.notes import added_keys

    (tmp_path / ".memento").mkdir()
    path = tmp_path / "docs" / "HUMAN_NOTES.md"
    first = add_note(path, "Use Redis.", "T-201")
    second = add_note(path, "Use Redis.", "T-201")
    assert added_keys(tmp_path / ".memento" / "notes_added") == {first.key, second.key}
    elsewhere = tmp_path / "loose" / "HUMAN_NOTES.md"  # no workspace: nothing to remember it in
    add_note(elsewhere, "x", "T-1")
    assert not (tmp_path / "loose" / ".memento").exists()


def test_a_hard_link_planted_as_the_added_notes_file_is_not_written_through(tmp_path):
    from memento_core.notes import added_keys

    (tmp_path / ".memento").mkdir()
    outside = tmp_path / "outside.txt"  # a person's file elsewhere, linked in by an agent
    outside.write_text("a person's own text\n")
    os.link(outside, tmp_path / ".memento" / "notes_added")
    note = add_note(tmp_path / "docs" / "HUMAN_NOTES.md", "Use Redis.", "T-201")
    assert outside.read_text() == "a person's own text\n"
    assert os.stat(outside).st_nlink == 1
    assert note.key in added_keys(tmp_path / ".memento" / "notes_added")


def test_archiving_a_file_that_is_not_there_moves_nothing(tmp_path):
    missing = tmp_path / "HUMAN_NOTES.md"
    assert archive_read(missing) == 0 and not missing.exists()


def test_a_missing_active_section_goes_between_the_title_and_the_archive_with_blank_lines(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    path.write_text("# Human Notes\n## Archive\n\n### [NOTE] 2026-01-01T00:00:00\nold\n")
    add_note(path, "new note", now=datetime(2026, 1, 2, tzinfo=UTC))
    assert path.read_text() == ("# Human Notes\n\n## Active Notes\n\n### [NOTE] 2026-01-02T00:00:00 → global\nnew note\n\n"
                                "## Archive\n\n### [NOTE] 2026-01-01T00:00:00\nold\n")


def test_an_answer_to_no_task_and_a_kind_that_is_no_kind_are_refused_and_nothing_written(tmp_path):
    path = tmp_path / "HUMAN_NOTES.md"
    with pytest.raises(MementoError, match="an answer is for one task, not global"):
        add_note(path, "yes", kind=ANSWER)
    with pytest.raises(MementoError, match="unknown note kind QUESTION"):
        add_note(path, "yes", target="T-1", kind="QUESTION")
    assert not path.exists()


@pytest.mark.parametrize("source", ["tele gram", "cli -->", "chat\n### [NOTE]", "x1"])
def test_an_answer_from_a_source_that_is_not_one_word_is_refused_and_nothing_written(tmp_path, source):
    path = tmp_path / "HUMAN_NOTES.md"
    with pytest.raises(MementoError, match="unknown answer source"):
        add_note(path, "yes", target="T-1", kind=ANSWER, source=source)
    assert not path.exists()
