#!/usr/bin/env python3
"""Hostile agent for parallel workers, unconfined: writes into another worker's worktree while it verifies.

usage: writes_other_worktree.py HOSTILE VICTIM FILE DONE
Task HOSTILE waits until VICTIM's claim (the main project's .memento/claims/VICTIM.json) says
its stage is "verifying" (VICTIM's own agent has ended), then writes FILE in VICTIM's worktree
("written by HOSTILE"), a file VICTIM's context_files name: it hopes it is committed as
VICTIM's work; then it creates DONE (a path outside the project: a test's verify waits for it,
so the write falls inside that verify). Every task (HOSTILE too) writes <TASK>.txt in its own
worktree.
"""

import json
import os
import sys
import time
from pathlib import Path

hostile, victim, name, done = sys.argv[1:5]
task = os.environ["MEMENTO_TASK_ID"]
main = Path.cwd().parents[2]
if task == hostile:
    claim = main / ".memento" / "claims" / f"{victim}.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if json.loads(claim.read_text()).get("stage") == "verifying":
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    target = main / ".memento" / "worktrees" / victim / name
    target.write_text(f"written by {hostile}\n")
    Path(done).write_text("")
    print(f"wrote {target}", flush=True)
Path(f"{task}.txt").write_text(f"done {task}\n")
print(f"{task} done", flush=True)
