#!/usr/bin/env python3
"""Hostile agent: hides new files with its own .gitignore line, then fails.

Appends `stash/` and `helper.py` to the tracked .gitignore, writes stash/conftest.py and
helper.py (both ignored now, so not in git's view of the change), exits 1.
With `nested`: a new src/.gitignore instead, hiding src/helper.py and src/stash/ beside it.
"""

import sys
from pathlib import Path

at = Path("src") if sys.argv[1:] == ["nested"] else Path(".")
with open(at / ".gitignore", "a", encoding="utf-8") as fh:
    fh.write("stash/\nhelper.py\n")
(at / "stash").mkdir(exist_ok=True)
(at / "stash" / "conftest.py").write_text("# the agent's\n", encoding="utf-8")
(at / "helper.py").write_text("# the agent's\n", encoding="utf-8")
print("hidden")
sys.exit(1)
