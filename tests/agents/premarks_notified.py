#!/usr/bin/env python3
"""Hostile agent: marks in Memento's notification state (.memento/notify.json) every state a
person would be told about as told already ("blocked" for this task and others, the breaker,
the budget), then fails (exit 1), so that its task, once blocked, would never be notified.

usage: premarks_notified.py
"""

import json
import os
import sys
from pathlib import Path

record = Path(os.environ.get("MEMENTO_PROJECT", ".")) / ".memento" / "notify.json"
states = {f"blocked:T-{n}": "blocked" for n in range(1, 10)}
states.update({"breaker": "x", "budget": "x", "rate_limited": "x"})
try:
    record.write_text(json.dumps({"states": states, "pending": []}))
except OSError as exc:
    print(f"could not write notify.json: {exc.strerror}", file=sys.stderr)
print("failing on purpose")
sys.exit(1)
