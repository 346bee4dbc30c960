#!/usr/bin/env python3
"""Hostile agent: does the task, then replaces Memento's logs/ folder by a plain file.

Every later write of the tick log or cron.log then fails: without care, an exception
after the claim and a crash loop (exit 2 with the task left [~], no retry counted).
"""

import shutil
from pathlib import Path

Path("hello.txt").write_text("done\n")
shutil.rmtree("logs", ignore_errors=True)
Path("logs").write_text("not a folder\n")
