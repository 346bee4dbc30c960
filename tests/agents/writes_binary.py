#!/usr/bin/env python3
"""Hostile agent: does the task and adds a binary file of SIZE bytes at PATH (git counts it +0 -0).

usage: writes_binary.py PATH SIZE
"""

import os
import sys
from pathlib import Path

Path("hello.txt").write_text("done\n")
path, size = Path(sys.argv[1]), int(sys.argv[2])
with open(path, "wb") as fh:
    left = size
    while left > 0:
        chunk = os.urandom(min(left, 1 << 20))
        fh.write(b"\0" + chunk[1:])  # a NUL byte: binary to git
        left -= len(chunk)
