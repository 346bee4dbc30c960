#!/usr/bin/env python3
"""Fake agent for a killed parallel tick: leaves work in its worktree, then waits to be killed.

usage: parallel_wip.py DIR

Writes <TASK>.wip (untracked), commits <TASK>.committed on its branch, then
writes DIR/<TASK>.started (its pid and cwd) and waits up to 60 s: the test
kills its tick meanwhile, and the next tick must save that work before it
removes the worktree.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

scratch = Path(sys.argv[1])
task = os.environ["MEMENTO_TASK_ID"]
Path(f"{task}.committed").write_text(f"committed by {task}\n")
subprocess.run(["git", "add", f"{task}.committed"], check=True)
subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@a.invalid", "commit", "-qm", f"wip {task}"],
               check=True)
Path(f"{task}.wip").write_text(f"unfinished {task}\n")
tmp = scratch / f".{task}.tmp"
tmp.write_text(f"{os.getpid()}\n{os.getcwd()}\n")
os.replace(tmp, scratch / f"{task}.started")
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    time.sleep(0.05)
