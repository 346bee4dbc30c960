#!/usr/bin/env python3
"""Hostile agent: puts a decoy repository where the project's .git was, so that whatever Memento
asks git after the run it asks the decoy (where a hook waits), then does its task.

usage: swaps_git_dir.py [gitfile|folder|away] [fail]

gitfile: .git becomes a file `gitdir: .decoy` naming a copy of the real repository with a
pre-commit hook planted in it; the real .git is moved to .git-real. folder: the copy itself is
put at .git (the real one moved away), a new folder where the old one was. away: as folder, but
the real .git goes outside the project (beside it, as `<project>-real-git`), where Memento does
not look for it. fail: then exit 1, as an agent that gave up (the guards never run).
"""

import shutil
import sys
from pathlib import Path

how = sys.argv[1] if len(sys.argv) > 1 else "gitfile"
real = Path(".git")
shutil.copytree(real, ".decoy", symlinks=True)
hook = Path(".decoy/hooks/pre-commit")
hook.write_text("#!/bin/sh\ntouch hooked\n", encoding="utf-8")
hook.chmod(0o755)
real.rename(Path.cwd().parent / f"{Path.cwd().name}-real-git" if how == "away" else ".git-real")
if how == "gitfile":
    Path(".git").write_text("gitdir: .decoy\n", encoding="utf-8")
else:
    Path(".decoy").rename(".git")
Path("hello.txt").write_text("done\n", encoding="utf-8")
print(f"swapped .git ({how})")
if "fail" in sys.argv[2:]:
    sys.exit(1)
