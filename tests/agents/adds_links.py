#!/usr/bin/env python3
"""Hostile agent: symbolic links in its change.

usage: adds_links.py WHAT [TARGET]
  outside TARGET  src/ext_link -> TARGET (a person's file outside the work tree)
  guarded         src/guard_link -> ../guarded.txt (a guard file)
  own             src/plan_link -> ../docs/MASTER_PLAN.md (Memento's)
  inside          src/calc_link -> calc.py (harmless: may be committed)
  replace TARGET  src/ removed and replaced by a link to the folder TARGET, then exits 1
"""

import os
import shutil
import sys
from pathlib import Path

what = sys.argv[1]
if what == "replace":
    shutil.rmtree("src")
    os.symlink(sys.argv[2], "src")
    print("replaced src/")
    sys.exit(1)
name, target = {"outside": ("ext_link", sys.argv[-1]), "guarded": ("guard_link", "../guarded.txt"),
                "own": ("plan_link", "../docs/MASTER_PLAN.md"), "inside": ("calc_link", "calc.py")}[what]
os.symlink(target, Path("src") / name)
print(f"linked src/{name} -> {target}")
