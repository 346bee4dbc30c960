#!/usr/bin/env python3
"""Fake agent for parallel workers: announces itself, may wait, then does its task.

usage: parallel_task.py DIR [own|shared|learns|both|deletes] [SECONDS]

Writes DIR/<TASK>.started (its pid and its cwd) as it starts. While DIR/hold
exists it waits for DIR/go (the test looks at the main work tree meanwhile).
Then sleeps SECONDS (default 0) and writes its work into its cwd: `own`
writes <TASK>.txt, `shared` replaces the first line of shared.txt with the
task id (two such tasks conflict); `learns` writes <TASK>.txt and a memory
entry knowledge/lessons/<task>.md with `memento memory write`; `both` writes
<TASK>.txt and changes shared.txt as `shared` does; `deletes` writes <TASK>.txt
and deletes shared.txt.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

scratch = Path(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "own"
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
task = os.environ["MEMENTO_TASK_ID"]
tmp = scratch / f".{task}.tmp"
tmp.write_text(f"{os.getpid()}\n{os.getcwd()}\n")
os.replace(tmp, scratch / f"{task}.started")
print(f"{task} started in {os.getcwd()}", flush=True)
deadline = time.monotonic() + 60
while (scratch / "hold").exists() and not (scratch / "go").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(seconds)
if mode in ("shared", "both"):
    path = Path("shared.txt")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([task, *lines[1:]]) + "\n")
if mode != "shared":
    Path(f"{task}.txt").write_text(f"done {task}\n")
if mode == "deletes":
    Path("shared.txt").unlink()
if mode == "learns":  # and keeps a lesson, through `memento memory write` (queued in a sandbox)
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli", "memory", "write",
                           f"knowledge/lessons/{task.lower()}.md", "--summary", f"lesson of {task}"],
                          input=f"what {task} learned\n", text=True, capture_output=True, env=os.environ)
    print(proc.stdout, proc.stderr)
print(f"{task} done", flush=True)
