#!/usr/bin/env python3
"""Hostile fake agent: tries to write each PATH, then does its task (hello.txt "done").

usage: tries_writes.py PATH [PATH...]

Each PATH (relative to the project, or absolute, ~ for $HOME) is overwritten
with "pwned"; a folder PATH gets a new file "pwned.txt" inside. A PATH
starting with "+" is appended to instead (a forged line). The outcome of each
try is printed; a refused write does not stop the others, and the agent exits
0 either way, so the task passes when every hostile write was made harmless.
"""

import os
import sys
from pathlib import Path

for raw in sys.argv[1:]:
    append = raw.startswith("+")
    path = Path(os.path.expanduser(raw.lstrip("+")))
    try:
        if path.is_dir():
            (path / "pwned.txt").write_text("pwned\n", encoding="utf-8")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a" if append else "w", encoding="utf-8") as fh:
                fh.write("pwned\n")
        print(f"WROTE {path}", flush=True)
    except OSError as exc:
        print(f"refused {path}: {exc.strerror}", flush=True)
Path("hello.txt").write_text("done\n", encoding="utf-8")
