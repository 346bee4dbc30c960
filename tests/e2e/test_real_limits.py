"""Rate limits, fallback, usage and the budget with the real CLIs (SPEC §14, issue 13).

The mock refuses with HTTP 429 or the provider's usage-limit message; the tick
must set the attempt aside as RATE LIMITED (retries 0, no breaker count, the
work rolled back), try ``[agent] fallback`` in the same tick, and read each
CLI's own usage report. Judged on disk: the status entries, the plan,
state.json, usage.json and git.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from memento_core import spending, status_log
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.limits import clock, parse_stamp
from memento_core.workspace import Workspace

from .conftest import AIDER_PRICE_IN, AIDER_PRICE_OUT, configure, make_workspace, script_edit
from .mock_model import USAGE_IN, USAGE_OUT

pytestmark = pytest.mark.e2e

GOOD = "hello from the mock\n"


def git(root, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def tick_log(root, outcome) -> str:
    """The outcome and the end of the tick's log, for a failure's message."""
    log = (root / outcome.log).read_text(encoding="utf-8") if outcome.log else ""
    return outcome.message + "\n" + log[-4000:]


def last_entry(root) -> status_log.TickEntry:
    return status_log.parse_status(Workspace(root).status_path)[-1]


def no_codex_retries(run) -> None:
    """codex retries a 429 itself (honouring Retry-After); the test wants its final answer now."""
    config = run.home / ".codex" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8")
                      + "request_max_retries = 0\nstream_max_retries = 0\n", encoding="utf-8")


def next_clock(hour: int, minute: int) -> datetime:
    now = datetime.now(UTC)
    at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return at if at > now else at + timedelta(days=1)


def assert_set_aside(root, preset: str, head: str) -> datetime:
    """RATE LIMITED entry, retries 0, no breaker count, nothing kept; returns the wait's end."""
    entry = last_entry(root)
    assert entry.status == "RATE LIMITED" and entry.task_id == "T-101", entry.field("Status")
    assert entry.field("Status").startswith("⏳ RATE LIMITED — until ")
    assert entry.field("Status").endswith(f"(preset {preset})")
    task = parse_plan(root / "docs" / "MASTER_PLAN.md").task("T-101")
    assert task.retries == 0 and task.status == " "
    state = TickState.load(Workspace(root))
    assert state.consecutive_failed_ticks == 0 and state.rate_limited_preset == preset
    assert not (root / "hello.txt").exists()
    assert "memento: complete" not in git(root, "log", "--format=%s", f"{head}..HEAD")
    return parse_stamp(state.rate_limited_until)


# How long each refusal is waited out: the reset the CLI printed, else the 5-minute backoff.
WAITS = {
    ("claude", "429"): timedelta(hours=1),  # "… Please retry after 3600 seconds."
    ("claude", "usage_limit"): None,  # "Your limit will reset at 11:30pm (UTC)."
    ("codex", "429"): timedelta(minutes=5),  # "exceeded retry limit, last status: 429 …"
    ("codex", "usage_limit"): timedelta(hours=2),  # "… or try again at 12:32 PM." (resets_at)
    ("gemini", "429"): timedelta(hours=2),  # TerminalQuotaError "… Please retry in 7200s."
    ("gemini", "usage_limit"): timedelta(minutes=5),  # "You have exhausted your daily quota"
}


