"""Rate limits, fallback presets, usage and the budget through real ticks (SPEC §14).

The agent is tests/agents/reports_like_a_cli.py run through the real
`command` preset; ``[agent] output = "claude"`` (or "codex") tells the tick
to read its output as that CLI's. Everything is judged on disk: the status
entries, the plan's retries, state.json, usage.json, cron.log and git.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from memento_core import spending, status_log
from memento_core.agents.logpipe import Capture, LogPipe
from memento_core.agents.usage import RateLimit
from memento_core.config.load import load_config
from memento_core.plan.scan import parse_plan
from memento_core.runlog import utc_stamp
from memento_core.scaffold import init_workspace
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.context import TickContext
from memento_core.tick.limits import (
    AgentOutcome,
    BudgetWatch,
    clock,
    daily_budget_spent,
    judge_suspect,
    note_windows,
    over_task_budget,
    parse_stamp,
    presets_to_try,
    read_output,
    skip_reason,
    task_streak,
    with_usage,
)
from memento_core.workspace import Workspace

AGENT = Path(__file__).resolve().parents[2] / "agents" / "reports_like_a_cli.py"


def task(n: int) -> str:
    return (f"- [ ] `T-{n}` [MODULE:m] Write T-{n}.txt\n"
            f"  - verify: `grep -q done T-{n}.txt`\n"
            f"  - context_files: [T-{n}.txt]\n"
            f"  - do: `printf 'done by script\\n' > T-{n}.txt`\n"
            f"  - retries: 0\n")


def make_ws(tmp_path: Path, kind: str, *, output: str = "claude", extra: str = "", tasks: int = 1,
            cost: float | str = 0.042, per_tick: int = 1) -> Workspace:
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    body = "\n".join(task(n) for n in range(1, tasks + 1))
    (root / "docs" / "MASTER_PLAN.md").write_text(
        "# MASTER_PLAN: limits\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n"
        f"- max_tasks_per_tick: {per_tick}\n"
        "- circuit_breaker_threshold: 2\n- total_ticks: 0\n\n## Phase 1: Only\n<!-- depends: none -->\n\n"
        + body)
    counter = tmp_path / "runs.txt"
    command = f"{sys.executable} {AGENT} {kind} {cost} {counter}"
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\noutput = "{output}"\ntimeout = "30s"\n'
        f'{extra}\n[verify]\ntimeout = "30s"\n'
        # The fake agent counts its runs in a file outside the project (SPEC §13's sandbox would hide it).
        '[sandbox]\nmode = "none"\n')
    for name in ("T-1.txt", "T-2.txt", "T-3.txt"):
        (root / name).write_text("not yet\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    return Workspace(root)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def entries(ws: Workspace) -> list[status_log.TickEntry]:
    return status_log.parse_status(ws.status_path)


def runs(ws: Workspace) -> list[str]:
    counter = ws.root.parent / "runs.txt"
    return counter.read_text().split() if counter.exists() else []


def retries(ws: Workspace, task_id: str = "T-1") -> int:
    return parse_plan(ws.plan_path).task(task_id).retries


def cron_lines(ws: Workspace) -> list[str]:
    return ws.cron_log.read_text().splitlines() if ws.cron_log.exists() else []


def end_the_wait(ws: Workspace) -> None:
    """As if the reset time had passed: every remembered limit moved into the past."""
    data = json.loads(ws.state_path.read_text())
    past = "2000-01-01T00:00:00Z"
    data["rate_limited_until"] = past
    data["preset_limits"] = {k: past for k in data["preset_limits"]}
    ws.state_path.write_text(json.dumps(data))


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


# ------------------------------------------------------------------ rate limited


def test_a_usage_limit_with_its_reset_time_is_waited_out_not_counted(tmp_path):
    ws = make_ws(tmp_path, "claude-limit")
    head = git(ws.root, "rev-parse", "HEAD").strip()
    outcome = run_tick(ws.root)

    assert [r.passed for r in outcome.results] == [False]
    expected = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)
    entry = entries(ws)[-1]
    assert entry.field("Status") == f"⏳ RATE LIMITED — until {clock(expected)} (preset command)"
    assert entry.status == "RATE LIMITED" and entry.task_id == "T-1"
    assert "hit your limit" in entry.field("Reason")
    # not the task's failure: no retry, no breaker count, the refused work rolled back
    assert retries(ws) == 0 and parse_plan(ws.plan_path).task("T-1").status == " "
    state = TickState.load(ws)
    assert state.consecutive_failed_ticks == 0
    assert parse_stamp(state.rate_limited_until) == expected and state.rate_limited_preset == "command"
    assert (ws.root / "T-1.txt").read_text() == "not yet\n" and not (ws.root / "junk.txt").exists()
    assert git(ws.root, "diff", "--name-only", head, "HEAD").split() == \
        ["docs/CURRENT_STATE.md", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md"]  # one commit per tick
    assert git(ws.root, "log", "-1", "--format=%s").strip() == "memento: T-1 rate limited"

    # the next ticks skip until then: cron.log only, the agent not run, no entry
    count = len(entries(ws))
    for _ in range(3):
        skipped = run_tick(ws.root)
        assert skipped.exit_code == 0 and "rate limited until" in skipped.message
    assert runs(ws) == ["claude-limit"]
    assert len(entries(ws)) == count
    assert cron_lines(ws)[-1].endswith(f"tick skipped: rate limited until {clock(expected)} (preset command)")
    assert TickState.load(ws).consecutive_failed_ticks == 0
    doc = status_json(ws)
    assert doc["rate_limit"] == {"until": utc_stamp(expected), "preset": "command"}
    human = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", str(ws.root)],
                           capture_output=True, text=True).stdout
    assert f"[warn] rate limited until {utc_stamp(expected)} (preset command)" in human


def status_json(ws: Workspace) -> dict:
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", "--json", str(ws.root)],
                         capture_output=True, text=True)
    return json.loads(run.stdout)


def test_a_429_without_a_time_backs_off_5_then_10_minutes_and_never_trips_the_breaker(tmp_path):
    ws = make_ws(tmp_path, "http-429")
    waits, since = [], set()
    for _ in range(3):  # the breaker threshold is 2: three failed ticks would trip it
        before = datetime.now(UTC)
        outcome = run_tick(ws.root)
        assert [r.passed for r in outcome.results] == [False]
        until = parse_stamp(TickState.load(ws).rate_limited_until)
        since.add(TickState.load(ws).rate_limited_since)  # the first refusal of the streak, kept
        waits.append(round((until - before).total_seconds() / 60))
        end_the_wait(ws)
    assert waits == [5, 10, 20]
    (first,) = since
    assert first and parse_stamp(first) <= datetime.now(UTC)
    state = TickState.load(ws)
    state.rate_limit_streak = 5  # 5 · 2⁵ = 160 minutes: the longest wait is two hours
    state.save(ws)
    before = datetime.now(UTC)
    run_tick(ws.root)
    assert round((parse_stamp(TickState.load(ws).rate_limited_until) - before).total_seconds() / 60) == 120
    end_the_wait(ws)
    assert retries(ws) == 0
    state = TickState.load(ws)
    assert state.consecutive_failed_ticks == 0 and not state.breaker_reason
    assert parse_plan(ws.plan_path).meta.tick_mode == "auto"
    assert [e.status for e in entries(ws)] == ["RATE LIMITED"] * 4
    assert "429" in entries(ws)[-1].field("Reason")


# ------------------------------------------------------------------ exit 0: the last words, then verify


def next_hours(hours: int = 2) -> datetime:
    return (datetime.now(UTC) + timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0)


@pytest.mark.parametrize("wording", ["old", "new"])
def test_claude_exiting_0_at_its_usage_limit_is_rate_limited_with_its_reset_time(tmp_path, wording):
    ws = make_ws(tmp_path, "claude-limit-0", cost=wording)
    expected = next_hours()
    outcome = run_tick(ws.root)

    assert [r.passed for r in outcome.results] == [False]
    entry = entries(ws)[-1]
    assert entry.field("Status") == f"⏳ RATE LIMITED — until {clock(expected)} (preset command)", \
        entry.field("Reason")
    assert entry.field("Reason").startswith("rate limited: ")
    assert retries(ws) == 0 and TickState.load(ws).consecutive_failed_ticks == 0
    assert parse_stamp(TickState.load(ws).rate_limited_until) == expected
    assert (ws.root / "T-1.txt").read_text() == "not yet\n" and not (ws.root / "junk.txt").exists()
    assert "skipped: rate limited" in run_tick(ws.root).message
    assert runs(ws) == ["claude-limit-0"]


def test_aider_exiting_0_after_giving_up_on_429s_is_rate_limited(tmp_path):
    ws = make_ws(tmp_path, "aider-gives-up", output="aider")
    before = datetime.now(UTC)
    run_tick(ws.root)
    entry = entries(ws)[-1]
    assert entry.status == "RATE LIMITED", entry.field("Reason")
    assert "rate limited you" in entry.field("Reason") and retries(ws) == 0
    until = parse_stamp(TickState.load(ws).rate_limited_until)
    assert timedelta(minutes=4) <= until - before <= timedelta(minutes=6)  # no reset time: the first backoff


@pytest.mark.parametrize("kind", ["mentions-429", "mentions-429-early"])
def test_an_agent_exiting_0_that_mentions_a_429_but_whose_task_passes_is_not_rate_limited(tmp_path, kind):
    ws = make_ws(tmp_path, kind)
    # A limit of this preset remembered from long ago: a pass with no limit in its words forgets it.
    ws.state_path.write_text(json.dumps({"preset_limits": {"command": "2000-01-01T00:00:00Z"},
                                         "rate_limit_streak": 3, "rate_limited_since": "2000-01-01T00:00:00Z"}))
    outcome = run_tick(ws.root)

    assert [r.passed for r in outcome.results] == [True], outcome.message
    entry = entries(ws)[-1]
    assert entry.status == "SUCCESS" and entry.task_id == "T-1"
    state = TickState.load(ws)
    assert state.rate_limited_until == "" and state.preset_limits == {}
    assert (state.rate_limit_streak, state.rate_limited_since) == (0, "")  # the next 429 waits 5 minutes
    assert git(ws.root, "show", "HEAD:T-1.txt") == "done\n"
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    log = (ws.root / outcome.log).read_text()
    said_limit = "its last words read as a rate limit" in log
    assert said_limit == (kind == "mentions-429")  # ten lines later it is no longer the last word
    assert ("command's last words mention a rate limit, but the task passed" in log) == said_limit


def test_a_verify_timeout_names_the_tasks_own_timeout(tmp_path):
    ws = make_ws(tmp_path, "claude-done")
    plan = ws.plan_path.read_text().replace("  - verify: `grep -q done T-1.txt`",
                                            "  - verify: `sleep 30`\n  - timeout: 2s")
    ws.plan_path.write_text(plan)
    git(ws.root, "commit", "-qam", "a slow verify")
    outcome = run_tick(ws.root)
    assert outcome.results[0].reason == "verify timed out after 2s", outcome.results[0].reason
    assert entries(ws)[-1].field("Reason") == "verify timed out after 2s"


def test_codex_events_read_through_the_output_setting(tmp_path):
    ws = make_ws(tmp_path, "codex-limit", output="codex")
    before = datetime.now(UTC)
    run_tick(ws.root)
    until = parse_stamp(TickState.load(ws).rate_limited_until)
    assert timedelta(hours=2, minutes=4) <= until - before <= timedelta(hours=2, minutes=6)
    assert entries(ws)[-1].status == "RATE LIMITED" and retries(ws) == 0


@pytest.mark.parametrize("kind", ["claude-limit", "claude-limit-0"])  # exit 1; exit 0 and verify fails
def test_a_fallback_preset_runs_in_the_same_tick(tmp_path, kind):
    ws = make_ws(tmp_path, kind, cost="new", extra='fallback = ["script"]', tasks=2)
    outcome = run_tick(ws.root)

    # the refused agent's scribbles were rolled back before the script preset ran
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    assert (ws.root / "T-1.txt").read_text() == "done by script\n" and not (ws.root / "junk.txt").exists()
    assert git(ws.root, "show", "--name-only", "--format=", "HEAD").split() == \
        ["T-1.txt", "docs/CURRENT_STATE.md", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md"]
    entry = entries(ws)[-1]
    assert entry.status == "SUCCESS" and [e.status for e in entries(ws)] == ["SUCCESS"]
    assert entry.field("Fallback").startswith("command rate limited until ") and "ran script" in entry.field(
        "Fallback")
    assert retries(ws) == 0 and TickState.load(ws).rate_limited_until == ""  # the tick does not wait
    log = (ws.root / outcome.log).read_text()
    assert f"[memento] command is rate limited until {clock(next_hours())}: trying script in this tick\n" in log

    # the next tick goes straight to the fallback while the first preset is still refused
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-2", True)]
    assert runs(ws) == [kind]


def test_a_refused_presets_nested_repository_is_gone_before_git_or_the_fallback_meets_it(tmp_path):
    """The rollback before a fallback preset runs git in the work tree: a repository the refused
    agent nested there must be taken out first, or its fsmonitor runs as the person."""
    marker = tmp_path / "fsmonitor-ran"
    ws = make_ws(tmp_path, "claude-limit", cost=f"nests:{marker}", extra='fallback = ["script"]')
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    assert not (ws.root / "nested").exists() and not marker.exists()
    saved = list((ws.root / "logs" / "rollback").glob("*-T-1-unseen"))
    assert saved, sorted(p.name for p in (ws.root / "logs" / "rollback").iterdir())


def test_with_every_preset_still_refused_but_no_wait_the_first_preset_runs(tmp_path):
    # The tick's own wait is over (or was never written: a parallel worker refused meanwhile) while
    # each preset's remembered limit is not: the configured preset is tried, not nothing.
    ws = make_ws(tmp_path, "claude-done", extra='fallback = ["script"]')
    run_tick(ws.root)  # T-1 done; state.json written
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] `T-1`", "- [ ] `T-1`"))
    git(ws.root, "commit", "-qam", "again")
    data = json.loads(ws.state_path.read_text())
    later = utc_stamp(datetime.now(UTC) + timedelta(hours=1))
    data["preset_limits"], data["rate_limited_until"] = {"command": later, "script": later}, ""
    ws.state_path.write_text(json.dumps(data))
    (ws.root / "T-1.txt").write_text("not yet\n")
    git(ws.root, "commit", "-qam", "not yet")
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason
    assert runs(ws) == ["claude-done", "claude-done"]


# ------------------------------------------------------------------ usage and budget


def test_usage_is_recorded_in_the_entry_the_ledger_and_status(tmp_path):
    ws = make_ws(tmp_path, "claude-done")
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [True], outcome.message
    entry = entries(ws)[-1]
    assert entry.field("Usage") == "12.3k in / 2.1k out tokens, $0.042"
    assert entry.usage == spending.Usage(12300, 2100, 0.042)
    assert spending.usage_summary(ws)["today"] == {"tokens_in": 12300, "tokens_out": 2100, "cost_usd": 0.042}
    log = (ws.root / outcome.log).read_text()
    assert "[memento] claude said:\nWrote hello.txt." in log
    assert "[memento] usage: 12.3k in / 2.1k out tokens, $0.042" in log
    doc = status_json(ws)
    assert doc["usage"]["today"]["cost_usd"] == 0.042 and doc["usage"]["total"]["tokens_in"] == 12300
    assert doc["rate_limit"] == {"until": None, "preset": None}
    assert doc["budget"] == {"daily_usd": 0.0, "task_usd": 0.0, "daily_tokens": 0, "task_tokens": 0,
                             "reached": False}
    human = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", str(ws.root)],
                           capture_output=True, text=True).stdout
    assert "[ok] usage today: 12,300 in / 2,100 out tokens, $0.042" in human


def test_an_attempt_over_the_task_budget_fails_with_that_reason(tmp_path):
    ws = make_ws(tmp_path, "claude-done", extra="[budget]\ntask_usd = 0.01", cost=0.5)
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [False]
    assert outcome.results[0].reason == "task budget exceeded: $0.500 of $0.01"
    assert retries(ws) == 1  # a real failure of the attempt
    assert (ws.root / "T-1.txt").read_text() == "not yet\n"  # rolled back
    assert entries(ws)[-1].usage == spending.Usage(12300, 2100, 0.5)


def test_the_daily_budget_stops_ticking_with_one_entry(tmp_path):
    ws = make_ws(tmp_path, "claude-done", extra="[budget]\ndaily_usd = 0.05", tasks=3)
    assert [r.passed for r in run_tick(ws.root).results] == [True]  # $0.042 today
    assert [r.passed for r in run_tick(ws.root).results] == [True]  # $0.084: over the budget now
    for _ in range(2):
        outcome = run_tick(ws.root)
        assert outcome.exit_code == 0 and outcome.message == "tick skipped: budget reached ($0.08 of $0.05 today)"
    budget = [e for e in entries(ws) if e.status == "BUDGET REACHED"]
    assert len(budget) == 1 and budget[0].field("Event") == "💸 BUDGET REACHED — $0.08 of $0.05 today"
    assert runs(ws) == ["claude-done", "claude-done"]
    assert parse_plan(ws.plan_path).task("T-3").status == " "
    assert git(ws.root, "status", "--porcelain") == ""  # the entry was committed
    assert cron_lines(ws)[-1].endswith("tick skipped: budget reached ($0.08 of $0.05 today)")
    doc = status_json(ws)
    assert doc["budget"] == {"daily_usd": 0.05, "task_usd": 0.0, "daily_tokens": 0, "task_tokens": 0,
                             "reached": True}


def test_a_tick_of_several_tasks_stops_when_the_daily_budget_is_spent(tmp_path):
    ws = make_ws(tmp_path, "claude-done", extra="[budget]\ndaily_usd = 0.05", tasks=3, per_tick=3, cost=0.06)
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)]
    assert run_tick(ws.root).message == "tick skipped: budget reached ($0.06 of $0.05 today)"
    assert runs(ws) == ["claude-done"]


def test_spending_exactly_the_daily_budget_stops_the_day(tmp_path):
    ws = make_ws(tmp_path, "claude-done", extra="[budget]\ndaily_usd = 0.05", tasks=3, per_tick=3, cost=0.05)
    outcome = run_tick(ws.root)  # $0.05 of $0.05: no second task in this tick
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)]
    assert run_tick(ws.root).message == "tick skipped: budget reached ($0.05 of $0.05 today)"
    assert runs(ws) == ["claude-done"]
    assert [e.status for e in entries(ws)].count("BUDGET REACHED") == 1


def test_an_agent_streaming_its_cost_is_stopped_at_the_task_budget(tmp_path):
    ws = make_ws(tmp_path, "aider-spends", output="aider", extra="[budget]\ntask_usd = 0.05", cost=0.02)
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [False]
    # stopped after the reply that took the session over $0.05 (not at the 30 s timeout)
    assert outcome.results[0].reason == "task budget exceeded: $0.060 of $0.05 (the agent was stopped)"
    assert retries(ws) == 1 and (ws.root / "T-1.txt").read_text() == "not yet\n"
    assert entries(ws)[-1].field("Usage") == "7.5k in / 1.0k out tokens, $0.060"
    assert spending.usage_summary(ws)["today"]["cost_usd"] == 0.06
    # the agent (it hangs for 120 s) was killed by the watch, not at its 30 s timeout
    logs = "".join(p.read_text() for p in (ws.root / "logs").glob("tick_*.log"))
    assert "session." in logs and "[memento] timed out after" not in logs


def test_without_usage_json_status_sums_the_status_log(tmp_path):
    ws = make_ws(tmp_path, "claude-done", tasks=2)
    run_tick(ws.root)
    run_tick(ws.root)
    spending.ledger_path(ws).unlink()
    doc = status_json(ws)
    assert doc["usage"]["today"] == {"tokens_in": 24600, "tokens_out": 4200, "cost_usd": 0.084}
    assert doc["usage"]["total"] == doc["usage"]["today"]


def test_a_moment_today_is_said_by_its_time_and_another_days_with_its_date():
    now = datetime.now(UTC)
    assert clock(now) == now.strftime("%H:%M UTC")
    later = now + timedelta(days=2)
    assert clock(later) == later.strftime("%Y-%m-%d %H:%M UTC")


def test_a_cost_over_the_budget_printed_before_the_agents_group_is_known_still_stops_it():
    """The watch saw the agent over its budget before the tick knew its process group, and the agent
    prints nothing more: the next look, once the group is known, stops it all the same."""
    import threading
    from types import SimpleNamespace

    from memento_core.tick.limits import BudgetWatch

    line = "Tokens: 2.5k sent, 345 received. Cost: $0.06 message, $0.06 session.\n"
    looked = threading.Event()

    def text() -> str:
        looked.set()
        return line

    printed = SimpleNamespace(size=len(line), text=text)
    config = SimpleNamespace(agent_output="aider", agent_preset="command", budget_task_usd=0.05, budget_task_tokens=0)
    beat = SimpleNamespace(claim=SimpleNamespace(pgid=None))
    agent = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        watch = BudgetWatch(SimpleNamespace(config=config), beat, printed, every=0.02)
        watch.marker = None  # read `printed` itself, as for a CLI without a usage marker
        with watch:
            assert looked.wait(20)  # the watch read the output while the group was not known yet
            beat.claim.pgid = agent.pid
            agent.wait(timeout=20)
        assert watch.stopped == "task budget exceeded: $0.060 of $0.05 (the agent was stopped)"
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


# ------------------------------------------------------------------ the module's steps, one by one
#
# Called on a real committed workspace and a real TickContext (the agent never runs): judged on
# their values, state.json's fields, the status log, the tick log and git.


def context(tmp_path: Path, **config) -> TickContext:
    """A tick's context on the workspace make_ws writes, its configuration changed by ``config``."""
    ws = make_ws(tmp_path, "claude-done")
    ctx = TickContext(ws)
    ctx.config = dataclasses.replace(load_config(ws.root / "memento.toml"), **config)
    return ctx


