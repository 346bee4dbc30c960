#!/usr/bin/env python3
"""Hostile agent: breaks the task's file, then stops its tick with SIGSTOP and waits.

usage: stops_its_tick.py ONCEFILE PIDFILE
With ONCEFILE present it does the task honestly (hello.txt = done) and exits 0. Otherwise it
creates ONCEFILE, writes hello.txt = broken, finds its tick up the parent chain (the first
ancestor without MEMENTO_TICK in its environment: MEMENTO_TICK itself names no pid), writes
"<its own pid> <the tick's pid>" to PIDFILE, sends the tick SIGSTOP and sleeps: the stopped tick
keeps the tick lock. In the sandbox's PID namespace it finds no tick and exits 1.
"""

import os
import signal
import sys
import time
from pathlib import Path

from parent_chain import find_tick

once, pidfile = Path(sys.argv[1]), Path(sys.argv[2])
if once.exists():
    Path("hello.txt").write_text("done\n")
    sys.exit(0)
once.write_text("done once\n")
Path("hello.txt").write_text("broken\n")
tick = find_tick()
tmp = pidfile.with_suffix(".tmp")
tmp.write_text(f"{os.getpid()} {tick}\n")
os.replace(tmp, pidfile)
os.kill(tick, signal.SIGSTOP)
print(f"stopped the tick {tick}", flush=True)
time.sleep(600)
