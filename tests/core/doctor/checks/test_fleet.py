"""checks/fleet.py (SPEC §12 "Across machines"), called on real repositories and a real bare remote: no
remote is a host alone, a remote that answers with or without this branch, one that cannot be fetched, a
refusal of this host's last push and a detached HEAD are critical, [workers] max > 1 in a fleet is a
warning, and a task another host holds is known by its fetched claim ref. The fleet at work (several
clones ticking) is tests/core/test_fleet.py."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime

import pytest

from memento_core.doctor.checks.fleet import SEEN, check_fleet_workers, check_remote, held_elsewhere
from memento_core.doctor.context import Context
from memento_core.doctor.findings import CRITICAL, WARNING
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace


def git(root, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def ws(tmp_path, git_identity) -> Workspace:
    init_workspace(tmp_path / "proj", project="proj")
    return Workspace(tmp_path / "proj")


def workers(ws: Workspace, section: str) -> Context:
    """memento.toml's [workers] set to ``section``, committed; the doctor's context of the workspace."""
    ws.config_path.write_text(f"[workers]\n{section}")
    git(ws.root, "commit", "-qam", "workers")
    return Context(ws, datetime.now(UTC))


def test_without_a_remote_the_host_works_alone_and_max_is_the_parallel_workers(ws):
    c = workers(ws, "max = 3\n")
    assert check_remote(c) == "fleet: no [workers] remote, this host works the plan alone"
    assert check_fleet_workers(c) == "workers: up to 3 task(s) at a time in a parallel phase (no [workers] remote)"
    git(ws.root, "update-ref", SEEN + "T-1", "HEAD")  # left from a fleet this host no longer works in
    assert not held_elsewhere(c, "T-1")


def test_no_config_is_left_to_the_config_check(ws):
    ws.config_path.write_text("[workers\n")
    c = Context(ws, datetime.now(UTC))
    assert check_remote(c) is None and check_fleet_workers(c) is None and not held_elsewhere(c, "T-1")


def test_a_remote_that_answers_with_and_without_this_branch(ws, tmp_path):
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(ws.root, "remote", "add", "origin", str(bare))
    c = workers(ws, 'remote = "origin"\nhost = "hal"\n')
    branch = git(ws.root, "symbolic-ref", "--short", "HEAD").strip()
    assert check_remote(c) == f"fleet: origin answers; its {branch} does not exist yet (the first tick pushes it)"
    git(ws.root, "push", "-q", "origin", branch)
    assert check_remote(c) == "fleet: origin answers, this host is 'hal'"


def test_a_remote_that_cannot_be_fetched_or_refused_the_last_push_is_critical(ws, tmp_path):
    git(ws.root, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    c = workers(ws, 'remote = "origin"\n')
    [finding] = check_remote(c)
    assert (finding.severity, finding.check, finding.path) == (CRITICAL, "fleet-remote", "memento.toml")
    assert finding.message.startswith("fleet: the remote 'origin' cannot be fetched: ")
    assert finding.message.endswith("; no task is claimed until it can")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "nowhere.git")], check=True)
    refused = ws.memento_dir / "fleet_refused.json"
    refused.write_text(json.dumps({"remote": "elsewhere", "said": "pre-receive hook declined", "at": "T0"}))
    assert check_remote(c).startswith("fleet: origin answers")  # another remote's refusal is not this one's
    refused.write_text(json.dumps({"remote": "origin", "said": "pre-receive hook declined", "at": "T0"}))
    [finding] = check_remote(c)
    assert finding.severity == CRITICAL and finding.message == (
        "fleet: the remote 'origin' refused this host's last push (T0): pre-receive hook declined; nothing is "
        "claimed or done here until it takes pushes again")


def test_a_detached_head_is_critical(ws, tmp_path):
    git(ws.root, "remote", "add", "origin", str(tmp_path / "remote.git"))
    c = workers(ws, 'remote = "origin"\n')
    git(ws.root, "checkout", "-q", "--detach")
    [finding] = check_remote(c)
    assert (finding.severity, finding.message) == (CRITICAL, "fleet: the work tree is on no branch (detached HEAD)")


def test_more_than_one_worker_per_host_in_a_fleet_is_a_warning(ws):
    [finding] = check_fleet_workers(workers(ws, 'remote = "origin"\nmax = 3\n'))
    assert (finding.severity, finding.check, finding.path) == (WARNING, "fleet-workers", "memento.toml")
    assert finding.message.startswith("fleet: [workers] max = 3 is ignored with [workers] remote = 'origin'")
    assert check_fleet_workers(workers(ws, 'remote = "origin"\nmax = 1\n')) == "fleet: one task at a time per host"


def test_a_task_is_held_elsewhere_when_its_claim_ref_was_fetched(ws):
    c = workers(ws, 'remote = "origin"\n')
    assert not held_elsewhere(c, "T-1")
    git(ws.root, "update-ref", SEEN + "T-1", "HEAD")
    assert held_elsewhere(c, "T-1") and not held_elsewhere(c, "T-2")