def tick_log(ctx: TickContext) -> str:
    return ctx.log_path.read_text() if ctx.log_path.exists() else ""


def test_the_seventh_rate_limited_attempt_of_a_task_in_a_row_counts_a_retry(tmp_path):
    ctx = context(tmp_path)
    limited = "⏳ RATE LIMITED — until 14:05 UTC (preset claude)"
    for n in range(1, 7):  # six in a row count nothing (SPEC §14)
        assert task_streak(ctx, "T-1", limited, "rate limited: 429") == (limited, "rate limited: 429")
        assert ctx.state.task_limit_streaks == {"T-1": n}
    assert "rate-limited attempts in a row" not in tick_log(ctx)
    assert task_streak(ctx, "T-1", limited, "rate limited: 429") == \
        ("", "rate limited: 429 (7 rate-limited attempts of T-1 in a row: counted as a failure)")
    assert "[memento] T-1: 7 rate-limited attempts in a row: this one counts a retry\n" in tick_log(ctx)
    assert task_streak(ctx, "T-2", limited, "rate limited: 429") == (limited, "rate limited: 429")
    assert ctx.state.task_limit_streaks == {"T-1": 7, "T-2": 1}


def test_an_attempt_not_rate_limited_ends_its_tasks_streak_and_an_interrupted_one_counts_nothing(tmp_path):
    ctx = context(tmp_path)
    ctx.state.task_limit_streaks = {"T-1": 6, "T-2": 3}
    ctx.interrupted = True
    limited = "⏳ RATE LIMITED — until 14:05 UTC (preset claude)"
    assert task_streak(ctx, "T-1", limited, "rate limited: 429") == (limited, "rate limited: 429")
    assert ctx.state.task_limit_streaks == {"T-1": 6, "T-2": 3}
    ctx.interrupted = False
    # an ending with a ⏳ only at its end is no rate limit: a Status starts with it
    assert task_streak(ctx, "T-1", "failed ⏳", "verify failed") == ("failed ⏳", "verify failed")
    assert ctx.state.task_limit_streaks == {"T-2": 3}
    ctx.state.task_limit_streaks = None  # state.json written by hand: not a table
    assert task_streak(ctx, "T-2", limited, "rate limited: 429") == (limited, "rate limited: 429")
    assert ctx.state.task_limit_streaks == {"T-2": 1}


