"""The memory tree in the worker prompt: ≤ 1000 paths, folders folded, within a size budget."""

from __future__ import annotations

import re

from memento_core.memory import tree_for_prompt
from memento_core.memory.tree import MAX_PATHS, PROMPT_BUDGET, fold

LONG = "x" * 300


def fill(ws, folder: str, n: int, summary: str = "") -> None:
    d = ws.memory_dir / folder
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"entry-{i:05d}.md").write_text(f"---\nsummary: {summary or 'lesson'} {i}\n---\nbody\n")


def entry_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("- ")]


def test_5000_entries_fold_to_1000_lines_within_budget(ws):
    fill(ws, "knowledge/lessons", 4000, LONG)
    fill(ws, "knowledge/decisions", 980, "decided")
    fill(ws, "knowledge/people", 10, "person")
    text = tree_for_prompt(ws)
    lines = entry_lines(text)
    assert len(lines) <= MAX_PATHS and len(text) <= PROMPT_BUDGET
    # The crowded folder is folded into one line; the small ones stay listed entry by entry.
    assert any(re.match(r"- knowledge/lessons/ \(4000 entries, folded", ln) for ln in lines)
    assert "- knowledge/people/entry-00009.md — person 9" in lines
    assert sum(ln.startswith("- knowledge/decisions/entry-") for ln in lines) == 980


def test_summaries_shrink_before_entries_disappear(ws):
    fill(ws, "knowledge/lessons", 900, LONG)
    text = tree_for_prompt(ws, budget=100_000)
    lines = entry_lines(text)
    assert len(lines) == 900 and len(text) <= 100_000
    assert lines[0] == "- knowledge/lessons/entry-00000.md — " + "x" * 39 + "…"
    tiny = tree_for_prompt(ws, budget=5_000)
    assert len(tiny) <= 5_000 and entry_lines(tiny)


def test_fold_prefers_the_deepest_crowded_folder():
    paths = [f"a/b/{i}.md" for i in range(50)] + [f"a/{i}.md" for i in range(5)] + ["c.md"]
    lines = fold(paths, 10)
    assert ("a/b/", 50) in lines and ("c.md", 0) in lines and len(lines) == 7


def test_persona_and_tree_reach_the_prompt_and_archive_does_not(ws):
    (ws.memory_dir / "PERSONA.md").write_text("Prefer small commits.\n")
    fill(ws, "knowledge/lessons", 2, "useful")
    (ws.memory_dir / ".archive" / "journal").mkdir(parents=True)
    (ws.memory_dir / ".archive" / "journal" / "2020-01-01.md").write_text("old\n")
    text = tree_for_prompt(ws)
    assert "- knowledge/lessons/entry-00001.md — useful 1" in text
    assert "Prefer small commits." in text and ".archive" not in text


def test_no_memory_no_section(tmp_path):
    from memento_core.workspace import Workspace

    assert tree_for_prompt(Workspace(tmp_path)) == ""
