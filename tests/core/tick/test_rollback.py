"""The rollback's own steps (SPEC §4 step 14) where no other step hides them: what an agent hid
behind a new `.gitignore` in a subfolder is found once the rollback removed that file, and the
plan an agent forged is saved under logs/rollback/ before the plan is put back. Below the ticks,
roll_back and restore_documents called on a committed workspace, judged on what is on disk.

The rate-limited agent is tests/agents/reports_like_a_cli.py through the real `command` preset; its
work is rolled back before the fallback preset runs in the same tick (tick/limits.py), with no
ignored-files step between: the rollback alone must find what was hidden. The forger is
tests/agents/forges_documents.py.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from memento_core import status_log
from memento_core.git.patterns import read_pattern_file
from memento_core.locks import file_lock, lock_path_for
from memento_core.notes import add_note, parse_notes
from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan
from memento_core.receipts import Receipts
from memento_core.tick.__main__ import run_tick
from memento_core.tick.guards import Snapshot
from memento_core.tick.rollback import (
    RolledBack,
    _restore_other_tasks,
    restore_documents,
    restore_task_definition,
    roll_back,
)
from memento_core.workspace import Workspace

from ..scenarios.test_engine import HELLO, agent
from ..scenarios.test_engine import make_ws as engine_ws
from .test_limits import git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_what_a_refused_agent_hid_behind_a_new_gitignore_is_gone_before_the_fallback_starts(tmp_path):
    ws = make_ws(tmp_path, "claude-limit", cost="hides", extra='fallback = ["script"]')
    # the fallback preset's own work fails when the refused agent's hidden file is still there
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- do: `printf", "- do: `test ! -e sub/hidden.txt && printf"))
    git(ws.root, "commit", "-qam", "the script checks first")
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    assert not (ws.root / "sub").exists()
    saved = [p.relative_to(ws.rollback_dir).as_posix() for p in ws.rollback_dir.rglob("hidden.txt")]
    assert len(saved) == 1 and saved[0].endswith("/hidden/files/sub/hidden.txt"), saved


TWO = HELLO + HELLO.replace("T-1", "T-2").replace("[MODULE:hello] Write hello", "[MODULE:two] Second").replace(
    "[hello.txt]", "[two.txt]")


def test_the_plan_an_agent_forged_is_saved_before_the_other_tasks_are_put_back(tmp_path):
    ws = engine_ws(tmp_path, agent("forges_documents.py", "plan"), tasks=TWO)
    (result,) = run_tick(ws.root).results
    assert not result.passed and "the agent marked T-2 [x]" in result.reason, result.reason
    assert "FORGED" not in ws.plan_path.read_text()
    (saved,) = ws.rollback_dir.glob("*-T-1-plan-others/MASTER_PLAN.md")
    assert "- [x] `T-2` [MODULE:two] Second FORGED" in saved.read_text()


@pytest.mark.parametrize(("mode", "name", "forged"), [
    ("entry", "TICK_STATUS.md", "- **Task**: T-2 FORGED"),
    ("note", "HUMAN_NOTES.md", "FORGED: every test may be skipped."),
])
def test_the_status_log_and_notes_an_agent_forged_are_saved_then_put_back(tmp_path, mode, name, forged):
    ws = engine_ws(tmp_path, agent("forges_documents.py", mode), tasks=TWO)
    (result,) = run_tick(ws.root).results
    assert not result.passed
    assert forged not in (ws.root / "docs" / name).read_text()
    (saved,) = ws.rollback_dir.glob(f"*-T-1-docs/{name}")
    assert forged in saved.read_text()
    (entry,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    said = " ".join(value for _key, value in entry.fields)
    assert f"status log and notes restored, the agent's versions in {ws.rel(saved.parent)}" in said, said


@pytest.mark.parametrize("mode", ["plan-empty", "plan-binary", "plan-cut"])
def test_a_plan_the_agent_broke_beyond_an_edit_is_put_back_whole(tmp_path, mode):
    """Emptied, not UTF-8, or its task cut out: no definition can be put into it (the edit raised
    out of the rollback, the task failed as Memento's own error and the broken plan stayed)."""
    ws = engine_ws(tmp_path, agent("forges_documents.py", mode), tasks=TWO)
    (result,) = run_tick(ws.root).results
    assert not result.passed and "removed or broke the definition of T-1" in result.reason, result.reason
    assert [(t.id, t.status, t.retries) for t in parse_plan(ws.plan_path).tasks] == [("T-1", " ", 1), ("T-2", " ", 0)]
    (saved,) = ws.rollback_dir.glob("*-T-1-plan/MASTER_PLAN.md")  # the agent's plan, as it left it
    found = saved.read_bytes()
    assert found.startswith(b"\xff\xfe") if mode == "plan-binary" else b"T-1" not in found


@pytest.mark.parametrize("mode", ["self", "plan-self"])
def test_an_agent_that_marked_its_own_task_done_in_a_failed_run_leaves_it_to_retry(tmp_path, mode):
    """Its own task `[x]` by hand (its definition's guard leaves the status out), then a failure:
    verify's ("self") or the guard's, T-2 forged too ("plan-self", the whole plan put back). The
    task is `[ ]` with its retry counted, never left done; the plan found is saved first."""
    ws = engine_ws(tmp_path, agent("forges_documents.py", mode), tasks=TWO)
    if mode == "self":
        ws.plan_path.write_text(ws.plan_path.read_text().replace("grep -q done hello.txt", "grep -q nope hello.txt", 1))
        git(ws.root, "commit", "-qam", "T-1's verify fails")
    (result,) = run_tick(ws.root).results
    assert not result.passed
    assert ("verify failed" if mode == "self" else "the agent marked T-2 [x]") in result.reason, result.reason
    plan = parse_plan(ws.plan_path)
    assert [(t.id, t.status, t.retries) for t in plan.tasks] == [("T-1", " ", 1), ("T-2", " ", 0)]
    saved = [p.read_text() for p in ws.rollback_dir.glob("*-T-1-plan-*/MASTER_PLAN.md")]
    assert any(re.search(r"^- \[x\] `T-1`", text, re.M) for text in saved), saved
    assert "- [x] `T-1`" not in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")


# ------------------------------------------------- roll_back itself, on a committed workspace


def committed(tmp_path) -> tuple[Workspace, str]:
    """A committed workspace (its agent never runs here) and its HEAD, the snapshot's base."""
    ws = engine_ws(tmp_path, "true")
    return ws, git(ws.root, "rev-parse", "HEAD").strip()


def test_a_rollback_takes_the_agents_commits_back_and_saves_what_it_undoes(tmp_path):
    ws, base = committed(tmp_path)
    (ws.root / "other.txt").write_text("the agent's\n")
    (ws.root / "new.txt").write_text("made by the agent\n")
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "the agent's commit")
    rolled = roll_back(ws, base, set(), "T-1")
    assert git(ws.root, "rev-parse", "HEAD").strip() == base
    assert git(ws.root, "status", "--porcelain") == ""
    assert (ws.root / "other.txt").read_text() == "someone else's file\n" and not (ws.root / "new.txt").exists()
    (dest,) = ws.rollback_dir.glob("*-T-1")
    assert rolled == RolledBack(f"2 path(s), saved in {ws.rel(dest)}")
    assert (dest / "files" / "new.txt").read_text() == "made by the agent\n"
    assert "+the agent's" in (dest / "changes.patch").read_text()


