"""Front matter read without YAML (memory/entries.plain_front_matter) against python-frontmatter:
every block either reader takes, both read alike, hostile ones included; what the plain reader
cannot read goes to python-frontmatter."""

from __future__ import annotations

import datetime as dt

import frontmatter
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.memory.entries import parse_text, plain_front_matter, render_front_matter, utc_iso


def _lines(text: str) -> list[str] | None:
    """The block's lines when ``text`` has a plain ---…--- block the fast path may take."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0] != "---" or "---" not in lines[1:]:
        return None
    return lines[1:lines.index("---", 1)]


def _agrees(text: str) -> bool:
    """parse_text says what python-frontmatter says of ``text``; True when it read it without YAML."""
    parsed = parse_text(text)
    try:
        meta, valid = dict(frontmatter.loads(text.lstrip("\ufeff").replace("\r\n", "\n")).metadata), True
    except Exception:  # noqa: BLE001 - python-frontmatter raises what YAML raises
        meta, valid = {}, False
    if parsed.has_block:
        assert (parsed.meta, parsed.valid) == (meta, valid), text
    lines = _lines(text)
    return lines is not None and plain_front_matter(lines) is not None


def test_what_memento_writes_is_read_without_yaml_and_as_yaml_reads_it():
    when = dt.datetime(2026, 12, 6, 20, 1, 2, tzinfo=dt.UTC)
    for meta in ({"summary": "Journal 2026-12-06: what each tick did", "priority": "low"},
                 {"summary": "Pin the db image", "updated_at": utc_iso(when), "sources": ["T-7", "src/a b.py"],
                  "tags": ["db", "ci"], "priority": "core", "status": "active", "last_verified": "2026-12-06"},
                 {"summary": 'say "yes" \\ no', "tags": [], "status": "superseded"}):
        text = render_front_matter(meta) + "\n# Body\n"
        assert _agrees(text), text
    got = parse_text(render_front_matter({"updated_at": utc_iso(when), "last_verified": "2026-12-06"})).meta
    assert got == {"updated_at": when, "last_verified": dt.date(2026, 12, 6)}  # as YAML types them


def test_a_persons_plain_summary_is_read_without_yaml():
    assert _agrees("---\nsummary: Pin the db image (it moved), see T-7 — ✅ ok\npriority: core\n---\nbody\n")


@pytest.mark.parametrize("block", [
    "x: yes", "x: No", "x: on", "x: OFF", "x: null", "x: ~", "yes: x", "on: x", "null: x",
    "x: 1", "x: 0x1F", "x: 1_000", "x: 1:20", "x: 1.5", "x: .inf", "x: -1", "x: +1",
    "x: 2026-02-30", "x: 2026-12-06T25:00:00Z", "x: 2026-12-06 20:00:00", "x: 2026-12-06T20:00:00+01:00",
    "x: 2026-12-06T20:00:00.5Z", "x: 20261206",
    "x: a: b", "x: a #comment", "x: a#b", "x: 'single'", 'x: "a\\nb"', 'x: "a\\tb"', 'x: "\\u00e9"', 'x: "a\\/b"',
    'x: "unclosed', 'x: "a" tail', 'x: "a\tb"', "x: a\tb", "x:\ta", "x:  two spaces", "x: trailing ",
    "x: a\x85b", "x: a\u2028b", "x: \ufeffa", "x: a\u00a0b", "x: a\u3000b", "x: a\x7fb", 'x: "a\x85b"',
    "x: a\ue000b", 'x: "\ue000"', "x: a\ufffeb", 'x: "a\u200bb"', "x: 🔴 core",
    "x: \u0662\u0660\u0662\u0666-12-06", "x: 2026-12-06T20:01:0\u0662Z", "x: 2026-12-0\uff16",
    "x: [a, b", "x: [a,b]", "x: [a:b]", "x: [a, [b]]", "x: [1, 2]", "x: [yes]", "x: {a: b}", "x: [a , b]",
    "x: !!str a", "x: &anchor a", "x: *alias", "x: |", "x: >", "x: @a", "x: `a", "x: %a", "x: -a", "x: ?a",
    "x: a\n  continued", "x:\n- a\n- b", "  x: a", "x : a", "x: a\nx: b", "1: a", "-x: a", "x-y: a", "_x: a",
    "# a comment", "", "x: a\n\ny: b", "x: a\n...", "just words", "- a", "x: é", "x: ∞ y",
])
def test_hostile_blocks_are_read_as_python_frontmatter_reads_them(block):
    for text in (f"---\n{block}\n---\nbody\n", f"\ufeff---\r\n{block}\r\n---\r\n", f"---\n{block}\n...\n",
                 f"---\n{block}\n----\n"):
        _agrees(text)


_WORD = st.sampled_from(["a", "Pin", "the", "db", "T-7", "src/a.py", "(it)", "—", "✅", "é", "yes", "no", "on", "\u0662",
                         "null", "1", "1.5", "2026-12-06", "2026-12-06T20:01:02Z", "2026-02-30", "a:b", ":", "#",
                         "'", '"', "\\", "[", "]", "{", "}", ",", "&", "*", "!", "|", ">", "%", "@", "`", "?", "-",
                         "\t", "\x85", "\u2028", "\u00a0", "\ufeff", ".inf", "~", "0x1F"])
_VALUE = st.one_of(
    st.lists(_WORD, min_size=1, max_size=4).map(" ".join),
    st.lists(_WORD, max_size=4).map(lambda ws: '"' + " ".join(ws).replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.lists(st.one_of(_WORD, _WORD.map(lambda w: f'"{w}"')), max_size=4).map(lambda ws: "[" + ", ".join(ws) + "]"),
    st.just(""),
)
_KEY = st.sampled_from(["summary", "tags", "sources", "priority", "updated_at", "x_y", "x-y", "yes", "on", "1", "_k"])
_LINE = st.one_of(st.tuples(_KEY, _VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}" if kv[1] else f"{kv[0]}:"),
                  st.sampled_from(["", "# c", "  indented: a", "- item", "..."]))


_SAFE = st.sampled_from(["a", "Pin", "the", "db", "T-7", "src/a.py", "(it)", "—", "✅", "é", "x_y", "a/b+c"])
_PLAIN_VALUE = st.one_of(
    st.lists(_SAFE, min_size=1, max_size=4).map(" ".join).filter(lambda v: v[0].isascii() and v[0].isalpha()),
    st.lists(st.one_of(_SAFE, _WORD), max_size=4).map(lambda ws: '"' + " ".join(ws).replace("\\", "\\\\")
                                                       .replace('"', '\\"') + '"'),
    st.lists(st.one_of(_SAFE, _SAFE.map(lambda w: f'"{w}"')), max_size=4).map(lambda ws: "[" + ", ".join(ws) + "]"),
    st.sampled_from(["2026-12-06", "2026-12-06T20:01:02Z", "", "2026-12-0\u0666", "2026-12-06T20:01:0\u0662Z"]),
)
_PLAIN_BLOCK = st.dictionaries(st.sampled_from(["summary", "tags", "sources", "priority", "updated_at", "x-y", "_k"]),
                               _PLAIN_VALUE, max_size=6).map(
    lambda meta: [f"{k}: {v}" if v else f"{k}:" for k, v in meta.items()])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PLAIN_BLOCK)
def test_any_plain_block_is_read_as_python_frontmatter_reads_it(lines):
    _agrees("---\n" + "\n".join(lines) + "\n---\nbody\n")


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, max_size=6))
def test_any_block_is_read_as_python_frontmatter_reads_it(lines):
    _agrees("---\n" + "\n".join(lines) + "\n---\nbody\n")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["summary", "tags", "sources", "priority", "status", "other"]),
                       st.one_of(st.text(max_size=20), st.lists(st.text(max_size=8), max_size=3)), max_size=5))
def test_any_block_memento_renders_is_read_as_python_frontmatter_reads_it(meta):
    _agrees(render_front_matter(meta) + "body\n")
