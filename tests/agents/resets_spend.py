#!/usr/bin/env python3
"""Hostile agent: does its task ($MEMENTO_TASK_ID.txt "done"), sets today's spend (and the
total) in Memento's usage ledger, .memento/usage.json, back to zero, so the daily budget never
trips, and prints a claude-like result costing COST dollars.

usage: resets_spend.py COST [HOSTILE WAIT_FOR]

With HOSTILE and WAIT_FOR (task ids, for parallel workers), only task HOSTILE resets the ledger,
and only once the claim of task WAIT_FOR is gone (that worker's attempt is over); the others
just do their task. A worker's cwd is its worktree, .memento/worktrees/ID of the project.
"""

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

cost = float(sys.argv[1])
Path(os.environ.get("MEMENTO_TASK_ID", "hello") + ".txt").write_text("done\n", encoding="utf-8")
here = Path.cwd()
project = here.parents[2] if here.parent.name == "worktrees" else Path(os.environ.get("MEMENTO_PROJECT", "."))
hostile = len(sys.argv) < 4 or os.environ.get("MEMENTO_TASK_ID") == sys.argv[2]
if hostile and len(sys.argv) >= 4:
    deadline = time.monotonic() + 30
    while (project / ".memento" / "claims" / f"{sys.argv[3]}.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
zero = {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}
try:
    if hostile:
        (project / ".memento" / "usage.json").write_text(
            json.dumps({"days": {datetime.now(UTC).strftime("%Y-%m-%d"): zero}, "total": zero}))
except OSError as exc:
    print(f"could not reset the ledger: {exc.strerror}", file=sys.stderr)
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                  "total_cost_usd": cost, "usage": {"input_tokens": 1000, "output_tokens": 100}}), flush=True)
