#!/usr/bin/env python3
"""Hostile agent: does its task, then points core.hooksPath and core.fsmonitor at its own scripts.

usage: git_config_hooks_fsmonitor.py MARKER   (the scripts append to MARKER when git runs them)
"""

import os
import subprocess
import sys
from pathlib import Path

marker = sys.argv[1]
evil = Path(marker).with_name("evil-hooks")
evil.mkdir(parents=True, exist_ok=True)
for name in ("pre-commit", "post-commit", "reference-transaction", "post-checkout", "fsmonitor"):
    script = evil / name
    script.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\nexit 0\n", encoding="utf-8")
    os.chmod(script, 0o755)
Path("hello.txt").write_text("done\n", encoding="utf-8")
subprocess.run(["git", "config", "core.hooksPath", str(evil)], check=True)
subprocess.run(["git", "config", "core.fsmonitor", str(evil / "fsmonitor")], check=True)
subprocess.run(["git", "config", "commit.gpgSign", "true"], check=True)
subprocess.run(["git", "config", "gpg.program", str(evil / "fsmonitor")], check=True)
print("configured git")
