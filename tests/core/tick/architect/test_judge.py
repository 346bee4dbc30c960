"""judge.py: an architect run's checks (SPEC §16, step 4). Each rule broken by a fake architect
(tests/agents/architect.py) through the real `command` preset, judged on disk and in git; the
snapshot's digest of docs/ read directly."""

from __future__ import annotations

import os

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.architect.judge import NOT_ITS, WRITABLE, archive_escapes, docs_tree
from memento_core.tick.architect.run import ROLLED_BACK, run_architect
from memento_core.workspace import OWN_DOCS, Workspace

from .test_agent import needs_bwrap
from .test_run import agent, entries, git, history, make_ws, tree

VIOLATIONS = {
    "edit_code": (("code.py",), "changed files other than the plan, the map and the notes: code.py"),
    "new_code": (("new_module.py",), "changed files other than the plan, the map and the notes: new_module.py"),
    "break_plan": (("T-1",), "the new plan does not lint: docs/MASTER_PLAN.md:"),
    "mark_done": (("T-1",), "marked T-1 [x] (only a passing verify marks a task done)"),
    "change_done": (("T-2",), "changed T-2, which is done"),
    "delete": (("T-1",), "deleted the task line of T-1"),
    "commit": ((), "made 1 commit(s) of its own"),
    "status_log": ((), "changed docs/TICK_STATUS.md (only Memento writes it)"),
    "fail": ((), "the architect exited with code 3"),
    "forge_note": ((), "wrote 1 note(s) into docs/HUMAN_NOTES.md"),
    "git_hook": ((), "changed git's own state: wrote .git/hooks/pre-commit"),
}


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_a_rule_breaking_architect_is_rolled_back_with_its_reason(tmp_path, name):
    args, reason = VIOLATIONS[name]
    action = "edit_code" if name == "new_code" else name
    ws = make_ws(tmp_path, agent("architect.py", action, *args))
    before, commits = tree(ws.root), history(ws.root)
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK and result.exit_code == 1
    assert any(reason in r for r in result.reasons), result.reasons
    after = tree(ws.root)
    # Everything but the status log (one new entry) is as it was; the plan too, to the byte
    # (but for the tick number the entry took).
    assert {k: v for k, v in after.items() if not k.startswith("docs/")} == \
        {k: v for k, v in before.items() if not k.startswith("docs/")}
    for rel in ("docs/HUMAN_NOTES.md", "docs/PROJECT_MAP.md"):
        assert after[rel] == before[rel]
    assert after["docs/MASTER_PLAN.md"].replace(b"total_ticks: 2", b"total_ticks: 1") == before["docs/MASTER_PLAN.md"]
    assert parse_plan(ws.plan_path).task("T-1").status == "!"
    entry = entries(ws)[-1]
    assert entry.field("Event") == "🏗 ARCHITECT — rolled back" and reason in entry.field("Reason")
    new = history(ws.root)
    assert new[1:] == commits and new[0].endswith("memento: architect rolled back")
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert files <= {"docs/MASTER_PLAN.md", "docs/TICK_STATUS.md"}
    assert {ln[3:] for ln in git(ws.root, "status", "--porcelain").splitlines()} <= {"docs/CURRENT_STATE.md"}
    assert not (ws.root / ".git" / "hooks" / "pre-commit").exists()  # git's own state put back too


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
@pytest.mark.parametrize("path", ["docs/design.md", "docs/scratch.local"])
def test_another_file_under_docs_is_a_violation_and_goes(tmp_path, sandbox, path):
    ws = make_ws(tmp_path, agent("architect.py", "docs_file", path), sandbox=sandbox)
    (ws.root / ".git" / "info" / "exclude").write_text("docs/*.local\n")  # git does not see this one
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK, result.message
    assert any(path in r for r in result.reasons)
    assert not (ws.root / path).exists() and parse_plan(ws.plan_path).task("T-1").status == "!"


def test_the_digest_of_docs_skips_mementos_documents_and_never_opens_a_fifo(tmp_path):
    from memento_core.scaffold import init_workspace

    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    ws = Workspace(root)
    (root / "docs" / "design.md").write_text("a design\n")
    os.mkfifo(root / "docs" / "pipe")  # opening it would block the run
    (root / "docs" / "sub").mkdir()
    (root / "docs" / "sub" / "deep.txt").write_bytes(b"")
    found = docs_tree(ws)
    assert set(found) == {"docs/design.md", "docs/pipe", "docs/sub/deep.txt"}
    assert not set(found) & set(OWN_DOCS)
    assert found["docs/design.md"] != found["docs/sub/deep.txt"] and len(found["docs/design.md"]) == 64
    assert found["docs/pipe"] == "a FIFO"  # its kind, not a digest: never opened
    (root / "docs" / "design.md").write_text("another design\n")
    assert docs_tree(ws)["docs/design.md"] != found["docs/design.md"]


def test_what_the_architect_may_write_and_what_only_memento_writes():
    assert WRITABLE == ("docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md", "docs/HUMAN_NOTES.md")
    assert "docs/TICK_STATUS.md" in NOT_ITS and "docs/CURRENT_STATE.md" not in NOT_ITS
    assert not set(NOT_ITS) & set(WRITABLE)


def test_an_archive_dir_pointed_out_of_the_project_through_a_link_is_said(tmp_path):
    from types import SimpleNamespace

    root = tmp_path / "proj"
    root.mkdir()
    (root / "inside").mkdir()
    (root / "out").symlink_to(tmp_path)
    ws = Workspace(root)

    def plan(value):
        return SimpleNamespace(meta=SimpleNamespace(status_archive_dir=value))

    assert archive_escapes(ws, plan("inside"), plan("inside")) == []
    assert archive_escapes(ws, plan("docs/archive"), plan("inside")) == []
    said = archive_escapes(ws, plan("docs/archive"), plan("out"))
    assert len(said) == 1 and said[0].startswith("pointed Meta status_archive_dir outside the project: ")
    assert archive_escapes(ws, plan("out"), plan("out")) == []  # unchanged: not the architect's doing
