#!/usr/bin/env python3
"""Fake agent: does its task while a person's save of a Memento document is half way.

usage: meets_a_persons_temp_file.py TEMP_PATH EXIT_CODE

TEMP_PATH is the temp file of that save (as locks.atomic_write_bytes names it:
``docs/.HUMAN_NOTES.md.<random>.tmp``); the "person" writes it and has not renamed
it yet when the agent ends. The agent writes hello.txt and exits with EXIT_CODE.
"""

import sys
from pathlib import Path

temp, exit_code = Path(sys.argv[1]), int(sys.argv[2])
temp.write_text("a person's note being saved right now\n", encoding="utf-8")
Path("hello.txt").write_text("done\n", encoding="utf-8")
print(f"wrote hello.txt beside a person's {temp}")
raise SystemExit(exit_code)
