"""markdown/prose.py (SPEC §3): the prose documents read with mistune — level-2 sections with what
each says, text kept as typed (no emphasis parsed: ``__init__.py`` stays itself), a section
rendered back to its markdown, and the paths a drawn file tree names."""

from __future__ import annotations

from memento_core.markdown.prose import (
    block_lines,
    inline_text,
    markup_tokens,
    parse_document,
    tokens,
    tree_paths,
    walk,
)

STATE = """# Current State

> Last updated: 2026-01-01T00:00:00Z

## Objective
Edit __init__.py and *keep* it small.

## Blockers
- T-2: waits for `make db`
- See [the guide](https://example.org/g) and [https://x.org](https://x.org)
  second line

<!-- a note to the editor -->

## Objective
A second section of the same title.

## Code
> quoted words

```
line one

line two
```
"""


def test_sections_say_what_they_hold_as_typed_and_repeats_are_kept_in_order():
    doc = parse_document(STATE.replace("\n", "\r\n"))
    assert doc.title == "Current State"
    assert doc.preamble == ["Last updated: 2026-01-01T00:00:00Z"]
    assert doc.order == ["Objective", "Blockers", "Objective", "Code"]
    assert list(doc.sections) == ["Objective", "Blockers", "Code"]  # the first of a repeated title
    assert doc.sections["Objective"].lines == ["Edit __init__.py and *keep* it small."]
    assert doc.sections["Blockers"].lines == [
        "T-2: waits for `make db`",
        "See [the guide](https://example.org/g) and https://x.org second line",
    ]
    assert doc.sections["Code"].lines == ["quoted words", "line one", "line two"]


def test_a_section_renders_back_to_the_markdown_that_was_written():
    doc = parse_document(STATE)
    assert doc.sections["Objective"].markdown == "Edit __init__.py and *keep* it small."
    assert doc.sections["Blockers"].markdown.splitlines()[0] == "- T-2: waits for `make db`"


def test_a_second_level_one_heading_is_content_and_deeper_headings_stay_in_their_section():
    doc = parse_document("# A\n\n# B\n\n## S\n### Deep\ntext\n")
    assert doc.title == "A" and doc.preamble == ["B"]
    assert doc.sections["S"].lines == ["Deep", "text"]


def test_markup_tokens_parse_emphasis_strikethrough_and_tables_tokens_do_not():
    kinds = {t["type"] for t in walk(markup_tokens("**bold** ~~gone~~\n\n| a |\n|---|\n| 1 |\n"))}
    assert {"strong", "strikethrough", "table"} <= kinds
    plain = {t["type"] for t in walk(tokens("**bold** ~~gone~~\n"))}
    assert not plain & {"strong", "emphasis", "strikethrough"}


def test_inline_and_block_text_of_odd_tokens():
    assert inline_text(None) == ""
    assert inline_text([{"type": "text", "raw": "a"}, {"type": "linebreak"}, {"type": "codespan", "raw": "b c"}]) == \
        "a `b c`"
    assert block_lines({"type": "thematic_break"}) == []
    assert block_lines({"type": "block_code", "raw": "a\n\n  \n  b\n"}) == ["a", "  b"]  # blank lines dropped
    assert block_lines({"type": "block_html", "raw": "<!-- x -->"}) == []


def test_a_drawn_tree_names_its_paths_joined_to_their_folders():
    drawn = [
        "calc/",
        "├── __init__.py   # the package",
        "├── ops/",
        "│   ├── add.py",
        "│   └── sub.py",
        "└── cli.py",
        "|-- legacy.py",
        "",
        "   indented prose line",
        "docs/",
        "`-- guide.md",
        "├── two words.py",
    ]
    assert tree_paths(drawn) == ["calc/", "calc/__init__.py", "calc/ops/", "calc/ops/add.py", "calc/ops/sub.py",
                                 "calc/cli.py", "calc/legacy.py", "docs/", "docs/guide.md"]
