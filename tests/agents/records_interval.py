#!/usr/bin/env python3
"""Fake agent for parallel phases: records when it starts and ends, then does its task.

usage: records_interval.py DIR SHARED WAITS

Appends `<TASK> start <ns>` to DIR/intervals.txt as it starts, writes DIR/<TASK>.started,
and, when WAITS (`T-1=T-3,T-3=T-1`) names its task, waits (at most 60 s) until the task it
names has started too: two tasks that may run side by side are seen running side by side.
Then a task listed in SHARED (`T-1,T-2`) replaces the first line of shared.txt with its id
(two such tasks run at once would conflict at their merge); every task writes <TASK>.txt.
Last it appends `<TASK> end <ns>`.
"""

import os
import sys
import time
from pathlib import Path

scratch, shared, waits = Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
task = os.environ["MEMENTO_TASK_ID"]


def record(what: str) -> None:
    fd = os.open(scratch / "intervals.txt", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{task} {what} {time.time_ns()}\n".encode())
    finally:
        os.close(fd)


record("start")
(scratch / f"{task}.started").write_text(f"{os.getpid()}\n")
partner = dict(pair.split("=") for pair in waits.split(",") if "=" in pair).get(task)
deadline = time.monotonic() + 60
while partner and not (scratch / f"{partner}.started").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
if task in shared:
    path = Path("shared.txt")
    path.write_text("\n".join([task, *path.read_text().splitlines()[1:]]) + "\n")
Path(f"{task}.txt").write_text(f"done {task}\n")
record("end")
print(f"{task} done", flush=True)
