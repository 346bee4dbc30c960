"""checks/continuity.py: the eight checks of the continuity doctor on docs/CURRENT_STATE.md (exists,
fresh, template, active work, unsurfaced results, archive, recovery priority, alignment with the
plan), each case its exact lines and exit code (SPEC §8)."""

from __future__ import annotations

import os

import pytest

from memento_core import checkpoint
from memento_core.state import TickState
from tests.core.doctor.doctorhelp import T0, commit, edit, judge, line_of


def _missing(ws):
    ws.checkpoint_path.unlink()
    return ["[CRITICAL] docs/CURRENT_STATE.md does not exist: no deterministic recovery point "
            "(the next tick writes it)"], 2


def _stale(ws):
    state = TickState.load(ws)
    state.last_tick_finished = "2026-01-01T02:00:00Z"
    state.save(ws)
    os.utime(ws.checkpoint_path, (T0, T0))
    for log in ws.logs_dir.glob("tick_*.log"):
        os.utime(log, (T0 + 3600, T0 + 3600))
    return ["[WARNING] docs/CURRENT_STATE.md is stale: written 2026-01-01T00:00:00Z, 2h00m before "
            "the last tick (#1) finished (2026-01-01T02:00:00Z)"], 1


def _stale_log(ws):
    state = TickState.load(ws)
    state.last_tick_finished = "2026-01-01T00:00:00Z"
    state.save(ws)
    os.utime(ws.checkpoint_path, (T0, T0))
    log = sorted(ws.logs_dir.glob("tick_*.log"))[-1]
    os.utime(log, (T0 + 90, T0 + 90))
    return [f"[WARNING] docs/CURRENT_STATE.md is stale: written 2026-01-01T00:00:00Z, 1m30s before "
            f"the newest tick log {ws.rel(log)} was written (2026-01-01T00:01:30Z)"], 1


def _section_missing(ws):
    text = ws.checkpoint_path.read_text()
    start = text.index("## Blockers")
    end = text.index("## Unsurfaced Results")
    ws.checkpoint_path.write_text(text[:start] + text[end:])
    return ["[WARNING] docs/CURRENT_STATE.md: the `## Blockers` section is missing "
            "(every section is mandatory; write None)"], 1


def _placeholder(ws):
    edit(ws.checkpoint_path, "## Key Decisions\n", "## Key Decisions\n- [Decision 1: what was decided and why]\n")
    line = line_of(ws.checkpoint_path, "[Decision 1")
    return [f"[INFO] docs/CURRENT_STATE.md:{line}: the `## Key Decisions` section still shows placeholder text: "
            "[Decision 1: what was decided and why]"], 0


def _objective_placeholder(ws):
    text = ws.checkpoint_path.read_text()
    objective = checkpoint.parse_checkpoint(text).objective
    edit(ws.checkpoint_path, objective, "[One sentence: what are we trying to accomplish]")
    line = line_of(ws.checkpoint_path, "[One sentence")
    return [
        f"[WARNING] docs/CURRENT_STATE.md:{line}: the `## Objective` section still shows placeholder text: "
        "[One sentence: what are we trying to accomplish]",
        f"[WARNING] docs/CURRENT_STATE.md:{line - 1}: 7 task(s) are open but the Objective is empty or "
        "placeholder text",
        f"[INFO] docs/CURRENT_STATE.md:{line - 1}: the Objective does not name the active phase (Phase 1: Foundation)",
    ], 1


def _next_action_none(ws):
    text = ws.checkpoint_path.read_text()
    action = " ".join(checkpoint.read_sections(text)["Next Action"])
    edit(ws.checkpoint_path, action, "None")
    line = line_of(ws.checkpoint_path, "## Next Action")
    return [
        f"[WARNING] docs/CURRENT_STATE.md:{line}: recovery state exists but Next Action is empty, None or "
        "placeholder text",
        f"[INFO] docs/CURRENT_STATE.md:{line}: Next Action names no task, but the next task is T-102 "
        "(Add and subtract)",
    ], 1


def _unsurfaced(ws):
    edit(ws.checkpoint_path, "## Unsurfaced Results\nNone", "## Unsurfaced Results\n- T-101 passed, commit abc1234")
    line = line_of(ws.checkpoint_path, "## Unsurfaced Results")
    return [f"[WARNING] docs/CURRENT_STATE.md:{line}: Unsurfaced Results lists 1 result(s) nobody acknowledged "
            "(T-101): review them, then `memento ack`"], 1


def _archive(ws):
    folder = ws.memory_dir / "session_archive"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "2026-01-01T000000Z.md").write_text(
        "# Current State\n> Last updated: 2026-01-01T00:00:00Z\n\n## Objective\nShop API: Phase 9 (0/1 tasks done)\n")
    return ['[INFO] archive objective differs from current objective (task switch?): '
            'memory/session_archive/2026-01-01T000000Z.md says "Shop API: Phase 9 (0/1 tasks done)", the checkpoint '
            'says "calc (Memento demo): Phase 1: Foundation (1/8 tasks done)"'], 0


def _prompt_without_checkpoint(ws):
    prompt = ws.memento_dir / "prompts" / "T-101.md"
    text = prompt.read_text()
    prompt.write_text(text.split("## docs/CURRENT_STATE.md")[0])
    return ["[WARNING] the worker of T-101 (tick #1) was not given the checkpoint: "
            ".memento/prompts/T-101.md has no docs/CURRENT_STATE.md section"], 1


def _system_prompt_without_rule(ws):
    ws.system_prompt_path.write_text("# Worker\nDo the task.\n")
    commit(ws, "scripts/tick_worker_system_prompt.md")
    return ["[WARNING] scripts/tick_worker_system_prompt.md does not tell the worker to surface the recovered "
            "state of CURRENT_STATE.md first"], 1


def _greeting(ws):
    log = sorted(ws.logs_dir.glob("tick_*.log"))[0]
    text = log.read_text()
    lines = text.splitlines(keepends=True)
    lines.insert(1, "Hello! How can I help you today?\n")
    log.write_text("".join(lines))
    os.utime(ws.checkpoint_path)  # the checkpoint stays the newest file
    return [f"[WARNING] {ws.rel(log)}:2: the worker of T-101 opened with a greeting instead of the recovered "
            "state: Hello! How can I help you today?"], 1


def _misaligned(ws):
    edit(ws.checkpoint_path, "Next tick runs T-102", "Next tick runs T-201")
    line = line_of(ws.checkpoint_path, "## Next Action")
    return [f"[INFO] docs/CURRENT_STATE.md:{line}: Next Action names T-201, but the next task is T-102 "
            "(Add and subtract)"], 0


CASES = {
    "checkpoint missing": _missing,
    "checkpoint older than the last tick": _stale,
    "checkpoint older than the newest log": _stale_log,
    "section missing": _section_missing,
    "placeholder text": _placeholder,
    "objective placeholder": _objective_placeholder,
    "next action none": _next_action_none,
    "unsurfaced results": _unsurfaced,
    "archive differs": _archive,
    "prompt without checkpoint": _prompt_without_checkpoint,
    "system prompt without the rule": _system_prompt_without_rule,
    "worker greets": _greeting,
    "next action names another task": _misaligned,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_check_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)
