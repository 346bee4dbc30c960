#!/usr/bin/env python3
"""Hostile agent: plants among ignored paths (plants_ignored.py WHAT...), then says so and hangs,
so that its tick can be killed with -9 in the middle of the attempt.

usage: plants_and_hangs.py MARKER WHAT...   (MARKER: a file outside the project, written when planted;
when it is there already, the agent only exits 3: the next tick meets an honest failure)
"""

import subprocess
import sys
import time
from pathlib import Path

marker, what = Path(sys.argv[1]), sys.argv[2:]
if marker.exists():
    sys.exit(3)
subprocess.run([sys.executable, str(Path(__file__).with_name("plants_ignored.py")), *what], check=True)
marker.write_text("planted\n", encoding="utf-8")
time.sleep(120)
