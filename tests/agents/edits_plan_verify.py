#!/usr/bin/env python3
"""Fake agent: "fixes" its task by rewriting its own verify line in the plan to `true`.

usage: edits_plan_verify.py TASK_ID
"""

import sys
from pathlib import Path

task_id = sys.argv[1]
plan = Path("docs/MASTER_PLAN.md")
lines = plan.read_text(encoding="utf-8").splitlines(keepends=True)
inside = False
for i, line in enumerate(lines):
    if task_id in line and "[" in line:
        inside = True
    elif inside and line.strip().startswith("- verify:"):
        lines[i] = "  - verify: `true`\n"
        break
plan.write_text("".join(lines), encoding="utf-8")
print(f"rewrote the verify line of {task_id}")
