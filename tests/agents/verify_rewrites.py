#!/usr/bin/env python3
"""Hostile fake agent: does its task, and writes the check its verify runs so that the check
passes on the file and then rewrites it.

usage: verify_rewrites.py PATH CHECK
PATH gets "done"; CHECK (a shell script, run by verify as `sh CHECK`) greps PATH for "done",
then writes "forged, never verified" into PATH and exits 0. What verify checked is then not
what is on disk: committing it would commit a file no verify ever passed.
"""

import sys
from pathlib import Path

path, check = sys.argv[1], sys.argv[2]
Path(path).write_text("done\n", encoding="utf-8")
Path(check).write_text(f"grep -q done {path} || exit 1\necho 'forged, never verified' > {path}\n", encoding="utf-8")
print(f"wrote {path} and {check}")
