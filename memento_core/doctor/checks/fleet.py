"""The fleet check (SPEC §12 "Across machines"): can this host reach the remote the plan is worked through?"""

from __future__ import annotations

import os

from ...fleet.remote import read_refusal
from ...git.run import git_env, run_git
from ..context import Context
from ..findings import CRITICAL, WARNING, CheckResult, Finding

SEEN = "refs/memento/seen/"  # fleet/host.py: the remote's claim refs as last fetched


def check_remote(c: Context) -> CheckResult:
    """With ``[workers] remote``: the remote answers (``git ls-remote``) and has this branch."""
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    if not config.workers_remote:
        return "fleet: no [workers] remote, this host works the plan alone"
    remote, rel = config.workers_remote, c.rel(c.ws.config_path)
    branch = run_git(c.ws.root, ["symbolic-ref", "-q", "--short", "HEAD"], check=False).stdout.decode().strip()
    if not branch:
        return [Finding(CRITICAL, "fleet-remote", "fleet: the work tree is on no branch (detached HEAD)", rel)]
    extra = {} if "GIT_SSH_COMMAND" in os.environ else {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=15"}
    proc = run_git(c.ws.root, ["ls-remote", "--heads", remote, branch], env=git_env(extra), check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return [Finding(CRITICAL, "fleet-remote",
                        f"fleet: the remote {remote!r} cannot be fetched: {err[-1] if err else 'git failed'}; "
                        "no task is claimed until it can", rel)]
    refused = read_refusal(c.ws)
    if refused is not None and refused.get("remote") == remote:
        return [Finding(CRITICAL, "fleet-remote",
                        f"fleet: the remote {remote!r} refused this host's last push ({refused.get('at', '?')}): "
                        f"{refused['said']}; nothing is claimed or done here until it takes pushes again", rel)]
    if not proc.stdout.strip():
        return f"fleet: {remote} answers; its {branch} does not exist yet (the first tick pushes it)"
    return f"fleet: {remote} answers, this host is {config.host!r}"


def check_fleet_workers(c: Context) -> CheckResult:
    """With ``[workers] remote``, ``[workers] max`` > 1 is not used: each host claims one task at a time."""
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    if not config.workers_remote:
        return f"workers: up to {config.workers_max} task(s) at a time in a parallel phase (no [workers] remote)"
    if config.workers_max <= 1:
        return "fleet: one task at a time per host"
    return [Finding(WARNING, "fleet-workers",
                    f"fleet: [workers] max = {config.workers_max} is ignored with [workers] remote = "
                    f"{config.workers_remote!r}: each host runs one task at a time (the remote's claim is one "
                    "task); add hosts instead, or set max = 1 to silence this", c.rel(c.ws.config_path))]


def held_elsewhere(c: Context, task_id: str) -> bool:
    """A `[~]` task another host of the fleet holds (a claim ref fetched, no claim file here)."""
    config, _ = c.config_and_error
    if config is None or not config.workers_remote:
        return False
    proc = run_git(c.ws.root, ["rev-parse", "-q", "--verify", SEEN + task_id], check=False)
    return proc.returncode == 0
