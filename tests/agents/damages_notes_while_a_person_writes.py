#!/usr/bin/env python3
"""Fake agent: damages docs/HUMAN_NOTES.md while a person adds a note through Memento.

usage: damages_notes_while_a_person_writes.py MODE NOTE

MODE ``delete``: the agent removes the notes file; ``rewrite``: it rewrites the
file with every note's text "tidied" (so the notes it had are gone). Then it
prints WAITING and, while it still runs, the person (the test, outside the tick)
leaves NOTE with `memento note`; the agent waits until NOTE is in the file (60 s,
else exit 4). Last it does its task (hello.txt) and exits 0, so only the history
guard can fail the task.
"""

import sys
import time
from pathlib import Path

mode, person_note = sys.argv[1], sys.argv[2]
notes = Path("docs/HUMAN_NOTES.md")
if mode == "delete":
    notes.unlink()
elif mode == "rewrite":
    lines = notes.read_text(encoding="utf-8").splitlines(keepends=True)
    tidied = []
    for i, line in enumerate(lines):
        follows_heading = i > 0 and lines[i - 1].startswith("### [NOTE]")
        tidied.append(line.rstrip("\n") + " (tidied by the agent)\n" if follows_heading else line)
    notes.write_text("".join(tidied), encoding="utf-8")
else:
    raise SystemExit(f"unknown mode {mode!r}")
print("WAITING", flush=True)
deadline = time.monotonic() + 60
while person_note not in (notes.read_text(encoding="utf-8", errors="replace") if notes.exists() else ""):
    if time.monotonic() > deadline:
        sys.exit(4)
    time.sleep(0.02)
Path("hello.txt").write_text("done\n", encoding="utf-8")
print(f"notes: {mode}; the person added one meanwhile")