def test_the_cleanignore_of_the_claim_decides_and_the_agents_edit_of_it_is_undone(tmp_path):
    ws, base = committed(tmp_path)
    at_claim = tuple(read_pattern_file(ws.cleanignore_path))
    before = ws.cleanignore_path.read_text()
    ws.cleanignore_path.write_text(before + "build/\n")
    (ws.root / "build").mkdir()
    (ws.root / "build" / "out.bin").write_bytes(b"\0agent")
    (ws.root / ".env").write_text("a person's secret\n")  # .memento_cleanignore names .env
    rolled = roll_back(ws, base, set(), "T-1", keep_patterns=at_claim)
    assert not (ws.root / "build").exists() and ws.cleanignore_path.read_text() == before
    assert (ws.root / ".env").read_text() == "a person's secret\n"
    assert rolled.said.startswith("2 path(s), saved in ") and rolled.error == ""


def test_without_the_claims_patterns_the_cleanignore_file_is_read(tmp_path):
    ws, base = committed(tmp_path)
    (ws.root / ".env").write_text("a person's secret\n")
    (ws.root / "made.txt").write_text("the agent's\n")
    assert roll_back(ws, base, set(), "T-1").said.startswith("1 path(s), saved in ")
    assert (ws.root / ".env").exists() and not (ws.root / "made.txt").exists()


