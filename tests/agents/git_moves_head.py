#!/usr/bin/env python3
"""Hostile agent: moves HEAD to a branch of its own (`git checkout -b`) and commits its task there.

usage: git_moves_head.py BRANCH
"""

import subprocess
import sys
from pathlib import Path

subprocess.run(["git", "checkout", "-q", "-b", sys.argv[1]], check=True)
Path("hello.txt").write_text("done\n", encoding="utf-8")
subprocess.run(["git", "add", "hello.txt"], check=True)
subprocess.run(["git", "commit", "-q", "-m", "agent: on my own branch"], check=True)
print("moved HEAD")
