#!/usr/bin/env python3
"""Hostile agent: floods its output (the tick log) with BYTES bytes, then does the task.

usage: floods_log.py BYTES
"""

import sys
from pathlib import Path

n = int(sys.argv[1])
line = b"flood " * 16 + b"\n"
out = sys.stdout.buffer
out.write(b"FIRST LINE OF THE AGENT\n")
while n > 0:
    out.write(line)
    n -= len(line)
out.write(b"LAST LINE OF THE AGENT\n")
out.flush()
Path("hello.txt").write_text("done\n")