def test_a_suspected_limit_whose_task_passed_answers_its_empty_reason_and_forgets_the_preset(tmp_path):
    # review.py asks the answer's startswith(): it must be the reason itself, a str, not None
    ctx = context(tmp_path)
    ctx.state.preset_limits = {"claude": "2000-01-01T00:00:00Z"}
    ctx.state.rate_limit_streak = 2
    outcome = AgentOutcome(preset="claude")
    outcome.suspect = ("claude", RateLimit(None, "429"), ctx.config, [])
    assert judge_suspect(ctx, outcome, "") == ""
    assert outcome.suspect is None and outcome.limit is None
    assert (ctx.state.preset_limits, ctx.state.rate_limit_streak) == ({}, 0)
    assert tick_log(ctx) == "[memento] claude's last words mention a rate limit, but the task passed: not a rate limit\n"


def test_an_outcome_is_rate_limited_only_with_both_its_limit_and_its_time():
    until = datetime.now(UTC) + timedelta(hours=1)
    limit = RateLimit(until, "429")
    assert AgentOutcome(limit=limit, until=None, preset="claude").status() == ""
    assert AgentOutcome(limit=None, until=until, preset="claude").status() == ""
    assert AgentOutcome(limit=limit, until=until, preset="claude").status() == \
        f"⏳ RATE LIMITED — until {clock(until)} (preset claude)"


