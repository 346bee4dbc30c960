#!/usr/bin/env python3
"""Fake agent that learns: fails once and records why, succeeds when its prompt carries the lesson.

usage: learns_from_failure.py PROMPT_FILE [--raw]

Without the lesson in the prompt it writes a wrong hello.txt (the rollback
removes it), records a lesson with `memento memory write` and exits 1. With
the lesson it writes hello.txt correctly and exits 0. --raw also writes a
file straight into memory/, bypassing the tool (an unattributed write).
"""

import os
import subprocess
import sys
from pathlib import Path

LESSON_PATH = "knowledge/lessons/hello-file.md"
LESSON_SUMMARY = "hello.txt must contain the word done"

prompt = Path(sys.argv[1]).read_text(encoding="utf-8")
if "--raw" in sys.argv:
    raw = Path("memory/knowledge/raw-note.md")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text("written straight to disk\n", encoding="utf-8")
if LESSON_PATH in prompt and LESSON_SUMMARY in prompt:
    Path("hello.txt").write_text("done\n", encoding="utf-8")
    print("used the lesson from memory")
    sys.exit(0)
Path("hello.txt").write_text("hello world\n", encoding="utf-8")
proc = subprocess.run(
    [sys.executable, "-m", "memento_core.cli", "memory", "write", LESSON_PATH, "--summary", LESSON_SUMMARY],
    input="The verify greps for `done`; writing a greeting is not enough.\n",
    text=True, capture_output=True, env=os.environ,
)
print(proc.stdout, proc.stderr)
sys.exit(1)
