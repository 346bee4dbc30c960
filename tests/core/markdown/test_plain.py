"""markdown/plain.py against mistune (markdown/prose.py): whatever the plain reader answers, mistune
answers the same; what it cannot read it gives back (None) rather than guess."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.markdown.plain import read_plain
from memento_core.markdown.prose import parse_document


def _mistune(text: str):
    doc = parse_document(text)
    return doc.title, doc.preamble, {name: sec.lines for name, sec in doc.sections.items()}, doc.order


def _same(text: str) -> bool:
    """True when the plain reader read ``text`` (and then said what mistune says); False when it gave it back."""
    got = read_plain(text)
    if got is None:
        return False
    assert got == _mistune(text), text
    return True


CHECKPOINT = """# Current State
> Last updated: 2026-12-06T20:00:00Z

## Objective
bench: Phase 1: All (3/12 tasks done)

## Current Step
T-4 Write one file 4 is running now (pid 12 on host, since 2026-12-06T20:00:00Z)
Tick #3: T-3 Write one file 3 — passed (commit abc1234)

## Key Decisions
- Keep `__init__.py` files empty: imports_at_top *always*
- T-2 Outputs (tick #2): src/out_T-2.txt -> done | 3 > 2, 50% of it ~ fine

## Next Action
Next tick runs T-4 (Phase 1: All)

## Blockers
None

## Unsurfaced Results
- T-3 Write one file 3 — ✅ passed, commit abc1234 (2026-12-06T20:00:00Z)
"""


def test_the_checkpoint_memento_writes_is_read_without_mistune_and_as_mistune_reads_it():
    assert _same(CHECKPOINT)
    title, preamble, sections, order = read_plain(CHECKPOINT)
    assert title == "Current State" and preamble == ["Last updated: 2026-12-06T20:00:00Z"]
    assert sections["Current Step"] == ["T-4 Write one file 4 is running now (pid 12 on host, since "
                                        "2026-12-06T20:00:00Z) Tick #3: T-3 Write one file 3 — passed (commit abc1234)"]
    assert sections["Key Decisions"][0] == "Keep `__init__.py` files empty: imports_at_top *always*"
    assert order == ["Objective", "Current Step", "Key Decisions", "Next Action", "Blockers", "Unsurfaced Results"]


def test_what_render_writes_is_plain(tmp_path):
    # The checkpoint of a real workspace as render() makes it: a tick never needs mistune for it.
    from memento_core import checkpoint
    from memento_core.plan.scan import parse_plan
    from memento_core.scaffold import init_workspace
    from memento_core.state import TickState
    from memento_core.workspace import Workspace

    root = tmp_path / "ws"
    init_workspace(root, project="plain", commit=False)
    ws = Workspace(root)
    text = checkpoint.render(ws, parse_plan(ws.plan_path), TickState.load(ws), now=datetime(2026, 12, 6, tzinfo=UTC))
    assert _same(text)


@pytest.mark.parametrize("text", [
    "## A\nsee [the docs](http://x) now\n",  # a link
    "## A\nsee [the docs][d] now\n\n[d]: http://x\n",  # a reference and its definition
    "## A\nsee [d] now\n\n[d]: http://x\n",
    "## A\n- [d]: http://x\n",
    "## A\nan \\*escaped\\* star\n",
    "## A\nfish &amp; chips\n",
    "## A\n<b>bold</b>\n",
    "## A\n<http://example.com>\n",
    "## A\n    indented code\n",
    "## A\n\tindented by a tab\n",
    "## A\npara\n- item right under it\n",
    "## A\n- item\nlazy continuation\n",
    "## A\n> quote\nlazy continuation\n",
    "## A\npara\n## B\n",  # a heading right under a paragraph
    "## A\n### three\n",
    "## A ##\n",
    "##A\n",
    "# T\n# T again\n",
    "## A\npara\n===\n",  # a setext underline
    "## A\npara\n---\n",
    "## A\n- - -\n",
    "## A\n* star item\n",
    "## A\n1. first\n",
    "## A\n2) second\n",
    "## A\n```\ncode\n```\n",
    "## A\n~~~\ncode\n~~~\n",
    "## A\nan `unmatched backtick\n",
    "## A\n`` double ``\n",
    "## A\n` padded `\n",
    "## A\ncrlf\r\nline\r\n",
    "## A\nnul \x00 byte\n",
    "## A\nline\u2028separator\n",
    "## A\n   \n",  # spaces only
    "## A\n\u3000\n",  # a line of Unicode space only
    "## A\n| a | b |\n",
    "## A\n- \n",
    "## A\n>quote without its space\n",
])
def test_what_is_not_plain_is_given_back_to_mistune(text):
    assert read_plain(text) is None
    _mistune(text)  # and mistune reads it (the caller's fallback)


def test_plain_corner_cases_agree_with_mistune():
    for text in ("", "\n\n", "just a preamble line\n", "## A\n## A\nrepeated title, dropped\n",
                 "## B\nx\n# Title after a section\n", "## A\n- a\n- b\n\n- loose c\n\npara after\n",
                 "## A\n> q1\n> q2\n", "# T\n> Last updated: x\n## A\n", "## A\n2026-12-06 is a date\n",
                 "## A\n`a  b` and `c`\n", "## A\nwords   with    spaces   \n", "## A\n\u00a0nbsp first\n",
                 "## A\nT-1 — ✅ passed → next\n", "## A\n-1 is a number\n", "## A\nx_y_z **not bold**\n"):
        got = read_plain(text)
        if got is not None:
            assert got == _mistune(text), text


# Documents in the plain shape (a line's first word never a block marker), and the same with
# words and lines from just outside it mixed in.
_FIRST = st.sampled_from(["None", "T-1", "a", "b c", "`x`", "`a  b`", "x > y", "50%", "—", "✅", "(pid 3)", "a|b",
                          "~", "http://x", "!", "\u00a0", "Note for T-2 (2026-12-06):", "2026-12-06"])
_PLAIN_WORDS = st.sampled_from(["None", "T-1", "a", "b c", "`x`", "`a  b`", "__init__.py", "*", "_", "x > y",
                                "50%", "—", "✅", "(pid 3)", "a|b", "~", "#", "1.", "2)", "http://x", ":", "-",
                                "+", "=", "!", "\u00a0", "  ", "**bold**", "_it_", "[MODULE:cli]", "[", "]", "[x]",
                                "a]", "[ ]"])
_HOSTILE_WORDS = st.sampled_from(["`", "``", "` a`", "[a](b)", "[a] (b)", "[a][b]", "[a][]", "![i](u)", "](",
                                  "\\", "\\*", "&", "&amp;", "<", "<b>", "\u3000", "\r", "\t", "\x00", "\u2028",
                                  "\x85"])
_INLINE = st.tuples(_FIRST, st.lists(_PLAIN_WORDS, max_size=4)).map(lambda t: " ".join([t[0], *t[1]]))
_PLAIN_LINE = st.one_of(st.just(""), st.just(""), _INLINE, _INLINE.map(lambda s: f"- {s}"),
                        _INLINE.map(lambda s: f"> {s}"), _INLINE.map(lambda s: f"## {s}"))
_MIXED_INLINE = st.lists(st.one_of(_PLAIN_WORDS, _HOSTILE_WORDS), min_size=1, max_size=5).map(" ".join)
_HOSTILE_LINE = st.one_of(
    st.just("   "), _MIXED_INLINE, _MIXED_INLINE.map(lambda s: f"- {s}"), _MIXED_INLINE.map(lambda s: f"# {s}"),
    _MIXED_INLINE.map(lambda s: f"* {s}"), _MIXED_INLINE.map(lambda s: f"### {s}"),
    _MIXED_INLINE.map(lambda s: f"    {s}"), _MIXED_INLINE.map(lambda s: f"  - {s}"),
    _MIXED_INLINE.map(lambda s: f"1. {s}"), _MIXED_INLINE.map(lambda s: f"`{s}"),
    st.sampled_from(["[a]: http://x", "[MODULE:cli]: y", "- [a]: b", "> [a]: b", "[a]", "[a]:"]),
    st.sampled_from(["---", "===", "```", "~~~", "- - -", "***", "> ", "-", "#", "##", "<!-- c -->", "___"]),
)
_HEAD = "# Current State\n> Last updated: now\n\n"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PLAIN_LINE, max_size=14), st.booleans())
def test_any_document_in_the_plain_shape_reads_as_mistune_reads_it(lines, titled):
    _same((_HEAD if titled else "") + "\n".join(lines) + "\n")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PLAIN_LINE, _PLAIN_LINE, _PLAIN_LINE, _HOSTILE_LINE), max_size=14), st.booleans())
def test_hostile_lines_among_plain_ones_are_given_back_or_read_as_mistune_reads_them(lines, titled):
    _same((_HEAD if titled else "") + "\n".join(lines) + "\n")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=120))
def test_any_text_at_all(text):
    _same(text)
    _same("## A\n" + text)