def test_usage_and_fallback_go_just_before_the_log_field_or_last():
    outcome = AgentOutcome(usage=spending.Usage(1200, 300, 0.5), fallbacks=["claude rate limited; ran codex"])
    usage = ("Usage", "1.2k in / 300 out tokens, $0.500")
    fallback = ("Fallback", "claude rate limited; ran codex")
    fields = [("Task", "`T-1`"), ("Status", "✅ SUCCESS"), ("Log", "logs/tick.log"), ("Duration", "3s")]
    assert with_usage(fields, outcome) == [*fields[:2], usage, fallback, *fields[2:]]
    assert with_usage(fields[:2], outcome) == [*fields[:2], usage, fallback]
    assert with_usage(fields, AgentOutcome()) == fields and with_usage(fields, None) == fields


def test_presets_to_try_leave_out_those_still_refused_and_keep_the_first_when_all_are(tmp_path):
    ctx = context(tmp_path, agent_preset="claude", agent_fallback=("codex", "gemini"))
    now = datetime.now(UTC).replace(microsecond=0)
    later = utc_stamp(now + timedelta(minutes=5))
    ctx.state.preset_limits = {"claude": later, "codex": utc_stamp(now)}  # codex's ends this very second
    assert presets_to_try(ctx, now) == ["codex", "gemini"]
    ctx.state.preset_limits = {"claude": later, "codex": later, "gemini": later}
    assert presets_to_try(ctx, now) == ["claude"]


