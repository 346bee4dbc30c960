"""tick/afterwards.py (SPEC §4 step 16): the circuit breaker and the housekeeping.

A one-task plan whose task blocks trips the breaker (issue 38, item 5): what a person reads.

"1 of 1 blocked, more than 30 %" pauses the pipeline. The headline says BLOCKED
(the task is what to fix first), `memento reset` says the pipeline is still paused
and how to resume, and once the task is reset nothing says it "is" blocked: the
breaker's reason is about when it tripped. Real ticks, the README's first task.
"""

from __future__ import annotations

import json

import pytest

from memento_core.tick import afterwards
from tests.core.scenarios.test_engine import agent, make_ws
from tests.first_project import first_plan, memento, tick, write_plan


@pytest.fixture
def one_task(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    plan = first_plan().replace("tick_mode: paused", "tick_mode: auto").replace("max_retries: 3", "max_retries: 1")
    plan = plan[:plan.index("- [ ] `T-102`")].replace("grep -qx hello greeting.txt", "grep -qx bye greeting.txt")
    write_plan(root, plan)
    return root


def status(root) -> tuple[int, str, dict]:
    human = memento(root, "status")
    return human.returncode, human.stdout, json.loads(memento(root, "status", "--json").stdout)


def test_the_breaker_over_one_blocked_task_is_said_as_it_is(one_task):
    root = one_task
    ticked = tick(root)
    assert ticked.returncode == 1 and "T-101 blocked" in ticked.stdout
    rc, out, doc = status(root)
    assert doc["breaker"]["tripped"] and "tick_mode: paused" in (root / "docs" / "MASTER_PLAN.md").read_text()
    assert rc == 1 and doc["state"] == "BLOCKED" and out.startswith("[warn] greeter: BLOCKED")
    alert = (root / ".memento_alert").read_text()
    assert "state: BLOCKED" in alert and "were blocked" in alert and "are blocked" not in alert

    reset = memento(root, "reset", "T-101")
    assert reset.returncode == 0
    assert reset.stdout.splitlines()[0].startswith("[ok] T-101 is [ ] again")
    assert reset.stdout.splitlines()[1].startswith("[warn] the pipeline is still paused (the circuit breaker "
                                                   "paused it: 1 of 1 tasks were blocked") \
        and "`memento resume` to run it" in reset.stdout

    rc, out, doc = status(root)
    assert doc["counts"]["blocked"] == 0 and doc["state"] == "PAUSED" and out.startswith("[warn] greeter: PAUSED")
    assert "are blocked" not in out and "1 of 1 tasks were blocked" in out
    alert = (root / ".memento_alert").read_text()
    assert "blocked_tasks: 0" in alert and "are blocked" not in alert and "state: PAUSED" in alert

    assert memento(root, "resume").returncode == 0
    rc, out, doc = status(root)
    assert not doc["breaker"]["tripped"] and doc["state"] in ("IDLE", "RUNNING")
    assert not (root / ".memento_alert").exists()


def test_a_skip_also_says_the_pipeline_is_still_paused(one_task):
    root = one_task
    assert tick(root).returncode == 1
    skip = memento(root, "skip", "T-101", "--reason", "not needed after all")
    assert skip.returncode == 0 and "[warn] the pipeline is still paused" in skip.stdout
    memento(root, "pause")  # a plain pause says so too, without a breaker
    memento(root, "resume")
    memento(root, "pause")
    reset = memento(root, "reset", "T-101")
    assert "[warn] the pipeline is still paused: `memento resume` to run it" in reset.stdout


def test_logs_are_pruned_so_history_does_not_grow_without_bound(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    ws.logs_dir.mkdir(exist_ok=True)
    for i in range(afterwards.KEEP_TICK_LOGS + 5):
        (ws.logs_dir / f"tick_2026-01-01T{i:06d}Z.log").write_text("x")
    for i in range(afterwards.KEEP_ROLLBACKS + 3):
        (ws.rollback_dir / f"2026-01-01T{i:06d}Z-T-1").mkdir(parents=True)
    ws.cron_log.write_bytes(b"x" * (afterwards.CRON_LOG_MAX + 1))
    (ws.logs_dir / "status_archive").mkdir()
    (ws.logs_dir / "status_archive" / "TICK_STATUS_a_b.md").write_text("kept forever\n")
    afterwards.prune_logs(ws)
    logs = sorted(p.name for p in ws.logs_dir.glob("tick_*.log"))
    assert len(logs) == afterwards.KEEP_TICK_LOGS and logs[0] == "tick_2026-01-01T000005Z.log"
    assert len(list(ws.rollback_dir.iterdir())) == afterwards.KEEP_ROLLBACKS
    assert not ws.cron_log.exists() and (ws.logs_dir / "cron.log.1").exists()
    assert (ws.logs_dir / "status_archive" / "TICK_STATUS_a_b.md").exists()


# ------------------------------------------------------------------ the loose objects packed


def _hello(tmp_path):
    from memento_core.workspace import Workspace

    return Workspace(make_ws(tmp_path, agent("does_task.py", "hello.txt", "done")).root)


def _loose(root) -> int:
    return len(list((root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*")))


def test_below_the_limit_housekeeping_starts_no_git_to_pack(tmp_path, git_identity, monkeypatch):
    from memento_core.git import objects as git_objects
    from memento_core.tick.__main__ import run_tick
    from tests.core.git_calls import watch_git

    ws = _hello(tmp_path)
    before = _loose(ws.root)
    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", before + 1)  # the snapshot finds `before`: one short
    started = watch_git(monkeypatch, [])
    assert run_tick(ws.root).results[0].passed
    assert "repack" not in started and "config" not in started, started
    assert _loose(ws.root) > before


def test_at_the_limit_housekeeping_packs(tmp_path, git_identity, monkeypatch):
    from memento_core.git import objects as git_objects
    from memento_core.tick.__main__ import run_tick

    ws = _hello(tmp_path)
    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", _loose(ws.root))  # what the snapshot finds: exactly
    assert run_tick(ws.root).results[0].passed
    assert _loose(ws.root) == 0 and list((ws.root / ".git" / "objects" / "pack").glob("*.pack"))


def test_a_pack_git_refuses_is_a_line_in_cron_log_and_the_tick_goes_on(tmp_path, git_identity, monkeypatch):
    from memento_core.git import objects as git_objects
    from memento_core.plan.scan import parse_plan
    from memento_core.tick.__main__ import run_tick

    ws = _hello(tmp_path)
    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", 1)
    pack_dir = ws.root / ".git" / "objects" / "pack"
    pack_dir.rmdir()
    pack_dir.write_text("not a folder\n")  # git cannot write a pack
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0 and outcome.results[0].passed
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    said = ws.cron_log.read_text()
    assert "git could not pack the repository's" in said and "Not a directory" in said, said


@pytest.mark.parametrize(("key", "value"), [("gc.auto", "0"), ("extensions.partialClone", "origin")])
def test_a_person_who_turned_gits_packing_off_is_obeyed_without_a_word(tmp_path, git_identity, monkeypatch,
                                                                       key, value):
    """gc.auto = 0, or a partial clone: not packed, and nothing said in cron.log tick after tick."""
    import subprocess

    from memento_core.git import objects as git_objects
    from memento_core.tick.__main__ import run_tick

    ws = _hello(tmp_path)
    subprocess.run(["git", "-C", str(ws.root), "config", key, value], check=True)
    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", 1)
    assert run_tick(ws.root).results[0].passed
    assert not list((ws.root / ".git" / "objects" / "pack").glob("*.pack")) and _loose(ws.root) > 0
    assert "pack" not in (ws.cron_log.read_text() if ws.cron_log.exists() else "")
