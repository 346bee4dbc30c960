#!/usr/bin/env python3
"""Hostile agent for parallel workers: from its worktree, writes into the main work tree
(three levels up from .memento/worktrees/<ID>/): a tracked file, a new file, the plan, the notes,
the status log, memento.toml and its git directory; into every other worker's worktree there;
moves the main branch; then does its task. Prints what it could and could not do, one line each
(ESCAPED: … or refused: …).

usage: worker_escapes.py
"""

import os
import subprocess
from pathlib import Path

task = os.environ["MEMENTO_TASK_ID"]
main = Path.cwd().parents[2]
targets = [main / "other.txt", main / ".git" / "escaped", main / "new.txt", main / "docs" / "MASTER_PLAN.md",
           main / "docs" / "HUMAN_NOTES.md", main / "docs" / "TICK_STATUS.md", main / "memento.toml"]
for sibling in sorted((main / ".memento" / "worktrees").glob("*")):
    if sibling.resolve() != Path.cwd().resolve():
        targets.append(sibling / "escaped.txt")
for target in targets:
    try:
        with open(target, "a") as fh:
            fh.write(f"written by {task}\n")
        print(f"ESCAPED: wrote {target}")
    except OSError as exc:
        print(f"refused: {target}: {exc.strerror}")
moved = subprocess.run(["git", "-C", str(main), "update-ref", "refs/heads/main", "HEAD~1"], capture_output=True)
print("ESCAPED: moved main" if moved.returncode == 0 else "refused: git update-ref in the main repository")
Path(f"{task}.txt").write_text(f"done {task}\n")