@pytest.mark.parametrize("preset", ["claude", "codex", "gemini"])
@pytest.mark.parametrize("mode", ["429", "usage_limit"])
def test_a_refusal_is_rate_limited_not_a_failure(run, monkeypatch, preset, mode):
    agent = configure(run, preset, monkeypatch)
    if preset == "codex":
        no_codex_retries(run)
    root = make_workspace(run, preset, agent)
    script_edit(run, GOOD)
    run.mock.script.mode = mode
    head = git(root, "rev-parse", "HEAD").strip()
    started = datetime.now(UTC)

    outcome = run_tick(root)

    assert [r.passed for r in outcome.results] == [False], outcome.message
    until = assert_set_aside(root, preset, head)
    wait = WAITS[preset, mode]
    if wait is None:
        assert until == next_clock(23, 30)
    else:  # minutes: the CLIs print clock times to the minute
        assert started + wait - timedelta(minutes=2) <= until <= datetime.now(UTC) + wait, until
    assert clock(until) in last_entry(root).field("Status")
    # the next tick skips without starting the CLI
    served = len(run.mock.model_requests())
    again = run_tick(root)
    assert again.results == [] and again.message.startswith("tick skipped: rate limited until")
    assert len(run.mock.model_requests()) == served


def test_the_fallback_preset_runs_in_the_same_tick(run, monkeypatch):
    configure(run, "claude", monkeypatch)
    configure(run, "codex", monkeypatch)
    root = make_workspace(run, "claude", {})
    toml = root / "memento.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'preset = "claude"', 'preset = "claude"\nfallback = ["codex"]'), encoding="utf-8")
    git(root, "commit", "-qam", "fallback codex")
    script_edit(run, GOOD)
    run.mock.script.mode = "429"
    run.mock.script.only = ("anthropic",)  # claude is refused, codex gets through

    outcome = run_tick(root)

    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], \
        tick_log(root, outcome)
    assert (root / "hello.txt").read_text(encoding="utf-8") == GOOD
    assert git(root, "log", "-1", "--format=%s").startswith("memento: complete T-101")
    kinds = [r.path for r in run.mock.model_requests()]
    assert any("/messages" in k for k in kinds) and any("/responses" in k for k in kinds)
    entry = last_entry(root)
    assert "claude" in entry.field("Fallback") and "codex" in entry.field("Fallback")
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("T-101").retries == 0


@pytest.mark.parametrize("preset", ["claude", "codex", "gemini", "aider"])
def test_usage_is_recorded_from_the_clis_own_report(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    script_edit(run, GOOD)

    outcome = run_tick(root)

    assert [r.passed for r in outcome.results] == [True], tick_log(root, outcome)
    entry_usage = last_entry(root).field("Usage")
    assert entry_usage and "in /" in entry_usage, entry_usage
    today = spending.usage_summary(Workspace(root))["today"]  # the ledger keeps exact counts
    tokens_in, tokens_out = today["tokens_in"], today["tokens_out"]
    if preset == "aider":  # aider prints "Tokens: 1.2k sent, 56 received."
        assert (tokens_in, tokens_out) == (1200, USAGE_OUT)
    else:  # every answer of the conversation counted, as the CLI reported it
        assert tokens_in >= 2 * USAGE_IN and tokens_in % USAGE_IN == 0, today
        assert tokens_out >= 2 * USAGE_OUT and tokens_out % USAGE_OUT == 0, today
    if preset == "aider":  # "Cost: $0.0030 message": the mock's tokens at the cached price
        assert today["cost_usd"] == pytest.approx(
            round(USAGE_IN * AIDER_PRICE_IN + USAGE_OUT * AIDER_PRICE_OUT, 4))
    elif preset == "claude":  # claude prices the tokens itself (total_cost_usd)
        assert today["cost_usd"] > 0
    assert spending.Usage(tokens_in, tokens_out, today["cost_usd"] or None).describe() \
        .split(",")[0] in entry_usage
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    doc = json.loads(subprocess.run([sys.executable, "-m", "memento_core.cli", "status", "--json",
                                     str(root)], capture_output=True, text=True, env=env,
                                    check=True).stdout)
    assert doc["usage"]["today"]["tokens_in"] == tokens_in


def test_a_daily_budget_stops_ticking_on_the_mocks_usage(run, monkeypatch):
    configure(run, "claude", monkeypatch)
    root = make_workspace(run, "claude", {}, tasks=2)
    toml = root / "memento.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[budget]\ndaily_usd = 0.005\n",
                    encoding="utf-8")
    git(root, "commit", "-qam", "a budget")
    script_edit(run, GOOD)

    first = run_tick(root)
    assert [(r.task_id, r.passed) for r in first.results] == [("T-101", True)], first.message
    cost = last_entry(root).usage.cost_usd
    assert cost and cost > 0.005  # claude's own price for the mock's token counts
    served = len(run.mock.model_requests())
    for _ in range(2):
        skipped = run_tick(root)
        assert skipped.results == [] and "budget reached" in skipped.message
    assert len(run.mock.model_requests()) == served  # T-102 never started
    entries = status_log.parse_status(Workspace(root).status_path)
    assert [e.status for e in entries].count("BUDGET REACHED") == 1
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("T-102").status == " "


