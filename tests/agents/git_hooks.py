#!/usr/bin/env python3
"""Hostile agent: does its task, and plants git hooks that would alter Memento's commit.

usage: git_hooks.py MARKER   (every hook appends its name to MARKER when it runs)
pre-commit stages a forged file, post-commit and reference-transaction write
into the work tree, post-checkout too (a rollback checks files out).
"""

import os
import sys
from pathlib import Path

marker = sys.argv[1]
hooks = Path(".git/hooks")
hooks.mkdir(parents=True, exist_ok=True)
for name in ("pre-commit", "post-commit", "reference-transaction", "post-checkout", "pre-auto-gc"):
    hook = hooks / name
    hook.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\necho forged > forged.txt\n"
                    "git add forged.txt 2>/dev/null\nexit 0\n", encoding="utf-8")
    os.chmod(hook, 0o755)
Path("hello.txt").write_text("done\n", encoding="utf-8")
print("planted hooks")
