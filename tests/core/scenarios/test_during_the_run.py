"""What a person does while the agent runs is theirs: a tick never loses it nor counts it as the task's.

The person acts from inside the fake agent's run (a script under tests/agents/,
started through the real `command` preset), so the timing is exact. Outcomes
are judged on disk: the documents, the plan, git.
"""

from __future__ import annotations

import shlex

import pytest

from memento_core.notes import add_note, parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.state import read_claim
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import agent, entries, git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


@pytest.mark.parametrize("mode", ["delete", "rewrite"])
def test_notes_a_person_adds_while_the_agent_damages_the_file_are_kept(tmp_path, mode):
    person = "a person's note, written while the agent ran"
    ws = make_ws(tmp_path, agent("damages_notes_while_a_person_writes.py", mode, shlex.quote(person)))
    add_note(ws.notes_path, "an older global note", target="global")
    add_note(ws.notes_path, "an older note for T-1", target="T-1")
    git(ws.root, "commit", "-qam", "notes before the tick")
    before = {n.key: n.text for n in parse_notes(ws.notes_path)}

    tick_while_the_agent_waits(ws, lambda: add_note(ws.notes_path, person, target="global"))

    (entry,) = entries(ws)
    assert entry.status == "FAILED"
    assert entry.field("Reason") == "the agent removed 2 note(s) from docs/HUMAN_NOTES.md"
    after = parse_notes(ws.notes_path)
    # The notes from before the run are back as they were, the person's note is there once…
    assert {n.key: n.text for n in after if n.key in before} == before
    assert [n.text for n in after].count(person) == 1
    assert (ws.root / "hello.txt").exists() is False  # the task's own change was rolled back
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert read_claim(ws, "T-1") is None
    # The restored notes, the person's included, are what the tick committed.
    committed = git(ws.root, "show", "HEAD:docs/HUMAN_NOTES.md")
    assert committed == ws.notes_path.read_text(encoding="utf-8") and person in committed


def test_notes_the_agent_rewrote_are_not_re_added_as_new_notes(tmp_path):
    ws = make_ws(tmp_path, agent("damages_notes_while_a_person_writes.py", "rewrite", "'a person writes'"))
    add_note(ws.notes_path, "an older note for T-1", target="T-1")
    git(ws.root, "commit", "-qam", "a note before the tick")
    tick_while_the_agent_waits(ws, lambda: add_note(ws.notes_path, "a person writes", target="global"))
    texts = [n.text for n in parse_notes(ws.notes_path)]
    assert sorted(texts) == ["a person writes", "an older note for T-1"]


TEMP_NAME = "docs/.HUMAN_NOTES.md.k3x9q2ab.tmp"  # as locks.atomic_write_bytes names them (mkstemp)
TEMP_TEXT = "a person's note being saved right now\n"


def _agent_meeting_a_persons_temp_file(exit_code: int) -> str:
    return agent("meets_a_persons_temp_file.py", TEMP_NAME, str(exit_code))


def test_a_persons_temp_file_of_a_document_is_not_the_tasks_change(tmp_path):
    ws = make_ws(tmp_path, _agent_meeting_a_persons_temp_file(0))
    outcome = run_tick(ws.root)
    (result,) = outcome.results
    assert result.passed, result.reason
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS" and entry.field("Files Modified") == "hello.txt (+1 -0)"
    committed = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == {"hello.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/CURRENT_STATE.md"}
    assert git(ws.root, "ls-files", "--", TEMP_NAME) == ""
    # Not removed either: the person's editor renames it over the notes in a moment.
    assert (ws.root / TEMP_NAME).read_text() == TEMP_TEXT


def test_a_rollback_leaves_a_persons_temp_file_of_a_document_alone(tmp_path):
    ws = make_ws(tmp_path, _agent_meeting_a_persons_temp_file(1))
    outcome = run_tick(ws.root)
    (result,) = outcome.results
    assert result.reason == "agent exited with code 1"
    assert not (ws.root / "hello.txt").exists()  # the task's change was rolled back…
    assert (ws.root / TEMP_NAME).read_text() == TEMP_TEXT  # …the person's half-saved note was not
    assert git(ws.root, "ls-files", "--", TEMP_NAME) == ""


# ---------------------------------------------------------------- a person's hand edit of the plan or notes

PERSON_TASKS = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt]
  - retries: 0

- [ ] `T-2` [MODULE:two] Second
  - verify: `true`
  - context_files: [two.txt]
  - retries: 0
