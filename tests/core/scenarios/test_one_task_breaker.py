"""A one-task plan whose task blocks trips the breaker (issue 38, item 5): what a person reads.

"1 of 1 blocked, more than 30 %" pauses the pipeline. The headline says BLOCKED
(the task is what to fix first), `memento reset` says the pipeline is still paused
and how to resume, and once the task is reset nothing says it "is" blocked: the
breaker's reason is about when it tripped. Real ticks, the README's first task.
"""

from __future__ import annotations

import json

import pytest

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
