"""The memento command line, run as a real subprocess against real workspaces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"
PLAN = "docs/MASTER_PLAN.md"


def memento(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_lint_exit_codes_and_located_messages(ws: Path):
    plan = ws / PLAN
    plan.write_text(plan.read_text() + "\n- [ ] T-102 Second\n  - context_files: []\n")
    r = memento("lint", cwd=ws / "docs")  # found by searching upwards
    assert r.returncode == 2
    assert "[error] docs/MASTER_PLAN.md:31: T-102 has no verify command" in r.stderr
    plan.write_text(plan.read_text() + "  - verify: true\n- [ ] not a task\n")
    r = memento("lint", str(ws))
    assert r.returncode == 1 and "[warn] docs/MASTER_PLAN.md:34: checkbox line without a task id" in r.stdout


BAD_INPUTS = {
    "empty": (b"", "docs/MASTER_PLAN.md:1: the plan is empty"),
    "non_utf8": (b"# MASTER_PLAN: x\n\n## Phase 1: a\n\xc3\x28 broken\n", "docs/MASTER_PLAN.md:4: not valid UTF-8"),
    "binary": (bytes(range(256)) * 20, "docs/MASTER_PLAN.md:2: not valid UTF-8 (byte 0x80)"),
    "duplicate": ((FIXTURES / "spec_example_plan.md").read_bytes().replace(
        b"## Phase 2", b"- [ ] T-101 again\n  - verify: true\n  - context_files: []\n\n## Phase 2"),
        "T-101 duplicate task id (first defined on line 23)"),
    "cycle": (b"# MASTER_PLAN: c\n## Meta\n- max_retries: 3\n## Phase 1: a (depends on Phase 2)\n## Phase 2: b (depends on Phase 1)\n",
              "dependency cycle: Phase 1 → Phase 2 → Phase 1"),
    "no_verify": (b"# MASTER_PLAN: v\n## Meta\n- max_retries: 3\n## Phase 1: a\n- [ ] T-1 t\n  - context_files: []\n",
                  "docs/MASTER_PLAN.md:5: T-1 has no verify command"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_plans_get_one_clear_line_and_exit_2(ws: Path, name: str):
    data, expected = BAD_INPUTS[name]
    (ws / PLAN).write_bytes(data)
    for cmd in (("lint",), ("status",), ("status", "--json")):
        r = memento(*cmd, str(ws))
        out = r.stdout + r.stderr
        assert "Traceback" not in out
        if cmd == ("lint",) or name in ("non_utf8", "binary"):
            assert r.returncode == 2, (cmd, out)
            assert expected in out, (cmd, out)


def test_huge_plan_and_missing_workspace(tmp_path: Path, ws: Path):
    sys.path.insert(0, str(Path(__file__).parents[3] / "bench"))
    from plangen import big_plan

    text = big_plan(22_000)
    assert len(text) > 5_000_000
    (ws / PLAN).write_text(text)
    r = memento("status", "--json", str(ws))
    assert r.returncode == 1, r.stderr  # nothing will tick here (no cron entry): it says IDLE
    assert json.loads(r.stdout)["counts"]["total"] == 22_000
    empty = tmp_path / "nothing"
    empty.mkdir()
    r = memento("status", cwd=empty)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("[error] no Memento workspace at or above")
    r = memento("lint", str(tmp_path / "missing"))
    assert r.returncode == 2 and "no such directory" in r.stderr
    (ws / "docs" / "MASTER_PLAN.md").unlink()
    (ws / "docs" / "MASTER_PLAN.md").mkdir()
    r = memento("lint", str(ws))
    assert r.returncode == 2 and "is a directory" in r.stderr and "Traceback" not in r.stderr


def test_status_json_document(ws: Path):
    (ws / PLAN).write_text((FIXTURES / "skill_template_plan.md").read_text().replace("- [ ] `T-101`", "- [x] `T-101`")
                           .replace("- [ ] `T-102`", "- [!] `T-102`"))
    doc = json.loads(memento("status", "--json", str(ws)).stdout)
    assert doc["state"] == "BLOCKED" and doc["tick_mode"] == "auto"
    assert doc["counts"] == {"total": 4, "done": 1, "pending": 2, "blocked": 1, "in_progress": 0, "skipped": 0,
                             "questions": 0}
    assert [(p["id"], p["done"], p["total"], p["open"]) for p in doc["phases"]] == [
        ("Phase 1", 1, 2, True), ("Phase 2", 0, 1, False), ("Phase 3", 0, 1, False)]
    assert doc["blocked"][0]["id"] == "T-102"
    assert doc["next"]["kind"] == "blocked" and "Phase 1 has unresolved [!] tasks" in doc["next"]["message"]
    r = memento("status", str(ws))
    assert r.returncode == 1 and "[warn] T-102 blocked after 0 retries" in r.stdout


def test_status_reads_the_plan_once(ws: Path, monkeypatch):
    # 10,000 tasks take tens of milliseconds to read: the summary and "needs you" share one reading.
    import memento_core.plan.scan
    from memento_core.cli.commands.status import status_document
    from memento_core.workspace import Workspace

    read, real = [], memento_core.plan.scan.parse_plan
    monkeypatch.setattr(memento_core.plan.scan, "parse_plan", lambda *a, **k: read.append(a) or real(*a, **k))
    (ws / PLAN).write_text((FIXTURES / "skill_template_plan.md").read_text().replace("- [ ] `T-102`", "- [!] `T-102`"))
    doc = status_document(Workspace.find(ws))
    assert len(read) == 1 and [n["task"] for n in doc["needs_you"] if n.get("task")] == ["T-102"]


def test_mode_reset_skip_note_edit_the_files(ws: Path):
    plan = ws / PLAN
    before = plan.read_bytes().splitlines()
    assert memento("resume", str(ws)).stdout == "[ok] tick_mode: auto (was paused)\n"
    after = plan.read_bytes().splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [4]
    assert b"- tick_mode: auto        <!--" in after[4]
    assert memento("stop", "--project", str(ws)).returncode == 0
    assert b"tick_mode: stopped" in plan.read_bytes()
    r = memento("skip", "T-101", str(ws))
    assert r.returncode == 2 and "--reason" in r.stderr
    assert memento("skip", "T-101", "--reason", "done by hand", str(ws)).returncode == 0
    assert "- [-] `T-101`" in plan.read_text() and "  - reason: done by hand" in plan.read_text()
    assert memento("reset", "T-101", str(ws)).returncode == 0
    assert "- [ ] `T-101`" in plan.read_text()
    r = memento("reset", "T-999", str(ws))
    assert r.returncode == 2 and "T-999 is not in the plan" in r.stderr
    assert memento("note", "--task", "T-101", "[bold red]literal[/]", str(ws)).returncode == 0
    assert memento("note", "for everyone", "--project", str(ws)).returncode == 0
    notes = (ws / "docs/HUMAN_NOTES.md").read_text()
    assert "→ T-101\n[bold red]literal[/]\n" in notes and "→ global\nfor everyone\n" in notes
    r = memento("note", "--task", "T-5", "x", str(ws))
    assert r.returncode == 2 and "T-5 is not in docs/MASTER_PLAN.md" in r.stderr


def test_status_names_a_broken_config_the_breaker_and_no_task_for_an_invalid_plan(ws: Path):
    (ws / "memento.toml").write_text("[agent\n")
    r = memento("status", str(ws))
    assert r.returncode == 1 and "[error] " in r.stdout and "memento.toml:1:" in r.stdout
    (ws / "memento.toml").write_text("")
    from memento_core.state import TickState
    from memento_core.workspace import Workspace

    state = TickState(breaker_reason="5 consecutive ticks attempted work and passed nothing", breaker_at="now")
    state.save(Workspace(ws))
    doc = json.loads(memento("status", "--json", str(ws)).stdout)
    assert doc["breaker"] == {"tripped": True, "reason": "5 consecutive ticks attempted work and passed nothing",
                              "at": "now"}
    assert "[warn] circuit breaker tripped at now: 5 consecutive" in memento("status", str(ws)).stdout
    (ws / PLAN).write_text((ws / PLAN).read_text() + "\n- [ ] T-101 again\n  - verify: true\n  - context_files: []\n")
    doc = json.loads(memento("status", "--json", str(ws)).stdout)
    assert doc["state"] == "INVALID" and doc["next"]["kind"] == "invalid" and doc["next"]["task"] is None
