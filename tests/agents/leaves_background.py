#!/usr/bin/env python3
"""Fake agent: leaves a background process running in its group and exits 0.

usage: leaves_background.py PIDFILE   (the background process writes its pid there)
"""

import subprocess
import sys
import time
from pathlib import Path

pidfile = Path(sys.argv[1])
BACKGROUND = r"""
import os, sys, time
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as fh:
    fh.write(str(os.getpid()))
os.replace(tmp, sys.argv[1])
while True:
    time.sleep(60)
"""
subprocess.Popen([sys.executable, "-c", BACKGROUND, str(pidfile)])
while not pidfile.exists():
    time.sleep(0.01)
print("left a server running", flush=True)
