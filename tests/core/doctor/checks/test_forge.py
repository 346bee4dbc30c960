"""checks/forge.py (SPEC §19): status comments that wait in .memento/ to be posted on GitHub issues."""

from __future__ import annotations

from datetime import UTC, datetime

from memento_core.doctor.checks.forge import check_forge
from memento_core.doctor.context import Context
from memento_core.doctor.findings import WARNING
from memento_core.forge import comments
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace


def forge(ws: Workspace):
    return check_forge(Context(ws, datetime.now(UTC)))


def comment(repo: str, number: int, queued: str) -> dict:
    return {"task": "T-1", "repo": repo, "number": number, "marker": f"m{number}", "body": "T-1 passed",
            "queued": queued}


def test_nothing_imported_and_nothing_waiting_are_two_different_ok_lines(tmp_path):
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    ws = Workspace(tmp_path / "proj")
    assert forge(ws) == "forge: no GitHub issues imported"
    comments.seed(ws, {"T-1": " "})
    assert forge(ws) == "forge: no status comment waits for GitHub"


def test_comments_that_wait_are_a_warning_naming_each_issue_once_the_oldest_and_the_last_error(tmp_path):
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    ws = Workspace(tmp_path / "proj")
    data = comments.load(ws)
    data["pending"] = [comment("o/r", 7, "2026-01-01T00:00:00Z"), comment("a/b", 2, "2026-01-02T00:00:00Z"),
                       comment("o/r", 7, "2026-01-03T00:00:00Z")]
    comments.save(ws, data)
    (finding,) = forge(ws)
    assert finding.severity == WARNING and finding.path == ws.rel(comments.state_path(ws))
    assert finding.message == ("3 status comment(s) wait to be posted on GitHub (a/b#2, o/r#7), the oldest since "
                               "2026-01-01T00:00:00Z; each tick tries again")
    data["last_error"], data["last_error_at"] = "HTTP 502", "2026-01-04T00:00:00Z"
    comments.save(ws, data)
    (finding,) = forge(ws)
    assert "the oldest since 2026-01-01T00:00:00Z; the last try failed (2026-01-04T00:00:00Z): HTTP 502; each " \
           "tick tries again" in finding.message
