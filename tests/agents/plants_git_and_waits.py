#!/usr/bin/env python3
"""Hostile fake agent: plants things in .git, then waits for its tick to be killed.

usage: plants_git_and_waits.py BRANCH TAG MARKER

It writes hello.txt "broken", plants .git/hooks/post-checkout (it would touch
MARKER), sets core.hooksPath and core.fsmonitor with `git config`, moves BRANCH
and the annotated TAG to HEAD~1, deletes the stash, prints "PLANTED <pid>" and
sleeps, so a test can kill -9 the tick while it runs. Every step's outcome is
printed; none stops it (in the sandbox `.git/` is read-only and each one fails).
Once the status log holds a STALE entry (the recovery ran) it only exits 3.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

branch, tag, marker = sys.argv[1:4]
if "STALE" in Path("docs/TICK_STATUS.md").read_text(encoding="utf-8", errors="replace"):
    sys.exit(3)


def attempt(what, func):
    try:
        func()
        print(f"DID {what}", flush=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"refused {what}: {exc}", flush=True)


def git(*args):
    return lambda: subprocess.run(["git", *args], check=True, capture_output=True)


def hook():
    p = Path(".git/hooks/post-checkout")
    p.write_text(f"#!/bin/sh\ntouch '{marker}'\n", encoding="utf-8")
    p.chmod(0o755)


attempt("break hello.txt", lambda: Path("hello.txt").write_text("broken\n", encoding="utf-8"))
attempt("hook", hook)
attempt("hooksPath", git("config", "core.hooksPath", "/tmp/agent-hooks"))
attempt("fsmonitor", git("config", "core.fsmonitor", f"touch '{marker}'"))
attempt("move branch", git("branch", "-f", branch, "HEAD~1"))
attempt("move tag", git("tag", "-f", "-a", tag, "-m", "forged", "HEAD~1"))
attempt("drop stash", git("stash", "clear"))
print(f"PLANTED {os.getpid()}", flush=True)
time.sleep(120)
