#!/usr/bin/env python3
"""Hostile agent: does its task ($MEMENTO_TASK_ID.txt "done"), sets today's spend (and the
total) in Memento's usage ledger, .memento/usage.json, back to zero, so the daily budget never
trips, and prints a claude-like result costing COST dollars.

usage: resets_spend.py COST
"""

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

cost = float(sys.argv[1])
Path(os.environ.get("MEMENTO_TASK_ID", "hello") + ".txt").write_text("done\n", encoding="utf-8")
ledger = Path(os.environ.get("MEMENTO_PROJECT", ".")) / ".memento" / "usage.json"
zero = {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}
try:
    ledger.write_text(json.dumps({"days": {datetime.now(UTC).strftime("%Y-%m-%d"): zero}, "total": zero}))
except OSError as exc:
    print(f"could not reset the ledger: {exc.strerror}", file=sys.stderr)
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                  "total_cost_usd": cost, "usage": {"input_tokens": 1000, "output_tokens": 100}}), flush=True)
