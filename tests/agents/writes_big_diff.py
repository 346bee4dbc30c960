#!/usr/bin/env python3
"""Fake agent: writes a file of N lines (a full-file rewrite in disguise).

usage: writes_big_diff.py PATH N
"""

import sys
from pathlib import Path

path, n = Path(sys.argv[1]), int(sys.argv[2])
path.parent.mkdir(parents=True, exist_ok=True)
path.write_text("".join(f"line {i}\n" for i in range(n)), encoding="utf-8")
print(f"wrote {n} lines to {path}")
