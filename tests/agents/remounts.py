#!/usr/bin/env python3
"""Hostile fake agent: tries to lift the sandbox's read-only mounts, then to write what they protect.

usage: remounts.py PATH [PATH...]

For each PATH it runs `umount PATH`, then `mount -o remount,rw /` once and
`mount -o remount,rw,bind PATH`, then overwrites every PATH with "pwned".
Each outcome is printed (UNMOUNTED / REMOUNTED / WROTE when it worked); it
does its task (hello.txt "done") and exits 0 either way.
"""

import subprocess
import sys
from pathlib import Path


def run(*argv):
    try:
        return subprocess.run(argv, capture_output=True).returncode == 0
    except OSError:
        return False


paths = sys.argv[1:]
for path in paths:
    if run("umount", path):
        print(f"UNMOUNTED {path}", flush=True)
if run("mount", "-o", "remount,rw", "/"):
    print("REMOUNTED /", flush=True)
for path in paths:
    if run("mount", "-o", "remount,rw,bind", path):
        print(f"REMOUNTED {path}", flush=True)
for path in paths:
    try:
        Path(path).write_text("pwned\n", encoding="utf-8")
        print(f"WROTE {path}", flush=True)
    except OSError as exc:
        print(f"refused {path}: {exc.strerror}", flush=True)
Path("hello.txt").write_text("done\n", encoding="utf-8")
