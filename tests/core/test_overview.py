"""What the dashboard's header word and its "Needs you" strip are made of (memento_core.overview, cron)."""

from __future__ import annotations

from pathlib import Path

from memento_core import cron, overview
from memento_core.cli.main import main
from memento_core.demo import create_demo
from memento_core.notes import add_note, parse_notes
from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.workspace import Workspace


def word(summary, state=None, **kw):
    kw = {"cron_installed": False, "cron_daemon": False, "auto_tick": False, **kw}
    return overview.pipeline_word(summary, state or TickState(), **kw)


def test_running_only_when_something_will_tick():
    runnable = {"plan_state": "RUNNING"}
    assert word(runnable) == ("IDLE", "nothing will tick (no cron entry, auto-tick off)")
    assert word(runnable, auto_tick=True) == ("RUNNING", "auto-tick")
    assert word(runnable, cron_installed=True, cron_daemon=True) == ("RUNNING", "cron")
    idle, why = word(runnable, cron_installed=True, cron_daemon=False)
    assert idle == "IDLE" and "no cron daemon" in why


def test_a_refused_dirty_tree_is_not_running():
    state = TickState(dirty_signature="calc/ops.py\nREADME.md")
    assert word({"plan_state": "RUNNING"}, state, auto_tick=True) == (
        "REFUSED", "uncommitted changes: calc/ops.py, README.md")
    assert word({"plan_state": "BLOCKED"}, state)[0] == "REFUSED"  # the tick stops at the dirty tree first
    assert word({"plan_state": "PAUSED"}, state)[0] == "PAUSED"  # a paused tick never looks at the tree
    for plain in ("BLOCKED", "COMPLETE", "STOPPED", "INVALID"):
        assert word({"plan_state": plain}, auto_tick=True) == (plain, "")


def test_needs_you_is_empty_when_nothing_is_needed():
    assert overview.needs_you({"state": "RUNNING", "blocked": []}, TickState(), None) == []


def test_needs_you_lists_what_a_person_must_do(tmp_path: Path, git_identity):
    root = create_demo(tmp_path / "calc")
    ws = Workspace(root)

    def apply(e) -> None:
        e.set_status("T-101", "x")
        e.set_status("T-201", "!")
        e.set_field("T-201", "retries", "3")

    edit_plan(ws.plan_path, apply)
    add_note(ws.notes_path, "use ints", target="T-101")
    plan = parse_plan(ws.plan_path)
    summary = overview.summarize(ws, plan, [])
    summary["sandbox"] = {"mode": "none", "confined": False, "reason": "bwrap is not installed"}
    summary["rate_limit"] = {"until": "2026-12-01T12:00:00Z", "preset": "claude"}
    state = TickState(breaker_reason="5 consecutive ticks attempted work and passed nothing",
                      dirty_signature="calc/ops.py")
    notes = [n for n in parse_notes(ws.notes_path) if n.target == "T-101"]
    needs = overview.needs_you(summary, state, plan, notes, [{"task": "T-101", "commit": "abc"}],
                               idle_why=overview.NOTHING_TICKS)
    kinds = [n.kind for n in needs]
    assert kinds == ["breaker", "dirty", "blocked", "sandbox", "rate_limit", "schedule", "notes", "results"]
    by = {n.kind: n for n in needs}
    assert "T-201 blocked after 3 retries" in by["blocked"].text and by["blocked"].task == "T-201"
    assert "calc/ops.py" in by["dirty"].text
    assert "passed nothing" in by["breaker"].text
    assert "bwrap is not installed" in by["sandbox"].text
    assert "2026-12-01T12:00:00Z" in by["rate_limit"].text
    assert "T-101 (done)" in by["notes"].text
    assert "T-101" in by["results"].text
    assert overview.note_warning(plan, "T-101").startswith("T-101 is already done")
    assert overview.note_warning(plan, "T-202") == "" and overview.note_warning(plan, "global") == ""


def test_daemon_running_reads_proc(tmp_path: Path):
    fake = tmp_path / "proc"
    (fake / "1").mkdir(parents=True)
    (fake / "1" / "comm").write_text("bash\n")
    (fake / "self").mkdir()
    assert cron.daemon_running(fake) is False
    (fake / "77").mkdir()
    (fake / "77" / "comm").write_text("cron\n")
    assert cron.daemon_running(fake) is True
    assert cron.daemon_running(tmp_path / "missing") is True  # cannot tell: not "missing"


def test_cron_install_warns_when_no_daemon_runs(tmp_path: Path, git_identity, monkeypatch, capsys):
    root = create_demo(tmp_path / "calc")
    tab = tmp_path / "crontab"
    tab.write_text("")
    fake = tmp_path / "proc"
    (fake / "1").mkdir(parents=True)
    (fake / "1" / "comm").write_text("bash\n")
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    monkeypatch.setenv(cron.PROC_ENV, str(fake))
    assert main(["cron", "install", str(root)]) == 0
    assert "[warn] no cron daemon is running" in capsys.readouterr().out
    (fake / "1" / "comm").write_text("crond\n")
    assert main(["cron", "install", str(root)]) == 0
    assert "no cron daemon" not in capsys.readouterr().out


def test_eta_counts_the_interval_between_ticks():
    summary = {"eta_seconds": 6.0, "counts": {"pending": 3, "in_progress": 0}}
    assert overview.eta_with_interval(summary, None) == 6.0  # nothing ticks by itself: the work alone
    assert overview.eta_with_interval(summary, 360) == 2 * 360 + 2.0  # 3 tasks, one a tick, 6 min apart
    assert overview.eta_with_interval(summary, 360, per_tick=3) == 6.0
    assert overview.eta_with_interval({"eta_seconds": None, "counts": {}}, 360) is None


def test_checkpoint_leaves_notes_to_finished_tasks_out_of_key_decisions(tmp_path: Path, git_identity):
    from memento_core.checkpoint import render

    ws = Workspace(create_demo(tmp_path / "calc"))
    edit_plan(ws.plan_path, lambda e: e.set_status("T-101", "x"))
    add_note(ws.notes_path, "nobody reads this", target="T-101")
    add_note(ws.notes_path, "use integer division", target="T-201")
    text = render(ws, parse_plan(ws.plan_path), TickState())
    decisions = text.split("## Key Decisions")[1].split("##")[0]
    assert "use integer division" in decisions and "nobody reads this" not in decisions


def test_pausing_refreshes_the_checkpoint(tmp_path: Path, git_identity):
    from memento_core import control

    ws = Workspace(create_demo(tmp_path / "calc"))
    control.set_mode(ws, "paused")
    assert "the pipeline is paused" in ws.checkpoint_path.read_text()
    control.set_mode(ws, "auto")
    assert "the pipeline is paused" not in ws.checkpoint_path.read_text()


def test_needs_you_never_cuts_ids_without_saying_so():
    unsurfaced = [{"task": f"T-{n}"} for n in range(1, 13)]
    needs = overview.needs_you({"plan_state": "RUNNING"}, TickState(), None, (), unsurfaced)
    assert needs[-1].text == "12 passed task(s) not yet reviewed: T-1, T-2, T-3, T-4, T-5, … and 7 more"
    dirty = "\n".join(f"src/f{n}.py" for n in range(8))
    assert overview.pipeline_word({"plan_state": "RUNNING"}, TickState(dirty_signature=dirty), cron_installed=True,
                                  cron_daemon=True, auto_tick=False)[1].endswith("… and 5 more")
