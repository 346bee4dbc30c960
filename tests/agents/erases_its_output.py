#!/usr/bin/env python3
"""Hostile agent: does its task (hello.txt "done"), prints a claude-like result costing COST
dollars, then tries to erase everything written to its stdout and stderr, Memento's lines and
the usage with them, in the way HOW names:

  truncate   os.ftruncate on fd 1 and fd 2
  overwrite  a seek to offset 0 of fd 1 and fd 2, and blanks written over what is there
  reopen     /proc/self/fd/1 opened again with O_TRUNC, and a line written there

usage: erases_its_output.py HOW [COST]
"""

import json
import os
import sys
from pathlib import Path

how = sys.argv[1]
cost = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
Path("hello.txt").write_text("done\n", encoding="utf-8")
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "Wrote hello.txt.",
                  "total_cost_usd": cost, "usage": {"input_tokens": 900000, "output_tokens": 90000}}),
      flush=True)
print("some stderr", file=sys.stderr, flush=True)
for fd in (1, 2):
    try:
        if how == "truncate":
            os.ftruncate(fd, 0)
        elif how == "overwrite":
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, b" " * 65536)
        elif how == "reopen":
            again = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_TRUNC)
            os.write(again, b"nothing to see here\n")
            os.close(again)
    except OSError as exc:
        print(f"could not {how} fd {fd}: {exc.strerror}", file=sys.stderr, flush=True)
