#!/usr/bin/env python3
"""Agent that uses git the way coding CLIs do: stages, moves and removes files.

usage: stages_with_git.py [UNIQUE]

`git add new.txt`, `git mv old.txt moved.txt`, `git rm gone.txt`; stages a
file holding UNIQUE and unstages and deletes it again (its blob stays in the
agent's object folder); `git status`, `git diff --cached`. Exits 1 when a git
command fails; writes "done" to hello.txt.
"""

import subprocess
import sys
from pathlib import Path

unique = sys.argv[1] if len(sys.argv) > 1 else "staged only"
Path("new.txt").write_text("a new file\n")
Path("hello.txt").write_text("done\n")
Path("staged-only.txt").write_text(unique + "\n")
steps = [["git", "add", "new.txt", "hello.txt"], ["git", "mv", "old.txt", "moved.txt"], ["git", "rm", "-q", "gone.txt"],
         ["git", "add", "staged-only.txt"], ["git", "rm", "-q", "--cached", "staged-only.txt"],
         ["git", "status", "--porcelain"], ["git", "diff", "--cached", "--name-status"]]
failed = 0
for step in steps:
    proc = subprocess.run(step, capture_output=True, text=True)
    print(f"$ {' '.join(step)} -> {proc.returncode}\n{proc.stdout}{proc.stderr}", end="")
    failed |= proc.returncode != 0
Path("staged-only.txt").unlink()
sys.exit(1 if failed else 0)
