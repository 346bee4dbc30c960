"""crashpoints.py: inert unless MEMENTO_CRASH_AT names a point when the process starts; reaching that
point SIGKILLs the process on the spot (real subprocesses). Every named point is reached by the code,
and the code reaches no point the list does not name."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.crashpoints import POINTS

ROOT = Path(__file__).resolve().parents[2]
REACH = ("from memento_core.crashpoints import crash_point\n"
         "print('before', flush=True)\ncrash_point('tick:after-claim')\nprint('after', flush=True)\n")


def reach(crash_at: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    if crash_at is not None:
        env["MEMENTO_CRASH_AT"] = crash_at
    return subprocess.run([sys.executable, "-c", REACH], env=env, capture_output=True, text=True, timeout=60,
                          cwd=ROOT)


def test_the_named_point_kills_the_process_there():
    r = reach("tick:after-claim")
    assert r.returncode == -signal.SIGKILL and r.stdout == "before\n"


@pytest.mark.parametrize("crash_at", [None, "", "tick:after-verify", "tick:after", "tick:after-claim "])
def test_any_other_point_or_none_is_inert(crash_at):
    r = reach(crash_at)
    assert r.returncode == 0 and r.stdout == "before\nafter\n"


def test_the_points_are_the_ones_the_code_reaches():
    reached = set()
    for path in (ROOT / "memento_core").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        reached |= set(re.findall(r'crash_point\("([^"{]+)"\)', text))
        if 'crash_point(f"write:{path.name}")' in text:  # locks.py: one point per file written
            reached |= {p for p in POINTS if p.startswith("write:")}
    assert reached == set(POINTS)