# ------------------------------------------------------------------ usage windows, one by one


def window_event(**windows: tuple[float, datetime]) -> str:
    """Claude Code's rate_limit_event line: each window's share used and its reset."""
    unified = {name: {"utilization": used, "resetsAt": int(at.timestamp())} for name, (used, at) in windows.items()}
    return json.dumps({"type": "rate_limit_event", "rate_limit_info": {"unifiedWindows": unified}}) + "\n"


def claude_context(tmp_path: Path, pause_at: float) -> TickContext:
    return context(tmp_path, agent_preset="command", agent_output="claude", budget_window_pause_at=pause_at)


def test_a_window_exactly_at_window_pause_at_pauses_until_its_reset(tmp_path):
    ctx = claude_context(tmp_path, 50)
    reset = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
    note_windows(ctx, window_event(five_hour=(0.5, reset), seven_day=(0.49, reset + timedelta(days=2))), "claude")
    state = ctx.state
    assert (state.window_paused_until, state.window_paused_what, state.window_paused_preset) == \
        (utc_stamp(reset), "50% (5-hour)", "claude")
    assert tick_log(ctx) == ("[memento] claude's 5-hour usage window is 50% used ([budget] window_pause_at = 50): "
                             f"no attempt starts until {clock(reset)}\n")


