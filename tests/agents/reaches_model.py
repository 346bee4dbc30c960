#!/usr/bin/env python3
"""Well-behaved agent: asks its model endpoint, and writes the answer as its task's file.

usage: reaches_model.py get URL          a GET through urllib (which follows the proxy variables)
       reaches_model.py connect HOST:PORT  a CONNECT tunnel through $HTTPS_PROXY, then a GET in it
       reaches_model.py env VAR PATH      a GET of $VAR + PATH (a CLI's base URL variable)

Writes the body it got to ``hello.txt`` (prefixed with ``done``); exits 1 when it got nothing.
"""

import os
import socket
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

mode = sys.argv[1]
if mode in ("get", "env"):
    url = sys.argv[2] if mode == "get" else os.environ[sys.argv[2]].rstrip("/") + sys.argv[3]
    body = urllib.request.urlopen(url, timeout=10).read()
else:
    proxy = urlsplit(os.environ["HTTPS_PROXY"])
    sock = socket.create_connection((proxy.hostname, proxy.port), timeout=10)
    target = sys.argv[2]
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(1)
    if b" 200 " not in reply.split(b"\r\n")[0]:
        sys.exit(f"proxy said {reply!r}")
    sock.sendall(f"GET /tunnel HTTP/1.0\r\nHost: {target}\r\n\r\n".encode())
    body = b""
    while chunk := sock.recv(4096):
        body += chunk
    body = body.split(b"\r\n\r\n", 1)[-1]
Path("hello.txt").write_bytes(b"done " + body + b"\n")
print("got", body[:80])
