#!/usr/bin/env python3
"""Fake agent: records its pid in PIDFILE, then sleeps (a slow but healthy worker).

usage: sleeps.py PIDFILE [SECONDS]
"""

import os
import sys
import time
from pathlib import Path

pidfile = Path(sys.argv[1])
tmp = pidfile.with_suffix(".tmp")
tmp.write_text(str(os.getpid()))
os.replace(tmp, pidfile)
print("sleeping", flush=True)
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 3600)
