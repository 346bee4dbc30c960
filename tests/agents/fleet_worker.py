#!/usr/bin/env python3
"""Fake agent of one host in a fleet: does task T-N by writing out/N.txt (its id inside).

usage: fleet_worker.py TASK_ID [FAIL_RATE] [SLEEP_FILE] [WAIT_FILE]
FAIL_RATE (0..1): how often it exits 1 having written nothing (a retry for the host to
push). SLEEP_FILE: when that file exists, the agent records its pid in it and sleeps
(a host killed mid-task). WAIT_FILE: the agent waits until that file exists (a
person pushes meanwhile). "-" skips an argument.
"""

import os
import random
import sys
import time
from pathlib import Path

task = sys.argv[1]
rate = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
sleep_file = Path(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] != "-" else None
wait_file = Path(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "-" else None
while wait_file is not None and not wait_file.exists():
    time.sleep(0.05)
if sleep_file is not None and sleep_file.exists():
    sleep_file.write_text(str(os.getpid()))
    time.sleep(3600)
if random.SystemRandom().random() < rate:
    print(f"{task}: failing on purpose")
    sys.exit(1)
out = Path("out", task.split("-")[1] + ".txt")
out.parent.mkdir(exist_ok=True)
out.write_text(task + "\n", encoding="utf-8")
print(f"wrote {out}")
