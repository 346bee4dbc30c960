"""The header and the "Needs you" strip tell the truth: what will tick, what is refused, what a person must do.

Real workspaces (the scripted demo), real ticks where a state needs one, the
clock injected; nothing here calls a widget's method to make it show something.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest
from textual.widgets import Button

from memento_core import cron
from memento_core.demo import create_demo
from memento_core.locks import atomic_write_text
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from tests.tui.pilot import answer, messages, screen_text, select_task, settle

LONG = "5 consecutive ticks attempted work and passed nothing " + "because the agent kept failing " * 6


def lines(app) -> list[str]:
    return screen_text(app).splitlines()


def fake_proc(tmp_path, daemon: bool):
    proc = tmp_path / "proc"
    (proc / "1").mkdir(parents=True, exist_ok=True)
    (proc / "1" / "comm").write_text("cron\n" if daemon else "bash\n")
    return proc


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_header_stays_one_line_with_a_long_breaker_and_the_alert(scripted, size):
    ws = Workspace(scripted)
    TickState(breaker_reason=LONG, breaker_at="2026-11-29T14:05:00Z").save(ws)
    atomic_write_text(ws.alert_path, "circuit_breaker: TRIGGERED\n")
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        header = app.screen.query_one("#header")
        assert header.size.height == 1 and header.region.y == 0
        first, second = lines(app)[:2]
        assert "⚠ breaker: 5 consecutive ticks" in first and first.rstrip().endswith("…")
        assert second.startswith("█ Needs you") and "circuit breaker tripped" in second


async def test_nothing_will_tick_is_said_plainly_and_auto_tick_makes_it_running(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        first = lines(app)[0]
        assert "● IDLE nothing will tick (no cron entry, auto-tick off)" in first
        assert "RUNNING" not in first and "next tick" not in first
        await pilot.press("o")
        await settle(app, pilot)
        first = lines(app)[0]
        assert "● RUNNING" in first and "next tick: in —" in first


async def test_a_refused_dirty_tree_is_refused_not_running_and_needs_you_names_the_paths(scripted):
    atomic_write_text(scripted / "calc" / "ops.py", "# a person's work in progress\n")
    assert run_tick(scripted).exit_code == 1  # the real tick refuses the dirty tree
    app = MementoApp(scripted, auto_tick=True, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = lines(app)
        assert "● REFUSED uncommitted changes: calc/ops.py" in text[0] and "RUNNING" not in text[0]
        assert "next: T-" not in "\n".join(text)  # nor does Progress offer the next task
        assert "no task runs: the tick refuses uncommitted changes in calc/ops.py" in "\n".join(text)
        needs = "\n".join(text[1:5])
        assert "tick refused: uncommitted changes in calc/ops.py" in needs and "commit or stash" in needs


async def test_needs_you_lists_blocked_tasks_with_their_reason_and_hides_when_nothing_is_needed(scripted, tmp_path):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        needs = app.screen.query_one("#needs")
        assert not needs.has_class("-empty") and needs.region.height >= 2
        assert "T-201 blocked after 3 retries: `AssertionError: mul`" in screen_text(app)
    fresh = MementoApp(create_demo(tmp_path / "fresh"), auto_tick=True, show_clock=False, watch=False)
    async with fresh.run_test(size=(120, 40)) as pilot:
        await settle(fresh, pilot)
        needs = fresh.screen.query_one("#needs")
        assert needs.has_class("-empty") and needs.region.height == 0
        assert "Needs you" not in screen_text(fresh)


async def test_unconfined_cost_and_rate_limit_reach_the_header_and_needs_you(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        snap = app.snapshot
        summary = {**snap.summary,
                   "sandbox": {"mode": "none", "confined": False, "reason": "bwrap is not installed"},
                   "usage": {"today": {"tokens_in": 1200, "tokens_out": 300, "cost_usd": 0.42},
                             "total": {"tokens_in": 1200, "tokens_out": 300, "cost_usd": 0.42}},
                   "rate_limit": {"until": "2026-11-29T15:00:00Z", "preset": "claude"}}
        app.snapshot = replace(snap, summary=summary, parts_read=frozenset())
        await pilot.pause()
        text = screen_text(app)
        first = text.splitlines()[0]
        assert "⚠ unconfined" in first and "rate limited until 2026-11-29T15:00:00Z" in first
        assert "$0.42 today" in first
        assert "the agent runs unconfined: bwrap is not installed" in text


async def test_a_cron_entry_without_a_cron_daemon_never_counts_down(scripted, tmp_path, monkeypatch):
    tab = tmp_path / "crontab"
    tab.write_text("")
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    cron.install(scripted, "5min")
    monkeypatch.setenv(cron.PROC_ENV, str(fake_proc(tmp_path, daemon=False)))
    app = MementoApp(scripted, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        first = lines(app)[0]
        assert "● IDLE nothing will tick (a cron entry, but no cron daemon is running" in first
        assert "(cron)" not in first
        # No daemon: the dashboard may tick by itself.
        assert not app.screen.query_one("#btn-auto", Button).disabled
    monkeypatch.setenv(cron.PROC_ENV, str(fake_proc(tmp_path, daemon=True)))
    app = MementoApp(scripted, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        first = lines(app)[0]
        assert "● RUNNING" in first and "(cron)" in first


async def test_demo_auto_tick_follows_the_interval_a_person_sets(demo):
    now = [1000.0]
    app = MementoApp(demo, auto_tick=True, auto_interval=3, clock=lambda: now[0], watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert "Every 3s" in screen_text(app)  # what the countdown uses, not memento.toml's 1min
        await pilot.press("i")
        await answer(app, pilot, "20s")
        await settle(app, pilot)
        assert app.next_tick_at == 1020.0
        app.every_second()
        await pilot.pause()
        text = screen_text(app)
        assert "Every 20s" in text and "next tick: in 20s" in text
        now[0] = 1010.0
        app.every_second()
        assert not app.ticking  # 3 s are long past: the countdown is the person's 20 s


async def test_auto_tick_stops_while_paused_or_blocked(scripted, tmp_path):
    now = [1000.0]
    app = MementoApp(scripted, auto_tick=True, auto_interval=5, clock=lambda: now[0], watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.next_tick_at == 1005.0
        await pilot.press("p")
        await settle(app, pilot)
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").meta.tick_mode == "paused"
        assert app.next_tick_at is None and "next tick" not in lines(app)[0]
        now[0] = 2000.0
        app.every_second()
        assert not app.ticking
        await pilot.press("space")
        await settle(app, pilot)
        assert app.next_tick_at == 2005.0  # running again: the countdown restarts


async def test_an_interval_cron_cannot_keep_says_what_cron_will_do(scripted, tmp_path, monkeypatch):
    tab = tmp_path / "crontab"
    tab.write_text("")
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    cron.install(scripted, "5min")
    subprocess.run(["git", "commit", "-qam", "cron"], cwd=scripted, capture_output=True)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await answer(app, pilot, "7min")
        await settle(app, pilot)
        said = " ".join(messages(app))
        assert "every 7m00s becomes every 6m00s (*/6 * * * *)" in said
        assert cron.installed_schedule(scripted) == "*/6 * * * *"
        assert 'every = "6min"' in (scripted / "memento.toml").read_text()
        assert "Every 6min" in screen_text(app)


async def test_reset_and_skip_in_the_dashboard_start_the_failure_streak_afresh(scripted):
    ws = Workspace(scripted)
    TickState(consecutive_failed_ticks=3).save(ws)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-201")
        await pilot.press("r")
        await settle(app, pilot)
        assert parse_plan(ws.plan_path).task("T-201").status == " "
        assert TickState.load(ws).consecutive_failed_ticks == 0
        TickState(consecutive_failed_ticks=2).save(ws)
        select_task(app, "T-202")
        await pilot.press("s")
        await answer(app, pilot, "not needed")
        await settle(app, pilot)
        assert parse_plan(ws.plan_path).task("T-202").status == "-"
        assert TickState.load(ws).consecutive_failed_ticks == 0


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_task_error_that_leaves_nothing_to_run_is_invalid_on_screen(demo, size):
    """Issue 38 item 1: `verfy:` for the one task that can run next is INVALID in the header
    and the first line of "Needs you", never IDLE with a silent strip."""
    plan = demo / "docs" / "MASTER_PLAN.md"
    text = plan.read_text()
    second = text.index("  - verify: ", text.index("`T-102`"))  # T-102 could run without T-101
    atomic_write_text(plan, text[:second] + "  - verfy: " + text[second + len("  - verify: "):])
    app = MementoApp(demo, show_clock=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        shown = lines(app)  # T-101 can still run: the pipeline's word, but the error comes first
        assert "● INVALID" not in shown[0]
        assert shown[1].startswith("█ Needs you") and "T-102 has no verify command" in shown[1]
        # T-101 too: nothing can run, and the header says so.
        atomic_write_text(plan, plan.read_text().replace("  - verify: ", "  - verfy: ", 1))
        app.request_refresh({"plan"})
        await settle(app, pilot)
        shown = lines(app)
        assert "● INVALID" in shown[0] and "IDLE" not in shown[0]
        assert shown[1].startswith("█ Needs you") and "T-101 has no verify command" in shown[1]


async def test_the_header_says_the_word_memento_status_says(scripted, tmp_path, monkeypatch):
    """Issue 38 item 2: one word from one function; the header and `memento status --json`
    agree on a blocked plan, a refused tree, a broken memento.toml, a pause and an idle plan."""
    from memento_core.cli.commands.status import status_document
    from memento_core.control import set_mode

    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tmp_path / "crontab"))
    monkeypatch.setenv(cron.PROC_ENV, str(fake_proc(tmp_path, daemon=False)))
    ws = Workspace(scripted)

    async def header_word() -> str:
        app = MementoApp(scripted, show_clock=False, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            return lines(app)[0].split("● ", 1)[1].split()[0]

    assert status_document(ws)["state"] == await header_word() == "IDLE"  # T-202 can run; nothing ticks
    atomic_write_text(scripted / "calc" / "ops.py", "# a person's work in progress\n")
    assert run_tick(scripted).exit_code == 1
    assert status_document(ws)["state"] == await header_word() == "REFUSED"
    subprocess.run(["git", "checkout", "calc/ops.py"], cwd=scripted, check=True)
    good = ws.config_path.read_text()
    ws.config_path.write_text("[agent\n")
    assert status_document(ws)["state"] == await header_word() == "INVALID"
    ws.config_path.write_text(good)
    set_mode(ws, "paused")
    assert status_document(ws)["state"] == await header_word() == "PAUSED"
