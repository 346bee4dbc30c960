#!/usr/bin/env python3
"""Hostile agent for parallel workers: does its task, and task HOSTILE also points the main
branch at a commit of its own (from inside its worktree, where HEAD is its memento/<ID> branch).

usage: worker_moves_main.py DIR HOSTILE_ID   (writes DIR/<TASK>.started first)
"""

import os
import subprocess
import sys
from pathlib import Path

scratch, hostile = Path(sys.argv[1]), sys.argv[2]
task = os.environ["MEMENTO_TASK_ID"]
(scratch / f"{task}.started").write_text(f"{os.getpid()}\n{os.getcwd()}\n")
Path(f"{task}.txt").write_text(f"done {task}\n")
if task == hostile:
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "agent: on main"], check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/heads/main", sha], check=True)
    print(f"moved main to {sha}")
