#!/usr/bin/env python3
"""Hostile agent: looks for what leads back to its tick and to the person, then does its task.

usage: reaches_for_tmux.py OUT.json
Writes OUT.json: its environment, its parent chain (pid and start time of each ancestor), the
marker in the tick's own record (.memento/records/<ID>.json, readable unconfined). With $TMUX
set it opens a window in the person's tmux server (`tmux new-window -d`, a `sleep 600` that
would outlive the tick) and says whether it could. Then writes hello.txt = done (and its marker:
each tick's attempt changes the file).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

out = Path(sys.argv[1])
chain, pid = [], os.getpid()
while pid > 1:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        break
    fields = stat[stat.rfind(b")") + 2:].split()
    chain.append([pid, int(fields[19])])
    pid = int(fields[1])
record = Path(os.environ.get("MEMENTO_PROJECT", ".")) / ".memento" / "records" / f"{os.environ['MEMENTO_TASK_ID']}.json"
try:
    recorded = json.loads(record.read_text()).get("identity")
except (OSError, ValueError):
    recorded = None
opened = None
if os.environ.get("TMUX"):
    socket = os.environ["TMUX"].split(",")[0]
    proc = subprocess.run(["tmux", "-S", socket, "new-window", "-d", "-n", "agent", "sleep 600"],
                          capture_output=True, text=True)
    opened = proc.returncode == 0
out.write_text(json.dumps({"env": dict(os.environ), "chain": chain, "recorded": recorded, "tmux_opened": opened}))
Path("hello.txt").write_text(f"done {os.environ.get('MEMENTO_TICK', '')}\n")