def test_gemini_runs_on_a_fresh_install_without_a_trust_setting(run, monkeypatch):
    agent = configure(run, "gemini", monkeypatch)
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE")  # the preset trusts the project itself
    root = make_workspace(run, "gemini", agent)
    script_edit(run, GOOD)
    outcome = run_tick(root)
    assert [r.passed for r in outcome.results] == [True], tick_log(root, outcome)
    assert (root / "hello.txt").read_text(encoding="utf-8") == GOOD


# ------------------------------------------------------------------ preset fixes (issue 13)


def test_openclaw_takes_the_model_from_memento_toml(run, monkeypatch):
    configure(run, "openclaw", monkeypatch)
    config_path = run.home / ".openclaw" / "openclaw.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    del config["agents"]  # no default model in openclaw's own config: --model must carry it
    config_path.write_text(json.dumps(config), encoding="utf-8")
    root = make_workspace(run, "openclaw", {"model": "mock/mock-model"})
    script_edit(run, GOOD)

    outcome = run_tick(root)

    assert [r.passed for r in outcome.results] == [True], tick_log(root, outcome)
    assert (root / "hello.txt").read_text(encoding="utf-8") == GOOD
    log = (root / outcome.log).read_text(encoding="utf-8")
    assert "--model mock/mock-model" in log
    assert {r.body.get("model") for r in run.mock.model_requests()} == {"mock-model"}


def test_aider_gets_mementos_documents_read_only(run, monkeypatch):
    agent = configure(run, "aider", monkeypatch)
    root = make_workspace(run, "aider", agent)
    script_edit(run, GOOD)

    outcome = run_tick(root)

    assert [r.passed for r in outcome.results] == [True], tick_log(root, outcome)
    log = (root / outcome.log).read_text(encoding="utf-8")
    assert "Add file to the chat?" not in log
    for doc in ("docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md", "docs/CURRENT_STATE.md"):
        assert f"--read {root / doc}" in log or f"--read {doc}" in log, doc


VERSIONS = {"claude": "2.1.332", "codex": "0.171.0", "gemini": "0.61.0",
            "openclaw": "2026.9.6", "aider": "0.86.2"}


def test_memento_agents_reads_each_real_clis_version_and_node(run, monkeypatch):
    for preset in VERSIONS:
        configure(run, preset, monkeypatch)
    root = make_workspace(run, "aider", {"model": "openai/mock-model"})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", "--json",
                           "--timeout", "60", str(root)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    found = {p["preset"]: p for p in json.loads(done.stdout)["presets"]}
    for preset, version in VERSIONS.items():
        probe = found[preset]
        assert probe["runnable"] and version in (probe["version"] or ""), probe
        assert "WARNING" not in (probe["version"] or ""), probe  # codex's stderr is not a version
        if preset in ("codex", "gemini", "openclaw"):  # `#!/usr/bin/env node` scripts
            assert probe["runtime_ok"] and "node v24." in probe["runtime"], probe
        else:  # aider is Python; claude-code 2.1.332's bin/claude.exe is a native binary
            assert probe["runtime"] == "", probe
