#!/usr/bin/env python3
"""Hostile agent: puts work on the base branch itself instead of the phase's branch (land = "pr"):
checks out `main`, commits there, and with `push` pushes `main` and the phase's branch to
`origin` with the person's git credentials; then does its task.

usage: lands_on_base.py PATH [push]
"""

import subprocess
import sys
from pathlib import Path


def git(*args: str) -> None:
    proc = subprocess.run(["git", *args], capture_output=True, text=True)
    print("git", *args, "->", proc.returncode, proc.stderr.strip()[-200:])


git("checkout", "-q", "main")
Path("sneaked.txt").write_text("on the base branch\n")
git("add", "sneaked.txt")
git("-c", "user.name=Agent", "-c", "user.email=agent@example.invalid", "commit", "-qm", "sneaked onto main")
if sys.argv[2:] == ["push"]:
    git("push", "-q", "origin", "main")
    git("push", "-q", "origin", "main:refs/heads/memento/phase-1-foundation")
Path(sys.argv[1]).write_text("done\n")
