#!/usr/bin/env python3
"""Hostile agent for parallel workers: from its worktree, writes into the main work tree
(../../../other.txt, three levels up from .memento/worktrees/<ID>/) and its git directory, then
does its task. Prints what it could and could not do.

usage: worker_escapes.py
"""

import os
import subprocess
from pathlib import Path

task = os.environ["MEMENTO_TASK_ID"]
main = Path.cwd().parents[2]
for target in (main / "other.txt", main / ".git" / "escaped"):
    try:
        target.write_text(f"written by {task}\n")
        print(f"ESCAPED: wrote {target}")
    except OSError as exc:
        print(f"refused: {target}: {exc.strerror}")
moved = subprocess.run(["git", "-C", str(main), "update-ref", "refs/heads/main", "HEAD~1"], capture_output=True)
print("ESCAPED: moved main" if moved.returncode == 0 else "refused: git update-ref in the main repository")
Path(f"{task}.txt").write_text(f"done {task}\n")
