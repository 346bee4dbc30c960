#!/usr/bin/env python3
"""Hostile fake agent: leaves a detached (setsid, double-forked) daemon behind, then does its task.

usage: leaves_marked_daemon.py MARKER

The daemon's command line carries MARKER, so a test can look for it in
/proc from outside a PID namespace. It keeps trying to rewrite hello.txt
and guarded.txt every 10 ms for as long as it lives.
"""

import os
import subprocess
import sys
from pathlib import Path

DAEMON = r"""
import os, sys, time
from pathlib import Path
while True:
    for name, text in (("hello.txt", "swapped by the daemon\n"), ("guarded.txt", "daemon\n")):
        try:
            Path(name).write_text(text)
        except OSError:
            pass
    time.sleep(0.01)
"""
marker = sys.argv[1]
Path("hello.txt").write_text("done\n", encoding="utf-8")
if os.fork() == 0:
    os.setsid()
    subprocess.Popen([sys.executable, "-c", DAEMON, marker], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os._exit(0)
os.wait()
print("left a daemon", flush=True)