@pytest.mark.parametrize("pause_at, used", [(0, 1.0), (50, 0.49)])
def test_a_window_under_window_pause_at_or_with_it_off_pauses_nothing(tmp_path, pause_at, used):
    ctx = claude_context(tmp_path, pause_at)
    note_windows(ctx, window_event(five_hour=(used, datetime.now(UTC) + timedelta(hours=3))), "claude")
    assert ctx.state.window_paused_until == "" and tick_log(ctx) == ""


def test_window_pause_at_1_pauses_at_1_percent(tmp_path):
    ctx = claude_context(tmp_path, 1)
    note_windows(ctx, window_event(five_hour=(0.01, datetime.now(UTC) + timedelta(hours=3))), "claude")
    assert ctx.state.window_paused_what == "1% (5-hour)"


def test_a_full_window_whose_reset_has_passed_or_a_preset_without_windows_pauses_nothing(tmp_path):
    ctx = claude_context(tmp_path, 50)
    note_windows(ctx, window_event(five_hour=(1.0, datetime.now(UTC) - timedelta(minutes=1))), "claude")
    assert ctx.state.window_paused_until == ""
    ctx.config = dataclasses.replace(ctx.config, agent_output="")  # the command preset reads no window
    note_windows(ctx, window_event(five_hour=(1.0, datetime.now(UTC) + timedelta(hours=3))), "command")
    assert ctx.state.window_paused_until == "" and tick_log(ctx) == ""


def test_a_window_ending_no_later_than_the_pause_on_leaves_it_as_it_is(tmp_path):
    ctx = claude_context(tmp_path, 50)
    reset = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
    note_windows(ctx, window_event(five_hour=(0.9, reset)), "claude")
    log = tick_log(ctx)
    note_windows(ctx, window_event(seven_day=(0.95, reset)), "other")  # the same reset: said already
    note_windows(ctx, window_event(seven_day=(0.95, reset - timedelta(hours=1))), "other")
    assert (ctx.state.window_paused_what, ctx.state.window_paused_preset) == ("90% (5-hour)", "claude")
    assert tick_log(ctx) == log
    note_windows(ctx, window_event(seven_day=(0.95, reset + timedelta(hours=1))), "other")  # longer: it wins
    assert (ctx.state.window_paused_until, ctx.state.window_paused_what, ctx.state.window_paused_preset) == \
        (utc_stamp(reset + timedelta(hours=1)), "95% (7-day)", "other")


def test_a_paused_window_skips_ticks_with_one_committed_entry_then_ends_at_its_time(tmp_path):
    ctx = context(tmp_path)  # preset "command"
    until = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    state = ctx.state
    state.window_paused_until, state.window_paused_what, state.window_paused_preset = \
        utc_stamp(until), "96% (5-hour)", "claude"
    said = f"tick skipped: usage window 96% (5-hour) until {clock(until)} (preset claude)"
    for _ in range(2):
        assert skip_reason(ctx) == said
    windows = [e for e in entries(ctx.ws) if e.status == "WINDOW"]
    assert len(windows) == 1 and windows[0].field("Event") == f"⏳ WINDOW 96% (5-hour) — until {clock(until)} (preset claude)"
    assert git(ctx.root, "log", "-1", "--format=%s").strip() == "memento: usage window paused"
    assert git(ctx.root, "status", "--porcelain", "docs") == ""
    assert daily_budget_spent(ctx) is True  # no further task in this tick
    assert skip_reason(ctx, until) == ""  # its reset time itself: the window is over
    assert (state.window_paused_until, state.window_paused_what, state.window_paused_preset) == ("", "", "")
    assert daily_budget_spent(ctx) is False


