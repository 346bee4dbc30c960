"""tick/crew.py: what a parallel phase's workers share (SPEC §12). The main branch the crew
follows (a person's commit on top taken, an agent's move never), a main branch an agent pointed at
its branch's commit put back just before Memento commits, and the tick's state the workers share,
whose rate-limit fields change only under the crew's lock.

The last: a real parallel tick in this process, two workers whose agent (tests/agents/reports_like_a_cli.py
through the `command` preset, read as claude's output) is rate limited. The tick's state is
watched: every change of preset_limits, rate_limit_streak and rate_limited_until made by a
worker's thread must be made while that thread holds the crew's lock.
"""

from __future__ import annotations

import threading

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick import context as tick_context
from memento_core.tick.__main__ import run_tick
from memento_core.tick.context import TickContext
from memento_core.tick.crew import Crew, Worker
from tests.core.scenarios.test_engine import AGENTS, PY
from tests.core.tick import ticks
from tests.core.tick.test_workers import git, make_parallel_ws

WATCHED = ("preset_limits", "rate_limit_streak", "rate_limited_until", "rate_limited_preset")


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


class _Seen(list):
    def note(self, lock, what: str) -> None:
        if lock is not None and threading.current_thread() is not threading.main_thread():
            self.append((what, lock._is_owned()))


class _WatchedLimits(dict):
    def __init__(self, data=(), lock=None, seen=None):  # dataclasses.asdict rebuilds it from items
        super().__init__(data)
        self.lock, self.seen = lock, seen if seen is not None else _Seen()

    def __setitem__(self, key, value):
        self.seen.note(self.lock, f"preset_limits[{key}]")
        super().__setitem__(key, value)

    def pop(self, *args):
        self.seen.note(self.lock, "preset_limits.pop")
        return super().pop(*args)


class _WatchedState(TickState):
    def __setattr__(self, name, value):
        seen = self.__dict__.get("_seen")
        if seen is not None and name in WATCHED:
            seen.note(self.__dict__["_lock"], name)
        super().__setattr__(name, value)


def test_workers_change_the_ticks_rate_limit_state_only_under_the_crews_lock(tmp_path, monkeypatch):
    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    toml = (ws.root / "memento.toml").read_text()
    old = toml.split('command = """')[1].split('"""')[0]
    (ws.root / "memento.toml").write_text(
        toml.replace(old, f"{PY} {AGENTS / 'reports_like_a_cli.py'} claude-limit")
        .replace('preset = "command"', 'preset = "command"\noutput = "claude"'))
    git(ws.root, "commit", "-qam", "a rate-limited agent")
    seen = _Seen()
    post_init = tick_context.TickContext.__post_init__

    def watched(self):
        post_init(self)
        self.state.__class__ = _WatchedState
        self.state.__dict__.update(_seen=seen, _lock=self.state_lock)
        self.state.__dict__["preset_limits"] = _WatchedLimits(self.state.preset_limits, self.state_lock, seen)

    monkeypatch.setattr(tick_context.TickContext, "__post_init__", watched)
    outcome = run_tick(ws.root)
    assert outcome.exit_code in (0, 1), outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == [" ", " "]  # rate limited: set aside
    assert "RATE LIMITED" in ws.status_path.read_text()
    assert seen, "no worker thread changed the rate-limit state"
    assert {what for what, _ in seen} >= {"rate_limit_streak", "rate_limited_until"}
    assert [what for what, held in seen if not held] == []


# --------------------------------------------------------------------------- the main branch followed


def _crew(tmp_path) -> Crew:
    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    ctx = ticks.tick_context(ws, None)
    return Crew(ctx)


def _commit_on(root, ref: str, parent: str, subject: str) -> str:
    sha = git(root, "commit-tree", f"{parent}^{{tree}}", "-p", parent, "-m", subject).strip()
    git(root, "update-ref", ref, sha)
    return sha


def test_the_crew_takes_a_persons_commit_on_main_and_never_an_agents_move(tmp_path):
    crew = _crew(tmp_path)
    root, start = crew.ctx.root, crew.main_head
    agents = _commit_on(root, "refs/heads/memento/T-1", start, "an agent's commit")
    git(root, "update-ref", "refs/heads/main", agents)  # main pointed at a worker's branch
    crew.follow_main()
    assert crew.main_head == start
    git(root, "update-ref", "refs/heads/main", start)
    persons = _commit_on(root, "refs/heads/main", start, "a person's commit")
    crew.follow_main()
    assert crew.main_head == persons
    git(root, "update-ref", "refs/heads/main", start)  # backwards: foreign to the crew
    crew.follow_main()
    assert crew.main_head == persons


