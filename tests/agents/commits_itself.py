#!/usr/bin/env python3
"""Fake agent: writes a file and commits it (two commits), as a misbehaving agent would.

usage: commits_itself.py PATH
"""

import subprocess
import sys
from pathlib import Path

target = Path(sys.argv[1])
target.parent.mkdir(parents=True, exist_ok=True)
target.write_text("first\n", encoding="utf-8")
subprocess.run(["git", "add", "--", str(target)], check=True)
subprocess.run(["git", "commit", "-q", "-m", "agent: first"], check=True)
target.write_text("first\nsecond\n", encoding="utf-8")
subprocess.run(["git", "commit", "-q", "-am", "agent: second"], check=True)
print("committed twice")