def test_a_window_paused_without_a_preset_names_the_configured_one(tmp_path):
    ctx = context(tmp_path)
    until = datetime.now(UTC) + timedelta(hours=2)
    ctx.state.window_paused_until, ctx.state.window_paused_what = utc_stamp(until), "96% (5-hour)"
    assert skip_reason(ctx).endswith("(preset command)")


def test_the_rate_limit_wait_ends_at_its_time_and_is_forgotten(tmp_path):
    ctx = context(tmp_path)
    until = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=5)
    ctx.state.rate_limited_until, ctx.state.rate_limited_preset = utc_stamp(until), "claude"
    assert skip_reason(ctx, until - timedelta(seconds=1)) == \
        f"tick skipped: rate limited until {clock(until)} (preset claude)"
    assert skip_reason(ctx, until) == ""
    assert (ctx.state.rate_limited_until, ctx.state.rate_limited_preset) == ("", "")


# ------------------------------------------------------------------ budgets, one by one


@pytest.mark.parametrize("config, usage, over", [
    ({"budget_task_tokens": 100}, spending.Usage(60, 40, 9.0), ""),
    ({"budget_task_tokens": 100}, spending.Usage(60, 41), "task budget exceeded: 101 of 100 tokens"),
    ({"budget_task_tokens": 1}, spending.Usage(1, 1), "task budget exceeded: 2 of 1 tokens"),
    ({"budget_task_usd": 0.05}, spending.Usage(10**6, 10**6, 0.05), ""),
    ({"budget_task_usd": 0.05}, spending.Usage(1, 1, None), ""),
    ({"budget_task_usd": 0.05}, spending.Usage(1, 1, 0.051), "task budget exceeded: $0.051 of $0.05"),
    ({}, spending.Usage(10**6, 10**6, 100.0), ""),
    ({"budget_task_usd": 0.05, "budget_task_tokens": 1}, None, ""),  # the CLI reported no usage
])
def test_the_task_budget_is_exceeded_only_past_its_value(tmp_path, config, usage, over):
    assert over_task_budget(context(tmp_path, **config), usage) == over


def spent_today(ctx: TickContext, tokens_in: int, tokens_out: int, cost: float) -> None:
    spending.add_usage(ctx.ws, spending.Usage(tokens_in, tokens_out, cost))


def test_the_daily_token_budget_is_reached_at_its_value_with_one_entry(tmp_path):
    ctx = context(tmp_path, budget_daily_tokens=100)
    spent_today(ctx, 60, 39, 0.5)
    assert skip_reason(ctx) == "" and daily_budget_spent(ctx) is False
    spent_today(ctx, 0, 1, 0.0)
    for _ in range(2):
        assert skip_reason(ctx) == "tick skipped: budget reached (100 of 100 tokens today)"
    assert daily_budget_spent(ctx) is True
    (budget,) = [e for e in entries(ctx.ws) if e.status == "BUDGET REACHED"]
    assert budget.field("Event") == "💸 BUDGET REACHED — 100 of 100 tokens today"
    assert "raise [budget] daily_tokens in memento.toml" in budget.field("Action")
    assert git(ctx.root, "log", "-1", "--format=%s").strip() == "memento: budget reached"


@pytest.mark.parametrize("config, used, reached", [
    ({"budget_daily_tokens": 1}, None, False),  # nothing spent today: no day in usage.json
    ({"budget_daily_tokens": 1}, (1, 0, 0.0), True),
    ({"budget_daily_usd": 1.0}, (10**6, 10**6, 0.5), False),  # tokens have no budget
    ({"budget_daily_tokens": 10**9}, (10, 10, 50.0), False),  # nor has the cost
])
def test_a_daily_budget_counts_only_what_it_names(tmp_path, config, used, reached):
    ctx = context(tmp_path, **config)
    if used is not None:
        spent_today(ctx, *used)
    assert daily_budget_spent(ctx) is reached
    assert skip_reason(ctx).startswith("tick skipped: budget reached") is reached


def test_a_tick_reads_the_windows_its_agent_reported(tmp_path):
    ws = make_ws(tmp_path, "claude-stream", cost=0.96, extra="[budget]\nwindow_pause_at = 95")
    assert [r.passed for r in run_tick(ws.root).results] == [True]
    assert TickState.load(ws).window_paused_what == "96% (5-hour)"


# ------------------------------------------------------------------ a limit and the budget in one answer

SAYS = """import json, pathlib, sys
said = pathlib.Path(sys.argv[0]).with_suffix(".txt").read_text()
print(json.dumps({"type": "result", "subtype": "success", "is_error": sys.argv[1] != "0", "result": said,
                  "total_cost_usd": float(sys.argv[2]), "usage": {"input_tokens": 10, "output_tokens": 10}}))
if "scribble" in sys.argv[3:]:  # a refused agent's edit of the task's own `do:`, which the script preset runs
    plan = pathlib.Path("docs/MASTER_PLAN.md")
    plan.write_text(plan.read_text().replace("done by script", "done by the refused agent's plan"))
sys.exit(int(sys.argv[1]))
"""


def saying(tmp_path: Path, said: str, code: int, cost: float, extra: str = "", *, scribble: bool = False,
           tasks: int = 1) -> Workspace:
    """A workspace whose agent prints claude's result object saying ``said`` (its cost ``cost``),
    exits ``code`` and leaves the task undone (``scribble``: the `do:` of T-1 in the plan changed)."""
    ws = make_ws(tmp_path, "claude-done", extra=extra, tasks=tasks)
    script = tmp_path / "says.py"
    script.write_text(SAYS)
    script.with_suffix(".txt").write_text(said)
    toml = ws.root / "memento.toml"
    toml.write_text(toml.read_text().replace(f"{AGENT} claude-done", f"{script} {code} {cost}{' scribble' if scribble else ''}"))
    git(ws.root, "commit", "-qam", "the agent says")
    return ws


