#!/usr/bin/env python3
"""Fake agent: does its task by writing a file.

usage: does_task.py PATH [TEXT]   (PATH relative to the working directory;
TEXT defaults to "done by the fake agent"). PATH may also come from
$FAKE_AGENT_FILE.
"""

import os
import sys
from pathlib import Path

target = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["FAKE_AGENT_FILE"])
text = sys.argv[2] if len(sys.argv) > 2 else "done by the fake agent"
target.parent.mkdir(parents=True, exist_ok=True)
target.write_text(text + "\n", encoding="utf-8")
print(f"wrote {target}")