"""
REWORDED = "Second, reworded by a person"
HAND_NOTE = "### [NOTE] 2026-12-01T09:00:00 → T-2\nwritten by hand in an editor\n\n"


def _hand_edit(ws, what: str) -> None:
    if what == "plan":
        ws.plan_path.write_text(ws.plan_path.read_text().replace("[MODULE:two] Second", f"[MODULE:two] {REWORDED}"))
    else:
        text = ws.notes_path.read_text()
        ws.notes_path.write_text(text.replace("## Archive", HAND_NOTE + "## Archive", 1) if "## Archive" in text
                                 else text + "\n" + HAND_NOTE)


def _tick_with_a_person_editing(ws, what: str) -> None:
    """A cron-like tick; when its agent says WAITING, the person edits the plan or the notes by hand."""
    tick_while_the_agent_waits(ws, lambda: _hand_edit(ws, what))


def tick_while_the_agent_waits(ws, act) -> None:
    """A cron-like tick (its own process); when its agent says WAITING, the person ``act``s
    from this process, outside the tick's tree (SPEC §13: a person's receipt is taken)."""
    import os
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    tick = subprocess.Popen([sys.executable, "-m", "memento_core.tick", "--project", str(ws.root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and tick.poll() is None:
            if any("WAITING" in log.read_text(errors="replace") for log in (ws.root / "logs").glob("tick_*.log")):
                act()
                break
            time.sleep(0.02)
        _, err = tick.communicate(timeout=120)
    finally:
        if tick.poll() is None:
            tick.kill()
            tick.wait()
    assert tick.returncode == 0 and b"Traceback" not in err, err


@pytest.mark.parametrize("what", ["plan", "notes"])
@pytest.mark.parametrize("mode", MODES)
def test_a_persons_hand_edit_during_a_run_is_kept_when_the_agent_ran_confined(tmp_path, mode, what):
    """Confined, docs/ is read-only to the agent: a change to the plan or notes is a person's, kept,
    and the task passes. Unconfined it could be the agent's: the task fails, the edit is reverted
    (saved in logs/rollback/)."""
    ws = make_ws(tmp_path, agent("waits_for_a_person.py", f"docs/{'MASTER_PLAN' if what == 'plan' else 'HUMAN_NOTES'}.md",
                                 shlex.quote(REWORDED if what == "plan" else "written by hand")),
                 tasks=PERSON_TASKS, sandbox=mode)
    _tick_with_a_person_editing(ws, what)
    (last,) = entries(ws)
    kept = REWORDED in ws.plan_path.read_text() if what == "plan" else "written by hand" in ws.notes_path.read_text()
    saved = [p for p in (ws.root / "logs" / "rollback").rglob("*.md")
             if REWORDED in p.read_text() or "written by hand" in p.read_text()] if ws.rollback_dir.exists() else []
    if mode == "bwrap":
        assert last.status == "SUCCESS", last.field("Reason")
        assert kept and parse_plan(ws.plan_path).task("T-1").status == "x"
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
        committed = git(ws.root, "show", f"HEAD:docs/{'MASTER_PLAN' if what == 'plan' else 'HUMAN_NOTES'}.md")
        assert (REWORDED if what == "plan" else "written by hand") in committed
        assert not saved
    else:
        reason = "edited the definition of T-2" if what == "plan" else "wrote 1 note(s) by hand"
        assert last.status == "FAILED" and reason in last.field("Reason"), last.field("Reason")
        assert not kept and saved
        assert parse_plan(ws.plan_path).task("T-1").status == " "
        assert "hello.txt" not in git(ws.root, "ls-files")


@pytest.mark.parametrize("mode", [m for m in MODES if m.values == ("bwrap",)])
def test_a_confined_failure_rolls_back_the_task_but_keeps_a_persons_hand_edits(tmp_path, mode):
    tasks = PERSON_TASKS.replace("verify: `grep -q done hello.txt`", "verify: `false`", 1)
    ws = make_ws(tmp_path, agent("waits_for_a_person.py", "docs/MASTER_PLAN.md", shlex.quote(REWORDED)),
                 tasks=tasks, sandbox=mode)
    _tick_with_a_person_editing(ws, "plan")
    (last,) = entries(ws)
    assert last.status == "FAILED" and "verify failed with exit code 1" in last.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-2").title == REWORDED and plan.task("T-1").retries == 1
    assert not (ws.root / "hello.txt").exists()
    assert REWORDED in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")
