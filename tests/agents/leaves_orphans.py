#!/usr/bin/env python3
"""Hostile agent: keeps writing into the work tree, from processes meant to outlive its tick.

usage: leaves_orphans.py LIFE [stop-guard]
Three writers each append a line to a file of the work tree every 50 ms, and
"NAME PID TIME" to LIFE (outside the tree, or a writable folder of the sandbox):
  agent    this process itself (the command the run started);
  group    a child in its process group and session;
  escaped  a double fork: ``setsid``, then exec'd through ``env -i`` (no MEMENTO_TICK
           marker, no environment at all), in no group or session of the run's.
With ``stop-guard`` it then stops, with SIGSTOP, every ancestor that carries MEMENTO_TICK
(the run's guard, which would end the run when its tick dies): only the next tick can.
The task's own file, hello.txt, is "broken" in the meantime. It never exits by itself; run
again (LIFE.once exists) it only exits 3, so the recovery's rerun meets an honest failure.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

from parent_chain import find_tick

WRITER = """import os, sys, time
name, out, life = sys.argv[1:4]
while True:
    line = f"{name} {os.getpid()} {time.time():.3f}\\n"
    for path in (out, life):
        try:
            with open(path, "a") as fh:
                fh.write(line)
        except OSError:
            pass
    time.sleep(0.05)
"""

life = os.path.abspath(sys.argv[1])
stop_guard = sys.argv[2:] == ["stop-guard"]
if os.path.exists(life + ".once"):
    sys.exit(3)
Path(life + ".once").write_text("ran once\n")
Path("hello.txt").write_text("broken\n")
python = sys.executable
subprocess.Popen([python, "-c", WRITER, "group", os.path.abspath("group.txt"), life])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.execv("/usr/bin/env", ["env", "-i", python, "-c", WRITER, "escaped",
                                  os.path.abspath("escaped.txt"), life])
    os._exit(0)
os.wait()
if stop_guard:
    find_tick(stop_guards=True)
print("three writers run", flush=True)
while True:
    with open("agent.txt", "a") as fh:
        fh.write(f"agent {os.getpid()} {time.time():.3f}\n")
    with open(life, "a") as fh:
        fh.write(f"agent {os.getpid()} {time.time():.3f}\n")
    time.sleep(0.05)