LIMIT = "You've hit your limit · resets 5pm (UTC)"


def test_a_limit_in_an_answer_over_the_task_budget_is_that_budget_at_exit_0_and_a_limit_else(tmp_path):
    ws = saying(tmp_path / "exit0", LIMIT, 0, 0.5, extra="[budget]\ntask_usd = 0.01")
    (result,) = run_tick(ws.root).results
    assert result.reason == "task budget exceeded: $0.500 of $0.01" and retries(ws) == 1
    ws = saying(tmp_path / "exit1", LIMIT, 1, 0.5, extra="[budget]\ntask_usd = 0.01")
    (result,) = run_tick(ws.root).results
    assert entries(ws)[-1].status == "RATE LIMITED", result.reason
    assert result.reason == f"rate limited: {LIMIT}" and retries(ws) == 0


def test_the_log_cuts_a_long_limit_it_suspects_at_120_characters(tmp_path):
    said = LIMIT + " " + "and then a long tail of words " * 6
    ws = saying(tmp_path, said, 0, 0.0)
    outcome = run_tick(ws.root)
    log = (ws.root / outcome.log).read_text()
    assert (f"[memento] command exited 0, but its last words read as a rate limit ({said[:120]}): "
            "the task's verify decides\n") in log


def test_a_refused_presets_edit_of_the_plan_is_undone_before_the_fallback_runs(tmp_path):
    ws = saying(tmp_path, LIMIT, 1, 0.0, extra='fallback = ["script"]', scribble=True)
    (result,) = run_tick(ws.root).results
    assert (result.task_id, result.passed) == ("T-1", True), result.reason
    assert (ws.root / "T-1.txt").read_text() == "done by script\n"  # the `do:` of the claim, not the agent's
    assert "refused agent" not in git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")


def test_a_usage_ledger_that_cannot_be_written_is_said_in_the_log_and_the_attempt_stands(tmp_path):
    ws = make_ws(tmp_path, "claude-done")
    spending.ledger_path(ws).mkdir(parents=True)  # not a file: the ledger cannot be replaced
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [True], outcome.message
    assert "[memento] could not update .memento/usage.json: " in (ws.root / outcome.log).read_text()
    assert entries(ws)[-1].field("Usage") == "12.3k in / 2.1k out tokens, $0.042"


# ------------------------------------------------------------------ the budget watch


def watching() -> list:
    return [t for t in threading.enumerate() if t.name == "budget-watch"]


def test_an_agent_printing_tokens_over_task_tokens_is_stopped_and_the_watch_ends_with_the_attempt(tmp_path):
    ctx = context(tmp_path, agent_preset="command", agent_output="aider", budget_task_tokens=1)
    agent = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        beat = SimpleNamespace(claim=SimpleNamespace(pgid=agent.pid))  # the heartbeat's claim, as the tick's
        with BudgetWatch(ctx, beat, Capture(), every=0.02) as watch:
            assert len(watching()) == 1
            watch.printed.add(b"Tokens: 2.5k sent, 345 received. Cost: $0.06 message, $0.06 session.\n")
            agent.wait(timeout=20)
        assert watch.stopped == "task budget exceeded: 2.8k of 1 tokens (the agent was stopped)"
        assert watching() == []
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


def test_a_watch_under_its_budget_ends_with_the_attempt_and_stops_listening_to_the_log(tmp_path):
    ctx = context(tmp_path, agent_preset="command", agent_output="aider", budget_task_usd=5.0)
    with BudgetWatch(ctx, SimpleNamespace(claim=None), Capture(), every=0.02) as watch:
        tap = watch.printed
        printed_into_the_log(ctx, "Tokens: 1k sent, 1 received. Cost: $0.01 message, $0.01 session.")
    assert watch.stopped == "" and watching() == []
    printed_into_the_log(ctx, "Tokens: 9k sent, 9 received. Cost: $9.00 message, $9.01 session.")
    assert tap.text() == "Tokens: 1k sent, 1 received. Cost: $0.01 message, $0.01 session."


def printed_into_the_log(ctx: TickContext, line: str) -> None:
    """A command run as the tick runs the agent: its output through the log's pipe."""
    pipe = LogPipe(ctx.log_path)
    proc = subprocess.Popen(["echo", line], stdout=pipe.write_fd, stderr=pipe.write_fd)
    pipe.started()
    proc.wait()
    pipe.finish()


def test_a_preset_that_reads_no_usage_is_not_watched(tmp_path):
    ctx = context(tmp_path, agent_preset="command", agent_output="", budget_task_usd=0.01, budget_task_tokens=1)
    with BudgetWatch(ctx, SimpleNamespace(claim=None), Capture(), every=0.02):
        assert watching() == []


def test_the_output_of_a_preset_this_version_does_not_have_reads_as_nothing(tmp_path):
    # PRESET_NAMES may name a preset before its module exists (agents/presets/__init__.py)
    ctx = context(tmp_path, agent_preset="not-yet", agent_output="")
    assert read_output(ctx, LIMIT + "\n") == (None, None) and tick_log(ctx) == ""
