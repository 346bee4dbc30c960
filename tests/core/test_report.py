"""The morning report (SPEC §15) on a real run: passes, failures of several kinds, a block."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memento_core import report
from memento_core.cli.main import main as cli
from memento_core.notes import add_note
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import agent, make_ws


def task(n: int, *, verify: str = "", extra: str = "") -> str:
    return (f"- [ ] `T-{n}` [MODULE:m] Task {n}\n  - verify: `{verify or f'grep -q done T-{n}.txt'}`\n"
            f"  - context_files: [T-{n}.txt]\n{extra}")


PLAN = (task(1) + task(2, verify="test -f never.txt", extra="  - retries: 2\n")
        + task(3) + task(4) + task(5, extra="  - timeout: 3s\n") + task(6))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One project ticked to its end: T-1 passes; T-2 fails verify and blocks; T-3 fails a
    guard, T-4 an agent error, T-5 a timeout, each once, then passes; T-6 passes."""
    tmp = tmp_path_factory.mktemp("report")
    mp = pytest.MonkeyPatch()
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        mp.setenv(var, "Test Person")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        mp.setenv(var, "test@example.invalid")
    command = agent("fails_once_by_task.py", "{task_id}", str(tmp / "marks"), "T-3=outside", "T-4=exit", "T-5=sleep")
    ws = make_ws(tmp, command, PLAN, max_retries=3)
    ws.config_path.write_text(ws.config_path.read_text().replace("[agent]\n", '[agent]\noutput = "claude"\n', 1))
    for _ in range(10):
        run_tick(ws.root)
    add_note(ws.notes_path, "please look at T-2's verify", target="T-2")
    yield ws
    mp.undo()


def test_the_json_report_counts_what_happened(run, capsys):
    assert cli(["report", "--json", str(run.root)]) == 1  # T-2 needs a person
    doc = json.loads(capsys.readouterr().out)
    assert doc["needs_you"][0]["kind"] == "blocked" and doc["needs_you"][0]["task"] == "T-2"
    assert [p["task"] for p in doc["passed"]] == ["T-1", "T-3", "T-4", "T-5", "T-6"]
    assert all(len(p["commit"] or "") >= 7 for p in doc["passed"])
    failed = {kind: [f["task"] for f in items] for kind, items in doc["failed"].items()}
    assert failed == {"verify": ["T-2"], "guard": ["T-3"], "timeout": ["T-5"], "agent error": ["T-4"]}
    assert doc["failed"]["verify"][0]["blocked"] is True
    assert doc["failed_count"] == 4
    assert doc["blocked"] == [{"id": "T-2", "title": "Task 2", "retries": 3,
                               "last_reason": doc["blocked"][0]["last_reason"]}]
    assert "exit code 1" in doc["blocked"][0]["last_reason"]
    assert doc["ticks"] == 10  # 9 attempts, then the PIPELINE BLOCKED entry
    # Usage of every attempt that reported it: 5 passes and the guard failure printed claude's result.
    assert doc["usage"]["tokens_in"] >= 5000 and doc["usage"]["cost_usd"] >= 0.05
    assert doc["time_seconds"] > 0
    assert [n["target"] for n in doc["unread_notes"]] == ["T-2"]


