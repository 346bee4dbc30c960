"""Regressions for the problems a review of the engine reproduced (one test each)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

import pytest

from memento_core import status_log
from memento_core.errors import EditConflict
from memento_core.git.repo import head
from memento_core.notes import add_note, parse_notes
from memento_core.plan.edits import reset_task
from memento_core.plan.scan import parse_plan
from memento_core.state import Claim, Heartbeat, read_claim, remove_claim, write_claim
from memento_core.status_log import entries_with_commits
from memento_core.tick.__main__ import run_tick
from memento_core.tick.record import PENDING_COMMIT

from .test_engine import HELLO, agent, entries, git, make_ws

PY = sys.executable
CLI = f"{PY} -m memento_core.cli"
TWO = HELLO + """- [ ] `T-2` [MODULE:two] Second
  - verify: `true`
  - context_files: [two.txt]
  - retries: 0
"""


def sh(script: str) -> str:
    """A `command` preset template running ``script`` with sh (no shell of ours in between)."""
    return "sh -c " + shlex.quote(script)


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_a_persons_edit_of_another_task_during_the_run_is_kept(tmp_path):
    # The person acts from outside the tick while its agent waits (a `memento skip` from inside the
    # agent's run is the agent's own, refused: SPEC §13's receipts).
    from .test_during_the_run import tick_while_the_agent_waits

    ws = make_ws(tmp_path, agent("waits_for_a_person.py", "docs/MASTER_PLAN.md", shlex.quote("reason: not needed")),
                 tasks=TWO)
    tick_while_the_agent_waits(ws, lambda: subprocess.run(
        [PY, "-m", "memento_core.cli", "skip", "T-2", "--reason", "not needed", str(ws.root)], check=True))
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "x"
    assert plan.task("T-2").status == "-" and plan.task("T-2").reason == "not needed"


def test_resetting_a_running_task_is_refused(tmp_path):
    ws = make_ws(tmp_path, sh(f"{CLI} reset T-1 . ; echo done > hello.txt"))
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0 and outcome.results[0].passed
    with pytest.raises(EditConflict):
        ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] `T-1`", "- [~] `T-1`"))
        reset_task(ws.plan_path, "T-1")


def test_heartbeat_never_writes_a_removed_claim(tmp_path):
    ws = make_ws(tmp_path, "true")
    claim = Claim(task="T-1", pid=os.getpid(), host="h", started="now", heartbeat=time.time(), tick=1, base=None)
    write_claim(ws, claim)
    with Heartbeat(ws, claim, every=0.001) as beat:
        time.sleep(0.05)
        beat.stop()
        remove_claim(ws, "T-1")
        time.sleep(0.05)
        assert read_claim(ws, "T-1") is None


def test_interrupted_commit_is_not_finished_over_a_later_edit(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    env = {**os.environ, "MEMENTO_CRASH_AT": "tick:before-commit"}
    r = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(ws.root)], env=env, capture_output=True)
    assert r.returncode == -9
    (ws.root / "hello.txt").write_text("done\na person's later edit\n")
    run_tick(ws.root)
    assert "a person's later edit" not in git(ws.root, "log", "-p", "--format=%s")
    assert any(e.field("Event", "").startswith("⚠️ INTERRUPTED COMMIT") for e in entries(ws))
    # The SUCCESS entry written before the crash is there, once.
    assert [e.status for e in entries(ws) if e.task_id == "T-1"].count("SUCCESS") == 1


def test_a_success_entry_survives_a_crash_before_it_was_appended(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    env = {**os.environ, "MEMENTO_CRASH_AT": "write:TICK_STATUS.md"}
    r = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(ws.root)], env=env, capture_output=True)
    assert r.returncode == -9
    run_tick(ws.root)
    success = [e for e in entries_with_commits(ws.root, entries(ws))
               if e.task_id == "T-1" and e.status == "SUCCESS"]
    assert len(success) == 1 and success[0].commit_sha
    assert "complete T-1" in git(ws.root, "log", "-1", "--format=%s", success[0].commit_sha)


def test_a_file_turned_into_a_folder_fails_cleanly(tmp_path):
    ws = make_ws(tmp_path, sh("rm other.txt && mkdir other.txt && echo x > other.txt/inner && exit 1"))
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message  # a recorded failure, not a tick that could not run
    (result,) = outcome.results
    assert result.reason == "agent exited with code 1"
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and entry.field("Reason") == "agent exited with code 1"
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert read_claim(ws, "T-1") is None
    # The file came back as it was, and the folder the agent put in its place is gone from the
    # tree but saved in the rollback folder the entry names.
    other = ws.root / "other.txt"
    assert other.is_file() and other.read_text() == "someone else's file\n"
    assert git(ws.root, "status", "--porcelain", "--", "other.txt") == ""
    saved = entry.field("Files Modified").split("saved in ")[1].rstrip(")")
    assert (ws.root / saved / "files" / "other.txt" / "inner").read_text() == "x\n"


def test_the_agent_cannot_exempt_itself_through_cleanignore(tmp_path):
    ws = make_ws(tmp_path, sh("echo '*' > .memento_cleanignore && echo mine >> other.txt && exit 1"))
    run_tick(ws.root)
    assert (ws.root / "other.txt").read_text() == "someone else's file\n"
    assert git(ws.root, "status", "--porcelain", "--untracked-files=no", "--", ".memento_cleanignore", "other.txt") == ""


def test_the_agent_cannot_erase_notes_or_status_history(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"))
    add_note(ws.notes_path, "keep me", target="global")
    run_tick(ws.root)  # one FAILED entry to erase
    ws.config_path.write_text(ws.config_path.read_text().replace(
        agent("exits_nonzero.py"), sh("echo '# TICK STATUS LOG' > docs/TICK_STATUS.md && rm docs/HUMAN_NOTES.md "
                                      "&& echo done > hello.txt")))
    git(ws.root, "commit", "-qam", "a destructive agent")
    run_tick(ws.root)
    kinds = [e.status for e in entries(ws) if not e.is_event]
    assert kinds == ["FAILED", "FAILED"]
    assert "rewrote docs/TICK_STATUS.md" in entries(ws)[-1].field("Reason")
    assert [n.text for n in parse_notes(ws.notes_path)] == ["keep me"]
    assert parse_plan(ws.plan_path).task("T-1").status == " "


def test_what_verify_changes_outside_context_fails_the_task(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"),
                 tasks=HELLO.replace("`grep -q done hello.txt`", "`echo refreshed >> other.txt && grep -q done hello.txt`"))
    run_tick(ws.root)
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and "verify changed files outside context_files: other.txt" in entry.field("Reason")
    assert git(ws.root, "status", "--porcelain", "--untracked-files=no", "--", "other.txt") == ""


def test_a_claim_from_another_host_never_kills_a_local_group(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        ws.plan_path.write_text(ws.plan_path.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
        git(ws.root, "commit", "-qam", "claimed elsewhere")
        write_claim(ws, Claim(task="T-1", pid=1, host="otherbox", started="then", heartbeat=time.time() - 7200,
                              tick=1, base=head(ws.root), pgid=victim.pid))
        run_tick(ws.root)
        assert victim.poll() is None  # still running
        assert any(e.status == "STALE" for e in entries(ws))
    finally:
        victim.kill()
        victim.wait()


def test_resuming_by_editing_the_plan_resets_the_breaker(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), max_retries=50)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("circuit_breaker_threshold: 5", "circuit_breaker_threshold: 2"))
    git(ws.root, "commit", "-qam", "quick breaker")
    run_tick(ws.root)
    run_tick(ws.root)
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"
    ws.plan_path.write_text(ws.plan_path.read_text().replace("tick_mode: paused", "tick_mode: auto"))
    run_tick(ws.root)
    run_tick(ws.root)
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"  # it could trip again
    assert len([e for e in entries(ws) if e.status == "CIRCUIT BREAKER"]) == 2


def test_an_agent_that_deletes_the_plan_is_rolled_back(tmp_path):
    ws = make_ws(tmp_path, sh("rm docs/MASTER_PLAN.md && echo done > hello.txt"))
    outcome = run_tick(ws.root)
    assert outcome.exit_code in (0, 1)
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == " " and plan.task("T-1").retries == 1
    assert "deleted the plan" in [e for e in entries(ws) if not e.is_event][0].field("Reason")


def test_content_a_person_staged_is_never_reset(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    (ws.root / "other.txt").write_text("version B, staged\n")
    git(ws.root, "add", "other.txt")
    (ws.root / "other.txt").write_text("someone else's file\n")  # the work tree matches HEAD again
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 1  # a person's staged work: refused, not erased
    assert git(ws.root, "show", ":other.txt") == "version B, staged\n"


def test_status_entry_fields_keep_a_placeholder_in_outputs(tmp_path):
    ws = make_ws(tmp_path, sh(f"echo done > hello.txt && printf '## Outputs\\n- {PENDING_COMMIT}\\n' "
                              "> \"$MEMENTO_TICK_RESULT\""))
    run_tick(ws.root)
    (entry,) = entries_with_commits(ws.root, entries(ws))
    assert entry.field("Outputs") == PENDING_COMMIT
    assert entry.commit_sha == git(ws.root, "rev-parse", "--short=7", "HEAD").strip()
    assert status_log.parse_status(ws.status_path)


def test_a_folder_replaced_by_a_symlink_is_restored(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not the project's\n")
    ws = make_ws(tmp_path, sh(f"rm -rf src && ln -s {elsewhere} src && exit 1"))
    (ws.root / "src").mkdir()
    (ws.root / "src" / "a.py").write_text("A = 1\n")
    git(ws.root, "add", "src/a.py")
    git(ws.root, "commit", "-qm", "src")
    run_tick(ws.root)
    assert not (ws.root / "src").is_symlink()
    assert (ws.root / "src" / "a.py").read_text() == "A = 1\n"
    assert (elsewhere / "keep.txt").exists() and not (elsewhere / "a.py").exists()
    assert git(ws.root, "status", "--porcelain", "--", "src") == ""


def test_a_save_that_puts_a_passed_task_back_to_running_loses_no_status_entry(tmp_path):
    # Found by the 100-tick race after the recovery learnt to cut entries an attempt appended:
    # an editor's stale save turned [x] back into [~]; the next tick took the passed attempt's
    # leftover record for a killed one and cut its SUCCESS entry from the status log.
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    before_pass = ws.plan_path.read_text()
    assert run_tick(ws.root).results[0].passed
    success = [e for e in entries(ws) if e.status == "SUCCESS"]
    assert len(success) == 1
    # The person's editor saves the copy it loaded while T-1 was running.
    ws.plan_path.write_text(before_pass.replace("- [ ] `T-1`", "- [~] `T-1`"))
    before = git(ws.root, "rev-parse", "HEAD").strip()
    result = run_tick(ws.root)
    after = entries(ws)
    assert [e.timestamp for e in after if e.status == "SUCCESS"][:1] == [success[0].timestamp]
    stale = [e for e in after if e.status == "STALE"]
    assert len(stale) == 1 and stale[0].field("Reason").startswith("no claim file; the last commit's plan has it [x]")
    assert stale[0].field("Event") == "⚠️ STALE — Stale [~] detected on T-1, set back to [x]"
    assert not list((ws.memento_dir / "records").glob("*.json"))
    # Done again, not run a second time: an empty change would fail as "nothing changed" until [!].
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-1").status, plan.task("T-1").retries) == ("x", 0) and result.exit_code == 0
    assert plan.meta.completed_tasks == 1  # the older copy said 0
    assert not [e for e in after if e.status in ("FAILED", "BLOCKED")]
    assert (ws.root / "hello.txt").read_text() == "done\n"
    assert git(ws.root, "log", "--format=%s", f"{before}..HEAD").count("memento: complete") == 0


def test_a_running_task_without_a_claim_whose_last_commit_has_it_pending_is_still_a_killed_attempt(tmp_path):
    # The counterpart: [~] with no claim, and the last commit's plan has it [ ] (a tick killed between
    # its plan edit and its claim file): reset to [ ] and a retry counted, as before.
    ws = make_ws(tmp_path, "true")
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
    run_tick(ws.root)
    stale = [e for e in entries(ws) if e.status == "STALE"]
    assert [e.field("Event") for e in stale] == ["⚠️ STALE — Stale [~] detected on T-1, reset to [ ]"]
    assert stale[0].field("Reason") == "no claim file"
    assert parse_plan(ws.plan_path).task("T-1").retries >= 1
