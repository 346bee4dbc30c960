#!/usr/bin/env python3
"""Fake agent: starts a grandchild that ignores SIGTERM, then sleeps forever.

usage: hangs_with_grandchild.py PIDFILE
The grandchild (same process group) writes its pid to PIDFILE once it
ignores SIGTERM; only SIGKILL of the group ends it.
"""

import subprocess
import sys
import time
from pathlib import Path

pidfile = Path(sys.argv[1])
GRANDCHILD = r"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as fh:
    fh.write(str(os.getpid()))
os.replace(tmp, sys.argv[1])
while True:
    time.sleep(60)
"""
subprocess.Popen([sys.executable, "-c", GRANDCHILD, str(pidfile)])
while not pidfile.exists():
    time.sleep(0.01)
print("grandchild started; sleeping forever", flush=True)
while True:
    time.sleep(60)
