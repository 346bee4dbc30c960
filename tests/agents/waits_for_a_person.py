#!/usr/bin/env python3
"""Fake agent: does its task, says WAITING, and waits until a person's edit is on disk.

usage: waits_for_a_person.py FILE TEXT
Writes hello.txt "done", prints "WAITING" (the test, acting as a person, edits
FILE when it reads that line in the tick log), then waits until FILE (relative
to the project) holds TEXT and exits 0; after 60 s without it, exits 4. It
writes nothing but hello.txt: every other change during the run is the person's.
"""

import sys
import time
from pathlib import Path

target, text = Path(sys.argv[1]), sys.argv[2]
Path("hello.txt").write_text("done\n", encoding="utf-8")
print("WAITING", flush=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    if text in target.read_text(encoding="utf-8", errors="replace"):
        print("the person's edit is there", flush=True)
        sys.exit(0)
    time.sleep(0.02)
sys.exit(4)
