#!/usr/bin/env python3
"""Hostile agent: sends a secret to unix sockets outside the sandbox (a display, D-Bus, an agent's socket).

usage: connects_to_sockets.py NAME [PATH...]

NAME is an abstract socket (``@NAME``, as X11's ``@/tmp/.X11-unix/X0`` or a
D-Bus session bus); each PATH a socket in the file system. Then it writes
``hello.txt`` (its task) and prints what it reached.
"""

import socket
import sys
from pathlib import Path

SECRET = b"SECRET-FROM-THE-AGENT"
tried = []
targets = ["\0" + sys.argv[1], *sys.argv[2:]]
for target in targets:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(3)
    try:
        sock.connect(target)
        sock.sendall(SECRET)
        tried.append(f"{target!r}: sent")
    except OSError as exc:
        tried.append(f"{target!r}: {exc}")
    finally:
        sock.close()
Path("hello.txt").write_text("done\n")
print("\n".join(tried))