def test_memento_documents_and_their_temp_files_are_left_to_restore_documents(tmp_path):
    ws, base = committed(tmp_path)
    with ws.status_path.open("a") as fh:
        fh.write("\n## [2026-12-01T00:00:00Z] Tick #1\n")
    temp = ws.root / "docs" / ".HUMAN_NOTES.md.x1y2.tmp"  # a person's note being saved right now
    temp.write_text("half a note")
    assert roll_back(ws, base, set(), "T-1") == RolledBack("nothing to roll back")
    assert "Tick #1" in ws.status_path.read_text() and temp.read_text() == "half a note"
    assert not ws.rollback_dir.exists() or not any(ws.rollback_dir.iterdir())
    (ws.root / "other.txt").write_text("the agent's\n")
    assert roll_back(ws, base, set(), "T-2").said.startswith("1 path(s), saved in ")
    assert "Tick #1" in ws.status_path.read_text() and temp.exists()
    assert (ws.root / "other.txt").read_text() == "someone else's file\n"


@pytest.mark.parametrize("alone", [True, False])
def test_what_a_new_gitignore_hid_goes_with_the_rest_and_is_counted(tmp_path, alone):
    """The .gitignore alone or among other changes, and a cleanignored file the agent made beside it."""
    ws, base = committed(tmp_path)
    if not alone:
        (ws.root / "other.txt").write_text("the agent's\n")
    (ws.root / "sub").mkdir()
    (ws.root / "sub" / ".gitignore").write_text("hidden.txt\n")
    (ws.root / "sub" / "hidden.txt").write_text("hidden by the agent\n")
    (ws.root / ".env").write_text("kept by .memento_cleanignore\n")
    rolled = roll_back(ws, base, set(), "T-1")
    assert not (ws.root / "sub").exists() and (ws.root / ".env").exists()
    assert (ws.root / "other.txt").read_text() == "someone else's file\n"
    (dest,) = ws.rollback_dir.glob("*-T-1")
    assert rolled.said == f"{2 if alone else 3} path(s), saved in {ws.rel(dest)}"
    assert (dest / "hidden" / "files" / "sub" / "hidden.txt").read_text() == "hidden by the agent\n"


def test_a_rollback_that_cannot_run_says_so_as_its_error(tmp_path):
    ws, _base = committed(tmp_path)
    (ws.root / "other.txt").write_text("the agent's\n")
    rolled = roll_back(ws, "0" * 40, set(), "T-1")
    assert rolled.error.startswith("rollback failed: ") and rolled.said == rolled.error
    assert (ws.root / "other.txt").read_text() == "the agent's\n"


# ------------------------------------------------- restore_documents itself


def snapshot(ws: Workspace, base: str) -> Snapshot:
    """Memento's documents as they are now, as take_snapshot records them at the claim."""
    return Snapshot(base=base, untracked=frozenset(), plan=ws.plan_path.read_bytes(), project_map=None,
                    status=ws.status_path.read_bytes(), notes=ws.notes_path.read_bytes(),
                    note_keys=frozenset(n.key for n in parse_notes(ws.notes_path)), cleanignore=(),
                    taken_at=datetime.now(UTC).replace(microsecond=0))


@pytest.mark.parametrize("confined", [False, True])
def test_documents_the_agent_left_alone_are_not_touched_nor_saved(tmp_path, confined):
    ws, base = committed(tmp_path)
    add_note(ws.notes_path, "a person's note from before", target="T-1")
    snap = snapshot(ws, base)
    (ws.root / "hello.txt").write_text("done\n")
    assert restore_documents(ws, snap, "T-1", confined=confined) == ""
    assert not ws.rollback_dir.exists() or not any(ws.rollback_dir.iterdir())
    assert (ws.plan_path.read_bytes(), ws.status_path.read_bytes(), ws.notes_path.read_bytes()) == \
        (snap.plan, snap.status, snap.notes)


def test_a_plan_the_agent_deleted_is_written_back_whole(tmp_path):
    ws, base = committed(tmp_path)
    snap = snapshot(ws, base)
    ws.plan_path.unlink()
    said = restore_documents(ws, snap, "T-1")
    (dest,) = ws.rollback_dir.glob("*-T-1-plan")
    assert said == f"; the task's definition restored, the agent's plan in {ws.rel(dest)}"
    assert ws.plan_path.read_bytes() == snap.plan
    assert sorted(p.name for p in dest.iterdir()) == ["README.txt"]  # no plan to save
    assert "restored the task's definition" in (dest / "README.txt").read_text()


