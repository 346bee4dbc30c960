"""A task whose verify the architect changed waits for a person on every host of a fleet (SPEC §12
"Across machines", §13 "Either way"): the change travels in the architect's commit, a person's
acknowledgement in a commit of its own, both through the remote. Real hosts: clones of one bare
remote, ticks as subprocesses (tests/core/test_fleet.py); judged on the remote, in each host's
`.memento/verify_changes.json` and logs/cron.log."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from memento_core import verify_changes
from memento_core.tick.architect.run import CHANGED, run_architect
from memento_core.workspace import Workspace

from .test_fleet import (
    AGENTS,
    PY,
    env_for,
    git,
    make_fleet,
    remote_plan,
    start_tick,
    subjects,
    tick_all,
)

WEAKER = "test -s out/1.txt"


@pytest.fixture(autouse=True)
def _identity(git_identity):  # the fleet's helpers commit in the clones
    return git_identity


def architect_weakens_t1(a: Path, monkeypatch, verify: str = WEAKER) -> None:
    """Host a's architect sets T-1's verify to ``verify``; its commit reaches the remote."""
    fix = shlex.join([PY, str(AGENTS / "architect.py"), "fix", "T-1", verify])
    text = (a / "memento.toml").read_text().split("[architect]")[0]
    (a / "memento.toml").write_text(text + f'[architect]\ncommand = """{fix}"""\n')
    git(a, "commit", "-qam", "the architect's agent")
    monkeypatch.setenv("MEMENTO_HOST", "a")
    result = run_architect(Workspace(a))
    assert result.outcome == CHANGED, result.message
    assert remote_plan(a / ".." / "remote.git").task("T-1").verify == verify


def tick(root: Path, host: str) -> tuple[int, str]:
    proc = start_tick(root, host)
    out, _ = proc.communicate(timeout=300)
    return proc.returncode, out.decode()


def listed(root: Path) -> list[str]:
    return [c.task for c in verify_changes.pending(Workspace(root))]


def ack(root: Path, host: str, task: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "memento_core.cli", "architect", "--ack", task, str(root)],
                          env=env_for(host), capture_output=True, text=True, timeout=120)


def test_a_verify_changed_on_one_host_holds_the_task_on_every_host_until_a_person_acks_it(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a, b = clones["a"], clones["b"]
    architect_weakens_t1(a, monkeypatch)
    # b never saw the change made: it runs the other tasks, not T-1.
    tick_all({"b": b})
    tick_all({"b": b})
    plan = remote_plan(bare)
    assert [(t.id, t.status) for t in plan.tasks] == [("T-1", " "), ("T-2", "x"), ("T-3", "x")]
    assert listed(b) == ["T-1"]  # b's "needs you" says it too
    assert "T-1 not picked: the architect changed its verify (T-1: `grep -q T-1 out/1.txt` → " \
           f"`{WEAKER}`)" in (b / "logs" / "cron.log").read_text()
    # Only T-1 is left: both hosts wait for a person, neither runs it.
    for host, root in clones.items():
        code, out = tick(root, host)
        assert code == 1 and "WAITING FOR A PERSON" in out, (host, out)
    assert remote_plan(bare).task("T-1").status == " "
    assert not any("T-1" in s and "complete" in s for s in subjects(bare))
    # A person acknowledges on b. a has not heard of it yet: it still waits.
    done = ack(b, "b", "T-1")
    assert done.returncode == 0 and "acknowledged T-1" in done.stdout, done.stdout + done.stderr
    assert listed(b) == []
    code, out = tick(a, "a")
    assert code == 1 and "WAITING FOR A PERSON" in out, out
    # b's next tick commits the acknowledgement (pushed before its claim) and runs T-1.
    code, out = tick(b, "b")
    assert code == 0, out
    assert remote_plan(bare).task("T-1").status == "x"
    said = subjects(bare)
    assert f"{verify_changes.ACK_SUBJECT}T-1" in said
    assert said.index(f"{verify_changes.ACK_SUBJECT}T-1") > said.index("memento: complete T-1 Write out/1.txt")
    assert json.loads((b / ".memento" / "verify_changes.json").read_text()) == {"changes": []}
    # a syncs: the acknowledgement made on b releases the task there too.
    tick(a, "a")
    assert listed(a) == []


def test_an_acknowledgement_on_the_architects_host_releases_the_task_on_the_others(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a, b = clones["a"], clones["b"]
    architect_weakens_t1(a, monkeypatch)
    code, out = tick(b, "b")
    assert code == 1 and "WAITING FOR A PERSON" in out, out
    assert ack(a, "a", "T-1").returncode == 0
    code, out = tick(a, "a")  # a's tick commits the ack; it then runs T-1 itself: a pause first
    assert any(s == f"{verify_changes.ACK_SUBJECT}T-1" for s in subjects(bare)), subjects(bare)
    assert remote_plan(bare).task("T-1").status == "x"
    code, out = tick(b, "b")
    assert listed(b) == [] and "WAITING" not in out, out


def test_an_acknowledgement_given_before_a_later_change_arrived_does_not_release_that_change(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a, b = clones["a"], clones["b"]
    architect_weakens_t1(a, monkeypatch)
    code, out = tick(b, "b")
    assert code == 1 and "WAITING FOR A PERSON" in out, out
    architect_weakens_t1(a, monkeypatch, "true")  # on the remote; b has not fetched it
    assert ack(b, "b", "T-1").returncode == 0  # the person saw WEAKER only
    code, out = tick(b, "b")
    assert code == 1 and "WAITING FOR A PERSON" in out, out
    assert f"{verify_changes.ACK_SUBJECT}T-1" in subjects(bare)
    assert remote_plan(bare).task("T-1").status == " "
    assert [(c.task, c.old, c.new) for c in verify_changes.pending(Workspace(b))] == [("T-1", WEAKER, "true")]


def test_a_worker_that_forges_the_acknowledgement_releases_the_task_on_no_host(tmp_path, monkeypatch):
    """The hostile worker (tests/agents/forges_fleet_ack.py) on b runs `memento architect --ack`,
    commits Memento's acknowledgement message itself and lists the ack for the tick to publish:
    its attempt fails, nothing of it reaches the remote, and T-1 still waits on both hosts."""
    forger = shlex.join([PY, str(AGENTS / "forges_fleet_ack.py"), "{task_id}", "T-1"])
    bare, clones = make_fleet(tmp_path, ["a", "b"], 2, command=forger)
    a, b = clones["a"], clones["b"]
    architect_weakens_t1(a, monkeypatch)
    code, out = tick(b, "b")
    assert remote_plan(bare).task("T-2").status == " " and remote_plan(bare).task("T-2").retries == 1, out
    assert not any(s.startswith(verify_changes.ACK_SUBJECT) for s in subjects(bare))
    assert listed(b) == ["T-1"] and verify_changes.unpublished(Workspace(b)) == []
    log = (b / "logs" / "cron.log").read_text() + "".join(p.read_text() for p in (b / "logs").rglob("*.log"))
    assert "forged ack commit: exit 0" in log  # the commit was made, and taken back
    # An honest worker from now on: T-2 passes, T-1 still waits for a person on both hosts.
    for root in (a, b):
        text = (root / "memento.toml").read_text().replace(forger, shlex.join([PY, str(AGENTS / "fleet_worker.py"),
                                                                               "{task_id}"]))
        (root / "memento.toml").write_text(text)
        git(root, "commit", "-qam", "an honest worker")
    code, out = tick(b, "b")
    assert remote_plan(bare).task("T-2").status == "x", out
    for host, root in clones.items():
        code, out = tick(root, host)
        assert code == 1 and "WAITING FOR A PERSON" in out, (host, out)
    assert remote_plan(bare).task("T-1").status == " "
    assert not any(s.startswith(verify_changes.ACK_SUBJECT) for s in subjects(bare))