def test_just_before_a_commit_main_is_put_back_and_the_worker_whose_branch_it_pointed_at_answers(tmp_path):
    crew = _crew(tmp_path)
    root, start = crew.ctx.root, crew.main_head
    plan = crew.ctx.plan()
    workers = [Worker(plan.task(t), plan, None, crew.ctx, crew.ctx, f"refs/heads/memento/{t}") for t in ("T-1", "T-2")]
    crew.running += workers
    _commit_on(root, "refs/heads/memento/T-2", start, "the honest worker's")
    hostile = _commit_on(root, "refs/heads/memento/T-1", start, "agent: on main")
    git(root, "update-ref", "refs/heads/main", hostile)
    docs = TickContext(crew.ws)
    crew.commit_onto(docs)
    assert git(root, "rev-parse", "refs/heads/main").strip() == start == docs.commit_onto
    assert [w.foreign for w in workers] == [
        [f"moved the main branch (refs/heads/main) to {hostile[:7]}, a commit of its branch (put back)"], []]
    persons = _commit_on(root, "refs/heads/main", start, "a person's commit")
    crew.commit_onto(docs)  # a person's commit stays, and is what Memento commits on
    assert git(root, "rev-parse", "refs/heads/main").strip() == persons == docs.commit_onto
    git(root, "update-ref", "refs/heads/main", start)  # backwards: put back, nobody named
    crew.commit_onto(docs)
    assert git(root, "rev-parse", "refs/heads/main").strip() == persons == docs.commit_onto
    assert f"someone moved the main branch (refs/heads/main) to {start[:7]} (put back)" in crew.ws.cron_log.read_text()
    git(root, "update-ref", "-d", "refs/heads/main")  # deleted: made again
    crew.commit_onto(docs)
    assert git(root, "rev-parse", "refs/heads/main").strip() == persons == docs.commit_onto
    assert "someone deleted the main branch (refs/heads/main) (put back)" in crew.ws.cron_log.read_text()
    both = _commit_on(root, "refs/heads/memento/T-1", persons, "held by two branches")
    git(root, "update-ref", "refs/heads/memento/T-2", both)
    git(root, "update-ref", "refs/heads/main", both)
    crew.commit_onto(docs)  # put back, but nobody can be named
    assert git(root, "rev-parse", "refs/heads/main").strip() == persons
    assert [len(w.foreign) for w in workers] == [1, 0]
    assert f"an agent moved the main branch (refs/heads/main) to {both[:7]}" in crew.ws.cron_log.read_text()


def test_a_main_branch_moved_elsewhere_is_put_back_and_blamed_on_the_one_agent_that_ran_then(tmp_path):
    """A move to no worker's commit: the worker whose own agent alone ran when the ref changed
    answers for it; none or several ran then: nobody does, the cron log says it."""
    import copy
    import time

    crew = _crew(tmp_path)
    root, start = crew.ctx.root, crew.main_head
    plan = crew.ctx.plan()
    workers = []
    for t in ("T-1", "T-2"):
        ctx = copy.copy(crew.ctx)
        ctx.own_runs = []
        workers.append(Worker(plan.task(t), plan, None, ctx, ctx, f"refs/heads/memento/{t}"))
    crew.running += workers
    one, two = workers
    assert crew.watch is not None  # unconfined: the ctime is the only witness

    def move() -> str:
        sha = git(root, "commit-tree", f"{start}^{{tree}}", "-m", f"elsewhere {time.time()}").strip()
        git(root, "update-ref", "refs/heads/main", sha)
        return sha

    sha = move()  # no agent ran then
    crew.reclaim_main()
    assert git(root, "rev-parse", "refs/heads/main").strip() == start and one.foreign == two.foreign == []
    said = f"moved the main branch (refs/heads/main) to {sha[:7]} (put back)"
    assert f"someone {said} (no one worker's agent ran alone then)" in crew.ws.cron_log.read_text()
    one.ctx.own_runs.append(["agent", time.time() - 1, None])
    two.ctx.own_runs.append(["verify", time.time() - 1, None])  # its verify, not its agent
    sha = move()
    crew.reclaim_main()
    assert one.foreign == [f"moved the main branch (refs/heads/main) to {sha[:7]} (put back)"] and two.foreign == []
    two.ctx.own_runs.append(["agent", time.time() - 1, None])  # two agents ran: nobody can be named
    sha = move()
    crew.reclaim_main()
    assert len(one.foreign) == 1 and two.foreign == []
    assert f"someone moved the main branch (refs/heads/main) to {sha[:7]} (put back)" in crew.ws.cron_log.read_text()
    assert git(root, "rev-parse", "refs/heads/main").strip() == start


def test_a_main_branch_git_refuses_to_put_back_is_said_so_and_blamed_on_no_holder(tmp_path):
    """update-ref refused (a lock git left): "could not be put back", never "(put back)"; pointed at
    a worker's commit, that worker is not blamed for what stays."""
    crew = _crew(tmp_path)
    root, start = crew.ctx.root, crew.main_head
    plan = crew.ctx.plan()
    worker = Worker(plan.task("T-1"), plan, None, crew.ctx, crew.ctx, "refs/heads/memento/T-1")
    crew.running.append(worker)
    agents = _commit_on(root, "refs/heads/memento/T-1", start, "an agent's commit")
    git(root, "update-ref", "refs/heads/main", agents)
    lock = root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    try:
        crew.reclaim_main()
        assert git(root, "rev-parse", "refs/heads/main").strip() == agents and worker.foreign == []
        assert (f"someone moved the main branch (refs/heads/main) to {agents[:7]} (could not be put back)"
                in crew.ws.cron_log.read_text())
    finally:
        lock.unlink()
    crew.reclaim_main()
    assert git(root, "rev-parse", "refs/heads/main").strip() == start
    assert worker.foreign == [f"moved the main branch (refs/heads/main) to {agents[:7]}, a commit of its branch (put back)"]
