#!/usr/bin/env python3
"""Hostile agent: does the task, and leaves a file whose name breaks careless tools.

usage: odd_names.py MODE [OUTSIDE]
hello.txt gets "done"; then by MODE, in src/:
  newline   a file named "a\\nb.txt"
  bytes     a file whose name is not UTF-8 (b"\\xff\\xfe.txt")
  dash      files named "-rf" and "--help"
  ctrl      a file named with ESC ] 52 (set the clipboard) and BEL
  symlink   src/ itself replaced by a symbolic link to OUTSIDE (a folder outside the project)
"""

import os
import shutil
import sys
from pathlib import Path

mode = sys.argv[1]
Path("hello.txt").write_text("done\n")
src = Path("src")
src.mkdir(exist_ok=True)
if mode == "newline":
    (src / "a\nb.txt").write_text("x\n")
elif mode == "bytes":
    with open(os.path.join(b"src", b"\xff\xfe.txt"), "w") as fh:
        fh.write("x\n")
elif mode == "dash":
    (src / "-rf").write_text("x\n")
    (src / "--help").write_text("x\n")
elif mode == "ctrl":
    (src / "\x1b]52;c;ZXZpbA==\x07\x1b[2J.txt").write_text("x\n")
elif mode == "symlink":
    shutil.rmtree(src)
    os.symlink(sys.argv[2], "src")
print("done", flush=True)
