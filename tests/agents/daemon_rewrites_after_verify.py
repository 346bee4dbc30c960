#!/usr/bin/env python3
"""Hostile agent: does its task, and leaves a detached (setsid, double-forked) daemon that
rewrites the file the moment verify has passed, before the tick commits.

usage: daemon_rewrites_after_verify.py PATH FORGED PIDFILE
The daemon writes its pid to PIDFILE, waits (at most 20 s) for the tick log's
"verify exit code: 0", writes FORGED into PATH, then appends " done" to PIDFILE and exits.
"""

import os
import sys
import time
from pathlib import Path

path, forged, pidfile = sys.argv[1], sys.argv[2], sys.argv[3]
Path(path).write_text("done\n", encoding="utf-8")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        Path(pidfile).write_text(str(os.getpid()), encoding="utf-8")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if any("verify exit code: 0" in log.read_text(errors="replace") for log in Path("logs").glob("tick_*.log")):
                break
            time.sleep(0.001)
        Path(path).write_text(forged + "\n", encoding="utf-8")
        with open(pidfile, "a", encoding="utf-8") as fh:
            fh.write(" done")
        os._exit(0)
    os._exit(0)
os.wait()
print("left a daemon behind")
