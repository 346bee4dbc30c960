#!/usr/bin/env python3
"""Hostile agent: does its task ($MEMENTO_TASK_ID.txt "done") and forges Memento's claims
(.memento/claims/): its own claim rewritten (another pid and process group, another base, the
stage "committing" with a path of its choosing), and a claim made up for another task, T-2.

usage: forges_claims.py
"""

import json
import os
import sys
from pathlib import Path

task = os.environ.get("MEMENTO_TASK_ID", "T-1")
Path(task + ".txt").write_text("done\n", encoding="utf-8")
claims = Path(os.environ.get("MEMENTO_PROJECT", ".")) / ".memento" / "claims"
try:
    own = claims / f"{task}.json"
    data = json.loads(own.read_text())
    data.update(pid=1, pgid=1, base="0" * 40, stage="committing", commit_paths=["other.txt"])
    own.write_text(json.dumps(data))
    (claims / "T-2.json").write_text(json.dumps({**data, "task": "T-2", "stage": "running"}))
except OSError as exc:
    print(f"could not forge the claims: {exc.strerror}", file=sys.stderr)
print("forged")