def test_the_human_report_says_the_same_needs_first(run, capsys):
    assert cli(["report", str(run.root)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[2].startswith("[warn] needs you") and "T-2 blocked" in lines[3]
    assert "10 ticks, 5 passed, 4 failed" in out
    for kind in ("verify (1):", "guard (1):", "timeout (1):", "agent error (1):"):
        assert kind in out
    assert "Blocked:\n  T-2 Task 2 (after 3 retries)" in out
    assert "Unread notes (1):\n  → T-2: please look at T-2's verify" in out


def test_a_date_without_ticks_reports_nothing_happened(run, capsys):
    assert cli(["report", "--date", "2001-01-01", "--json", str(run.root)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ticks"] == 0 and doc["passed"] == [] and doc["failed"] == {}
    assert doc["needs_you"]  # what needs a person is about now, whatever the window


def test_the_archive_is_read_and_old_files_are_skipped(tmp_path):
    from memento_core.status_log import format_entry
    from memento_core.workspace import Workspace

    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    archive = root / "logs" / "status_archive"
    archive.mkdir(parents=True)

    def entries(day: str, first: int) -> str:
        return "".join(format_entry(f"{day}T0{h}:00:00Z", first + h, [("Task", f"`T-{first + h}` x"),
                                                                     ("Status", "✅ SUCCESS")]) for h in range(3))

    (archive / "TICK_STATUS_2026-11-01T00-00-00Z_1.md").write_text("# TICK STATUS LOG\n\n" + entries("2026-11-01", 0))
    (archive / "TICK_STATUS_2026-11-02T00-00-00Z_1.md").write_text("# TICK STATUS LOG\n\n" + entries("2026-11-02", 10))
    (root / "docs" / "TICK_STATUS.md").write_text("# TICK STATUS LOG\n\n" + entries("2026-11-03", 20))
    ws = Workspace(root)
    files = report.history_files(ws, archive, "2026-11-02T01:00:00Z")
    assert [f.name for f in files] == ["TICK_STATUS_2026-11-02T00-00-00Z_1.md", "TICK_STATUS.md"]
    got = report.tally(report.entries_between(files, "2026-11-02T01:00:00Z", "2026-11-03T01:00:00Z"))
    assert [p["task"] for p in got["passed"]] == ["T-11", "T-12", "T-20"]


def test_a_rate_limited_attempt_counts_as_a_failure_an_event_does_not():
    from memento_core.status_log import format_entry, parse_status_text

    text = "# TICK STATUS LOG\n\n" + format_entry("2026-11-02T01:00:00Z", 3, [
        ("Task", "`T-3` x"), ("Status", "⏳ RATE LIMITED — until 14:05 UTC (preset claude)"),
        ("Reason", "rate limited: You've hit your limit · resets 2pm (UTC)")]) + format_entry(
        "2026-11-02T02:00:00Z", 4, [("Event", "⚠️ STALE claim of T-3"), ("Task", "`T-3` x"), ("Reason", "dead")])
    got = report.tally(parse_status_text(text))
    assert {k: [f["task"] for f in v] for k, v in got["failed"].items()} == {"rate limit": ["T-3"]}
    assert [e["event"] for e in got["events"]] == ["STALE"]


@pytest.mark.parametrize("reason, kind", [
    ("verify failed with exit code 1", "verify"),
    ("verify timed out after 10min", "timeout"),
    ("agent timed out after 30min (its process group was killed)", "timeout"),
    ("agent exited with code 3", "agent error"),
    ("changed files outside context_files: other.txt", "guard"),
    ("guard file changed: guarded.txt", "guard"),
    ("the agent edited docs/PROJECT_MAP.md (the worker only reads it)", "guard"),
    ("diff too large: 900 lines > max_diff_lines 50", "guard"),
    ("rate limited: You've hit your limit", "rate limit"),
    ("review: criterion 2 not met", "review"),
    ("interrupted by SIGTERM", "other"),
])
def test_category(reason, kind):
    assert report.category(reason) == kind


def test_window():
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert report.window("12h", None, now) == ("2026-12-01T00:00:00Z", "2026-12-01T12:00:01Z")
    assert report.window(None, "2026-11-30", now) == ("2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z")
    with pytest.raises(Exception, match="--date"):
        report.window(None, "yesterday", now)


def _doc(failed: list[dict]) -> dict:
    return {"project": "p", "since": "a", "until": "b", "state": "BLOCKED", "needs_you": [], "ticks": 9,
            "passed": [], "failed_count": len(failed), "time_seconds": 0.0,
            "usage": {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}, "failed": {"verify": failed},
            "blocked": [{"id": "T-2", "title": "t", "retries": 9, "last_reason": "r" * 300}], "unread_notes": []}


def test_the_report_groups_a_repeated_failure():
    same = [{"task": "T-2", "reason": "verify failed with exit code 1"} for _ in range(9)]
    lines = report.report_lines(_doc([*same, {"task": "T-3", "reason": "boom"}]))
    failures = [line for line in lines if line.startswith("    ")]
    assert failures == ["    T-2: verify failed with exit code 1 ×9", "    T-3: boom"]
    assert "  verify (10):" in lines
    blocked = next(line for line in lines if line.startswith("  T-2 t"))
    assert blocked.endswith("…") and len(blocked) < 220
