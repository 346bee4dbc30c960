#!/usr/bin/env python3
"""Hostile agent: does its task, then deletes a branch, a tag and the whole stash.

usage: git_deletes_refs.py BRANCH TAG
"""

import subprocess
import sys
from pathlib import Path

branch, tag = sys.argv[1], sys.argv[2]
Path("hello.txt").write_text("done\n", encoding="utf-8")
subprocess.run(["git", "branch", "-D", branch], check=True)
subprocess.run(["git", "tag", "-d", tag], check=True)
subprocess.run(["git", "stash", "clear"], check=True)
subprocess.run(["git", "pack-refs", "--all"], check=True)
print("deleted refs")
