#!/usr/bin/env python3
"""Honest fake agent: updates the project's own docs/index.rst and scripts/build.sh, writes hello.txt.

usage: edits_project_docs.py

docs/index.rst is edited the way `sed -i` does it (a new file renamed over the old one),
scripts/build.sh in place (it keeps its executable bit).
"""

import os
from pathlib import Path

index = Path("docs/index.rst")
new = index.with_name(".index.rst.new")
new.write_text(index.read_text(encoding="utf-8") + "\nUsage\n-----\n\nRun scripts/build.sh.\n", encoding="utf-8")
os.replace(new, index)
with open("scripts/build.sh", "w", encoding="utf-8") as fh:
    fh.write("#!/bin/sh\necho build2\n")
Path("hello.txt").write_text("done\n", encoding="utf-8")
