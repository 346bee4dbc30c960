#!/usr/bin/env python3
"""Hostile fake agent: puts a FIFO (or a socket) where Memento reads a file, then exits.

usage: makes_fifos.py [--socket] [--only] PATH [PATH...]

Each PATH (relative to the project) is removed if it is there and made again as a FIFO (or, with
``--socket``, a listening Unix socket's file), its folder made first. Memento opening one to read
would block forever (a FIFO with no writer) or fail oddly (a socket). Each outcome is printed
(DID or refused); the agent then writes hello.txt "done" so the task looks done (not with
``--only``: an architect's or a reviewer's run), and exits 0.
"""

import os
import socket
import sys
from pathlib import Path

args = sys.argv[1:]
as_socket = "--socket" in args
only = "--only" in args
args = [a for a in args if a not in ("--socket", "--only")]
held = []
for raw in args:
    path = Path(raw)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            path = path / "request.json"  # a folder Memento reads every file of: a FIFO inside
        elif os.path.lexists(path):
            os.unlink(path)
        if as_socket:
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(str(path))
            held.append(sock)
        else:
            os.mkfifo(path)
        print(f"DID {raw}", flush=True)
    except OSError as exc:
        print(f"refused {raw}: {exc}", flush=True)
if only:
    sys.exit(0)
try:
    Path("hello.txt").write_text("done\n", encoding="utf-8")
except OSError as exc:
    print(f"refused hello.txt: {exc}", flush=True)
sys.exit(0)
