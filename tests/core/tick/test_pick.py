"""tick/pick.py (step 6): the pick passing over what must wait. A task whose context_files overlap
a running task's waits and a disjoint one is picked; a task whose verify the architect changed waits
for a person's ack, and when only it could run the verdict is HELD, naming it and the command. Real
files; the held list written as the architect's run writes it (verify_changes.record)."""

from __future__ import annotations

import pytest

from memento_core.control import acknowledge_verify
from memento_core.scheduler import TASK
from memento_core.tick.pick import HELD, MESSAGE, pick_unheld
from memento_core.verify_changes import ACK_COMMAND, VerifyChange, record
from tests.core.scenarios.test_engine import make_ws
from tests.core.tick.ticks import tick_context

TASKS = "\n".join(f"- [ ] `T-{n}` Task {n}\n  - verify: `true`\n  - context_files: [{files}]\n"
                  for n, files in ((1, "a.txt"), (2, "a.txt, b.txt"), (3, "c.txt")))


@pytest.fixture
def ctx(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true", TASKS)
    c = tick_context(ws)
    return c


def test_a_task_overlapping_a_running_ones_files_waits_and_a_disjoint_one_is_picked(ctx):
    plan = ctx.plan()
    assert pick_unheld(ctx, plan).task.id == "T-1"
    verdict = pick_unheld(ctx, plan, beside=[plan.task("T-1")])
    assert verdict.kind == TASK and verdict.task.id == "T-3"  # T-2 shares a.txt with T-1


def test_a_held_task_waits_for_the_persons_ack_and_alone_is_the_held_verdict(ctx):
    record(ctx.ws, [VerifyChange("T-1", "false", "true", "2026-12-06T10:00:00Z")])
    plan = ctx.plan()
    assert pick_unheld(ctx, plan).task.id == "T-2"
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("- [ ] `T-2`", "- [x] `T-2`")
                                .replace("- [ ] `T-3`", "- [x] `T-3`"))
    verdict = pick_unheld(ctx, ctx.plan())
    assert verdict.kind == HELD and verdict.tasks == ("T-1",)
    assert verdict.message.startswith(MESSAGE) and ACK_COMMAND in verdict.message
    acknowledge_verify(ctx.ws, ["T-1"])
    assert pick_unheld(ctx, ctx.plan()).task.id == "T-1"
