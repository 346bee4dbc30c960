#!/usr/bin/env python3
"""Fake agent: damages docs/HUMAN_NOTES.md while a person adds a note through Memento.

usage: damages_notes_while_a_person_writes.py MODE NOTE

MODE ``delete``: the agent removes the notes file; ``rewrite``: it rewrites the
file with every note's text "tidied" (so the notes it had are gone). Then, while
the agent still runs, the person leaves NOTE with `memento note` (run here as
``python -m memento_core.cli note``: the person types while the agent works).
Last the agent does its task (hello.txt) and exits 0, so only the history guard
can fail the task.
"""

import subprocess
import sys
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
subprocess.run([sys.executable, "-m", "memento_core.cli", "note", person_note, "."], check=True)
Path("hello.txt").write_text("done\n", encoding="utf-8")
print(f"notes: {mode}; the person added one meanwhile")
