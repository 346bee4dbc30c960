"""docs/CURRENT_STATE.md after real ticks of the demo project (SPEC §8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memento_core import checkpoint, doctor
from memento_core.cli.main import main
from memento_core.demo import create_demo
from memento_core.locks import file_lock
from memento_core.plan.scan import parse_plan
from memento_core.scheduler import pick
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace


@pytest.fixture
def demo(tmp_path: Path, git_identity) -> Workspace:
    return Workspace(create_demo(tmp_path / "calc"))


def sections(ws: Workspace) -> dict[str, list[str]]:
    return checkpoint.read_sections(ws.checkpoint_path.read_text(encoding="utf-8"))


def not_ok(ws: Workspace) -> list[doctor.Finding]:
    """What the doctor finds wrong, leaving out the sandbox check (it warns where bubblewrap cannot run)."""
    return [f for f in doctor.check_workspace(ws) if f.severity != "OK" and f.check != "sandbox"]


def test_after_ticks_the_checkpoint_is_short_names_the_next_task_and_lists_results_until_ack(demo, capsys):
    for _ in range(3):
        assert run_tick(demo.root).exit_code == 0
    text = demo.checkpoint_path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= checkpoint.MAX_LINES
    found = sections(demo)
    assert list(found) == list(checkpoint.SECTIONS)
    plan = parse_plan(demo.plan_path)
    assert pick(plan).task.id == "T-202"
    assert found["Next Action"] == ["Next tick runs T-202 [MODULE:parse] Evaluate simple expressions (Phase 2)"]
    assert found["Objective"] == ["calc (Memento demo): Phase 2: Features (3/8 tasks done)"]
    # The checkpoint is in the tick's commit, so it cannot name that commit's sha.
    assert found["Current Step"][0] == "Tick #3: T-201 Multiply and divide — ✅ SUCCESS"
    assert [line.split()[0] for line in found["Unsurfaced Results"]] == ["T-101", "T-102", "T-201"]
    # the doctor: everything fine but the results nobody has seen yet
    assert [(f.severity, f.check) for f in not_ok(demo)] == [("WARNING", "unsurfaced-results")]

    assert main(["ack", str(demo.root)]) == 0
    assert "[ok] acknowledged 3 result(s): T-101, T-102, T-201" in capsys.readouterr().out
    assert sections(demo)["Unsurfaced Results"] == ["None"]
    assert TickState.load(demo).unsurfaced == []
    assert not_ok(demo) == []

    assert run_tick(demo.root).exit_code == 0  # T-202 passes: only it is new
    found = sections(demo)
    assert [line.split()[0] for line in found["Unsurfaced Results"]] == ["T-202"]
    assert found["Next Action"] == ["Next tick runs T-301 [MODULE:cli] Command line entry point (Phase 3)"]
    assert main(["ack", str(demo.root)]) == 0
    assert main(["ack", str(demo.root)]) == 0
    assert "[ok] nothing to acknowledge" in capsys.readouterr().out.splitlines()[-1]


def test_a_person_written_key_decision_survives_the_next_tick(demo):
    run_tick(demo.root)
    text = demo.checkpoint_path.read_text(encoding="utf-8")
    decision = "Keep __init__.py empty: **imports** stay explicit (agreed with Ana)"
    text = text.replace("## Key Decisions\n", f"## Key Decisions\n- {decision}\n", 1)
    demo.checkpoint_path.write_text(text, encoding="utf-8")
    assert run_tick(demo.root).exit_code == 0
    decisions = sections(demo)["Key Decisions"]
    assert decisions[0] == decision
    # Memento's own decisions (the demo's note) are there too, still at most three in all
    assert any(d.startswith("Note for T-202 (") for d in decisions)
    assert len(decisions) <= checkpoint.MAX_DECISIONS
    assert run_tick(demo.root).exit_code == 0
    assert sections(demo)["Key Decisions"][0] == decision


def test_a_change_of_objective_freezes_the_previous_checkpoint_into_the_archive(demo):
    run_tick(demo.root)
    archive = demo.memory_dir / "session_archive"
    assert not archive.exists() or not list(archive.iterdir())  # the init template had no work to keep
    before = demo.checkpoint_path.read_text(encoding="utf-8")
    run_tick(demo.root)  # T-102 passes: Phase 1 is finished, the objective moves to Phase 2
    frozen = sorted(archive.glob("*.md"))
    assert len(frozen) == 1
    assert frozen[0].read_text(encoding="utf-8") == before
    assert "Phase 2: Features" in sections(demo)["Objective"][0]
    run_tick(demo.root)  # same phase: no new archive
    assert len(list(archive.glob("*.md"))) == 1
    assert [f.check for f in not_ok(demo) if f.check == "archive-consistency"] == []


def test_a_blocked_pipeline_tells_a_person_what_to_do(demo):
    for _ in range(12):
        run_tick(demo.root)
    found = sections(demo)
    assert found["Next Action"][0].startswith("A person: T-304 blocked")
    assert "`memento reset T-304`" in found["Next Action"][0]
    assert found["Blockers"][0].startswith("T-304 Factor numbers with a quantum computer — blocked after 3 retries")
    assert len(demo.checkpoint_path.read_text(encoding="utf-8").splitlines()) <= checkpoint.MAX_LINES
    checks = {f.check for f in not_ok(demo)}
    assert "checkpoint-template" not in checks and "active-work" not in checks and "plan-alignment" not in checks


def test_many_results_and_blockers_stay_within_forty_lines(demo):
    state = TickState(unsurfaced=[{"task": f"T-{900 + i}", "title": "x" * 40, "commit": "abc1234",
                                   "at": "2026-01-01T00:00:00Z"} for i in range(20)])
    plan = parse_plan(demo.plan_path)
    text = checkpoint.render(demo, plan, state, decisions=["one", "two", "three", "four"])
    lines = text.splitlines()
    assert len(lines) <= checkpoint.MAX_LINES
    found = checkpoint.read_sections(text)
    assert list(found) == list(checkpoint.SECTIONS)
    assert found["Unsurfaced Results"][-1].startswith("… and ")
    assert found["Key Decisions"] == ["one", "two", "three", "four"]  # a person's are never dropped


def test_an_idle_tick_does_not_rewrite_the_checkpoint(demo):
    for _ in range(12):
        run_tick(demo.root)
    before = demo.checkpoint_path.read_bytes()
    run_tick(demo.root)  # blocked, nothing to pick
    assert demo.checkpoint_path.read_bytes() == before


def test_acknowledging_while_a_tick_runs_is_remembered(demo):
    run_tick(demo.root)
    with file_lock(demo.tick_lock_path, blocking=False):
        assert checkpoint.acknowledge(demo) == 1
    # the running tick would save the state it loaded: the results stay acknowledged anyway
    assert len(TickState.load(demo).unsurfaced) == 1
    assert sections(demo)["Unsurfaced Results"] == ["None"]
    run_tick(demo.root)
    assert [line.split()[0] for line in sections(demo)["Unsurfaced Results"]] == ["T-102"]
    assert checkpoint.acknowledge(demo) == 1
    assert TickState.load(demo).unsurfaced == []
    assert not (demo.memento_dir / checkpoint.ACK_FILE).exists()


def test_the_worker_prompt_carries_the_checkpoint_and_the_recovery_rule(demo):
    run_tick(demo.root)
    run_tick(demo.root)
    prompt = (demo.memento_dir / "prompts" / "T-102.md").read_text(encoding="utf-8")
    assert "## Recovery priority" in prompt
    assert "## docs/CURRENT_STATE.md" in prompt
    assert "Tick #1: T-101 Create the calc package — ✅ SUCCESS" in prompt


def test_ack_as_a_subprocess_on_bad_input_prints_no_traceback(tmp_path):
    r = subprocess.run([sys.executable, "-m", "memento_core.cli", "ack", str(tmp_path)], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert r.stderr.startswith("[error] ")
