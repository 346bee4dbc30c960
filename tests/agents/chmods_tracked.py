#!/usr/bin/env python3
"""Hostile agent: changes the modes of tracked files and folders, then fails its task.

usage: chmods_tracked.py PATH=OCTAL...   e.g. other.txt=000 run.sh=644 src=700
(git records only a file's x bit: a chmod 000 is in no diff). Writes hello.txt wrong.
"""

import os
import sys
from pathlib import Path

for arg in sys.argv[1:]:
    path, _, mode = arg.partition("=")
    os.chmod(path, int(mode, 8))
    print(f"chmod {mode} {path}")
Path("hello.txt").write_text("not what verify wants\n", encoding="utf-8")
