"""prompt.py (SPEC §4 step 9): the worker prompt built from the files alone — the task's own block
as the plan holds it now, its rules, the notes for it (a person's answer apart), its last failed
attempts with the acceptance review's findings, the map, the checkpoint and memory's tree."""

from __future__ import annotations

from datetime import UTC, datetime

from memento_core import notes, status_log
from memento_core.plan.scan import parse_plan, parse_plan_text
from memento_core.prompt import (
    MAX_ATTEMPTS,
    build_prompt,
    read_capped,
    review_findings,
    review_findings_path,
    task_block,
)
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace

NOW = datetime(2026, 1, 2, tzinfo=UTC)
PLAN = """# MASTER_PLAN: shop

## Meta
- tick_mode: auto
- max_diff_lines: 123

## Phase 1: Build

- [ ] `T-1` [MODULE:api] Write the api
  - verify: `pytest -q tests/test_api.py`
  - context_files: [src/api.py, tests/test_api.py]
  - guard_files: [src/secret.py]
  - accept: returns 200
- [ ] `T-2` [MODULE:db] Write the store
  - verify: `true`
  - context_files: [src/db.py]
"""


def shop(tmp_path) -> tuple[Workspace, object]:
    init_workspace(tmp_path / "shop", project="shop", commit=False)
    ws = Workspace(tmp_path / "shop")
    ws.plan_path.write_text(PLAN)
    plan = parse_plan(ws.plan_path)
    return ws, plan


def failed(ws: Workspace, tick: int, stamp: str, **fields: str) -> None:
    rows = [("Task", "T-1 [MODULE:api] Write the api"), ("Status", "❌ FAILED (retry 1/3)"),
            *[(k.replace("_", " "), v) for k, v in fields.items()]]
    status_log.append_entry(ws.status_path, status_log.format_entry(stamp, tick, rows))


def test_the_prompt_holds_the_task_block_its_rules_and_the_documents(tmp_path):
    ws, plan = shop(tmp_path)
    ws.system_prompt_path.write_text("You are the worker.\n")
    text, given = build_prompt(ws, plan, plan.task("T-1"))
    assert text.startswith("You are the worker.\n\n---\n\n# Your task: T-1\n")
    assert f"Project: shop. Phase: Phase 1. Work in `{ws.root}`." in text
    assert "  - accept: returns 200\n" in text and "Write the store" not in text  # the block, and only it
    assert "- verify (must exit 0): `pytest -q tests/test_api.py`" in text
    assert "- you may change only: src/api.py, tests/test_api.py" in text
    assert "- never change: src/secret.py; nor docs/PROJECT_MAP.md" in text
    assert "- at most 123 changed lines in total" in text
    assert "## docs/PROJECT_MAP.md" in text and "## docs/CURRENT_STATE.md" in text and given == []
    assert "You are the worker." not in build_prompt(ws, plan, plan.task("T-1"), include_system=False)[0]
    ws.map_path.unlink()
    ws.checkpoint_path.unlink()
    assert build_prompt(ws, plan, plan.task("T-2"))[0].count("(missing)") == 2


def test_notes_for_the_task_are_given_and_a_persons_answer_stands_apart(tmp_path):
    ws, plan = shop(tmp_path)
    notes.add_note(ws.notes_path, "Keep handlers small.", target="T-1", now=NOW)
    notes.add_note(ws.notes_path, "Use sqlite.", target="T-2", now=NOW)
    notes.add_note(ws.notes_path, "Prefer the standard library.", now=NOW)
    notes.add_note(ws.notes_path, "Redis.", target="T-1", now=NOW, kind=notes.ANSWER, source="telegram")
    text, given = build_prompt(ws, plan, plan.task("T-1"))
    assert sorted(n.text for n in given) == ["Keep handlers small.", "Prefer the standard library.", "Redis."]
    assert "Use sqlite." not in text
    assert "## Your question and the answer on T-1" in text and ", from telegram)" in text
    answer_at, notes_at = text.index("Redis."), text.index("## Notes from people")
    assert answer_at < notes_at < text.index("Keep handlers small.")


def test_the_last_failed_attempts_are_shown_and_a_review_s_findings_with_them(tmp_path):
    ws, plan = shop(tmp_path)
    for n in range(1, MAX_ATTEMPTS + 2):
        failed(ws, n, f"2026-01-01T00:0{n}:00Z", Reason=f"verify failed #{n}")
    failed(ws, 9, "2026-01-01T00:09:00Z", Reason="review: 1 criterion failed",
           Findings="[PASS] 1: returns 200 [FAIL] 2: names the version")
    text = build_prompt(ws, plan, plan.task("T-1"))[0]
    assert f"## Previous failed attempts of T-1 ({MAX_ATTEMPTS})" in text
    assert "verify failed #1" not in text and "verify failed #2" not in text and "verify failed #3" in text
    assert "## The acceptance review of the last attempt of T-1 failed" in text
    assert "- [PASS] 1: returns 200\n- [FAIL] 2: names the version" in text
    # This host's own findings file wins when it is that attempt's (the entry's field is a summary).
    last = status_log.failed_attempts(status_log.parse_status(ws.status_path), "T-1")[-1]
    review_findings_path(ws, "T-1").parent.mkdir(parents=True, exist_ok=True)
    review_findings_path(ws, "T-1").write_text(f"Review of the attempt at {last.timestamp}: FAIL\n\nall of it\n")
    assert review_findings(ws, "T-1", last) == f"Review of the attempt at {last.timestamp}: FAIL\n\nall of it"
    review_findings_path(ws, "T-1").write_text("Review of the attempt at 2025-12-31T00:00:00Z: FAIL\n\nolder\n")
    assert review_findings(ws, "T-1", last).endswith("- [PASS] 1: returns 200\n- [FAIL] 2: names the version\n")
    earlier = status_log.failed_attempts(status_log.parse_status(ws.status_path), "T-1")[-2]
    assert review_findings(ws, "T-1", earlier) == ""  # not a review's failure


def test_the_task_block_is_found_in_the_plan_as_it_is_now(tmp_path):
    task = parse_plan_text(PLAN).task("T-2")
    moved = PLAN.replace("- max_diff_lines: 123\n", "- max_diff_lines: 123\n- total_ticks: 4\n- completed_tasks: 0\n")
    assert task_block(moved, task) == "- [ ] `T-2` [MODULE:db] Write the store\n  - verify: `true`\n" \
                                      "  - context_files: [src/db.py]"
    twice = PLAN + "- [ ] `T-2` The second of that id\n  - verify: `false`\n"
    second = parse_plan_text(twice).tasks[-1]
    assert task_block(twice, second).startswith("- [ ] `T-2` The second of that id")  # the one nearest
    crlf = PLAN.replace("\n", "\r\n")
    assert "\r" not in task_block(crlf, task)


def test_a_document_is_capped_with_a_note_and_an_unreadable_one_is_empty(tmp_path):
    doc = tmp_path / "PROJECT_MAP.md"
    doc.write_text("  " + "x" * 50 + "\n")
    assert read_capped(doc, 60) == read_capped(doc, 53) == "x" * 50
    assert read_capped(doc, 52).endswith("… (1 more characters in PROJECT_MAP.md)")
    assert read_capped(doc, 20) == "x" * 18 + "\n… (33 more characters in PROJECT_MAP.md)"
    assert read_capped(tmp_path / "missing.md") == ""
