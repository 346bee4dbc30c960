"""fleet/calls.py: what the tick calls of the fleet. Without a remote each call answers as the
tick would alone and imports none of the fleet's modules (a subprocess shows what it loaded);
with one, each reaches the module that does the work."""

from __future__ import annotations

import json
import subprocess
import sys

from memento_core.fleet import calls
from memento_core.runlog import Outcome
from memento_core.scaffold import init_workspace
from tests.core.test_fleet import PROJECT, context, counted_fetches, git, make_fleet, remote_plan

ALONE = """
import json, sys
from pathlib import Path
from memento_core.config.load import load_config
from memento_core.fleet import calls
from memento_core.runlog import Outcome
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace

ctx = TickContext(Workspace(Path(sys.argv[1])))
ctx.config = load_config(ctx.ws.config_path)
plan, outcome = ctx.plan(), Outcome(0, "ran")
said = {
    "pick": calls.pick(ctx, lambda c: "the tick's own pick", None) == "the tick's own pick",
    "publish": calls.publish(ctx, "result") == "result",
    "finish": calls.finish(ctx, outcome) is outcome,
    "refresh": calls.refresh(ctx, plan) is plan,
    "foreign_claims": calls.foreign_claims(ctx, plan) == frozenset(),
    "none": [calls.sync_for_architect(ctx), calls.push_for_architect(ctx), calls.clean_leftovers(ctx)],
}
print(json.dumps({"said": said, "fleet": sorted(m for m in sys.modules if m.startswith("memento_core.fleet"))}))
"""


def test_without_a_remote_each_call_answers_alone_and_loads_no_fleet_module_but_host(tmp_path, git_identity):
    init_workspace(tmp_path / "proj", project="proj")
    out = subprocess.run([sys.executable, "-c", ALONE, str(tmp_path / "proj")], capture_output=True, text=True,
                         check=True, cwd=PROJECT, env={"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin"}).stdout
    seen = json.loads(out)
    assert seen["said"] == {"pick": True, "publish": True, "finish": True, "refresh": True, "foreign_claims": True,
                            "none": [None, None, None]}
    assert seen["fleet"] == ["memento_core.fleet", "memento_core.fleet.calls", "memento_core.fleet.host"]


def test_with_a_remote_the_calls_reach_the_fleet(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fetches = counted_fetches(monkeypatch)
    plan_path = clones["a"] / "docs" / "MASTER_PLAN.md"
    plan_path.write_text(plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    assert calls.refresh(a, a.plan()).meta.tick_mode == "paused" and fetches == ["a"]  # synced: asked the remote
    assert remote_plan(bare).meta.tick_mode == "paused"  # ... and pushed the pause written here
    notes = clones["a"] / "docs" / "HUMAN_NOTES.md"
    notes.write_text(notes.read_text() + "\nfrom a\n")
    calls.commit_own_docs(a)
    assert git(clones["a"], "log", "-1", "--format=%s").strip() == "memento: sync docs"
    outcome = Outcome(0, "ran")
    assert calls.finish(a, outcome) is outcome
    assert git(bare, "show", "main:docs/HUMAN_NOTES.md").endswith("from a\n")
    b = context(clones["b"], "b", monkeypatch)
    claimed = clones["b"] / "docs" / "MASTER_PLAN.md"
    claimed.write_text(claimed.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
    assert calls.foreign_claims(b, b.plan()) == frozenset({"T-1"})  # b holds no claim or record of it
