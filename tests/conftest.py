"""What every test folder shares: how many workers `-n auto` (pyproject's addopts) starts."""

from __future__ import annotations

import os


def pytest_xdist_auto_num_workers(config) -> int | None:
    """Two workers a core, at most 4 (pyproject's --maxprocesses): a test spends about half its time
    waiting on the git, agents, sandboxes and servers it starts (the suite's tests used 942 s of CPU
    in 2,016 s of its two workers' time on 2 cores), so one worker a core left the machine half idle.
    PYTEST_XDIST_AUTO_NUM_WORKERS, when set, still decides (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return 2 * len(os.sched_getaffinity(0))