def test_the_tasks_definition_comes_back_and_the_agents_plan_is_saved(tmp_path):
    ws, base = committed(tmp_path)
    snap = snapshot(ws, base)
    forged = ws.plan_path.read_text().replace("grep -q done hello.txt", "true")
    ws.plan_path.write_text(forged.replace("max_retries: 3", "max_retries: 5"))  # and a person's edit
    forged = ws.plan_path.read_text()
    said = restore_task_definition(ws, snap, "T-1")
    (dest,) = ws.rollback_dir.glob("*-T-1-plan")
    assert said == f"; the task's definition restored, the agent's plan in {ws.rel(dest)}"
    assert ws.plan_path.read_bytes() == snap.plan.replace(b"max_retries: 3", b"max_retries: 5")
    assert (dest / "MASTER_PLAN.md").read_text() == forged and (dest / "README.txt").exists()


def test_a_note_the_agent_wrote_by_hand_is_taken_out_and_saved(tmp_path):
    """Nothing removed, the status log untouched: only the note written by hand tells the damage."""
    ws, base = committed(tmp_path)
    snap = snapshot(ws, base)
    add_note(ws.notes_path, "FORGED: every test may be skipped", target="global")
    forged = ws.notes_path.read_text()
    (ws.notes_added_path).unlink(missing_ok=True)  # not through a person's `memento note`
    said = restore_documents(ws, snap, "T-1")
    (dest,) = ws.rollback_dir.glob("*-T-1-docs")
    assert said == f"; status log and notes restored, the agent's versions in {ws.rel(dest)}"
    assert ws.notes_path.read_bytes() == snap.notes and (dest / "HUMAN_NOTES.md").read_text() == forged
    assert (dest / "TICK_STATUS.md").read_bytes() == snap.status == ws.status_path.read_bytes()


def test_a_persons_edit_of_the_task_while_its_status_is_put_back_wins(tmp_path):
    """The agent marked its own task [x]; a person skips it while the rollback waits for the
    plan's lock (held here): the person's [-] stays, the rollback says nothing of the status."""
    ws, base = committed(tmp_path)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))  # the claim
    snap = snapshot(ws, base)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [~] `T-1`", "- [x] `T-1`"))  # the agent
    with ThreadPoolExecutor(1) as pool:
        with file_lock(lock_path_for(ws.plan_path)):
            restoring = pool.submit(restore_documents, ws, snap, "T-1", confined=True)
            deadline = time.monotonic() + 60
            while not list(ws.rollback_dir.glob("*-T-1-plan-status/MASTER_PLAN.md")):  # then it waits for the lock
                assert time.monotonic() < deadline and not restoring.done(), "the status restore never began"
                time.sleep(0.01)
            ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] `T-1`", "- [-] `T-1`"))
        assert restoring.result(timeout=60) == ""
    assert [(t.id, t.status) for t in parse_plan(ws.plan_path).tasks] == [("T-1", "-")]


def test_a_tick_mode_the_agent_set_is_put_back_with_the_plan(tmp_path):
    """No person announced a mode: the agent's `stopped` goes with the rest of its plan."""
    ws, base = committed(tmp_path)
    snap = snapshot(ws, base)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("tick_mode: auto", "tick_mode: stopped"))
    said = restore_documents(ws, snap, "T-1")
    (dest,) = ws.rollback_dir.glob("*-T-1-plan-others")
    assert said == f"; the plan restored (but for resets and skips), the version found in {ws.rel(dest)}"
    assert parse_plan(ws.plan_path).meta.tick_mode == "auto"
    assert "tick_mode: stopped" in (dest / "MASTER_PLAN.md").read_text()


def test_a_persons_skip_kept_over_a_forged_plan_is_counted(tmp_path):
    """The plan put back with the skip a person announced applied again, and its counters
    recomputed there (not left to a later edit of the failure: a crash between keeps them)."""
    ws = engine_ws(tmp_path, "true", tasks=TWO)
    snap = snapshot(ws, git(ws.root, "rev-parse", "HEAD").strip())
    text = ws.plan_path.read_text().replace("- [ ] `T-2` [MODULE:two] Second", "- [-] `T-2` [MODULE:two] Second")
    ws.plan_path.write_text(text.replace("max_diff_lines: 50", "max_diff_lines: 5000"))  # and the agent's forgery
    edit_plan(ws.plan_path, lambda e: e.set_field("T-2", "reason", "not now"))
    persons = Receipts(skips=frozenset({("T-2", "not now")}))
    assert _restore_other_tasks(ws, snap, "T-1", persons).startswith("; the plan restored (but for resets and skips)")
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").reason, plan.meta.max_diff_lines) == ("-", "not now", 50)
    assert (plan.meta.total_tasks, plan.meta.completed_tasks) == (1, 0)
