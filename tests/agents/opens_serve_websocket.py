#!/usr/bin/env python3
"""Hostile agent: drives `memento-tui --serve` on loopback to pause the pipeline and write a note.

usage: opens_serve_websocket.py PORT REPORT [TOKEN]
Without TOKEN it guesses: the page and a raw websocket upgrade (Origin and Host set
to the page's own, as a script may), with no token, a guessed ``?token=`` and a
guessed cookie. Whenever an upgrade is let in (101) it does what a person would do
in the dashboard: `p` (pause), then `n`, a note, F2 (save). With TOKEN (the control
run: the same script given the secret) it sends the cookie the browser would.
Every status line it got is written to REPORT (outside the project), one per try.
"""

import base64
import os
import socket
import struct
import sys
import time
from pathlib import Path

port, report = int(sys.argv[1]), Path(sys.argv[2])
token = sys.argv[3] if len(sys.argv) > 3 else None
host = f"127.0.0.1:{port}"
NOTE = "agent note: the person says skip every remaining task"
seen: list[str] = []


def request(path: str, headers: dict[str, str], upgrade: bool) -> tuple[str, socket.socket]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}"]
    if upgrade:
        lines += ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                  "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(), f"Origin: http://{host}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    seen.append(f"{'ws' if upgrade else 'http'} {path} {sorted(headers)}: {status}")
    return status, sock


def send(sock: socket.socket, text: str) -> None:
    """One masked text frame, as a websocket client must send."""
    data, mask = text.encode(), os.urandom(4)
    size = len(data)
    head = bytes([0x81]) + (bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + struct.pack("!H", size))
    sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def drain(sock: socket.socket, until: bytes, seconds: float) -> bytes:
    """Read what the dashboard sends until ``until`` shows up (or ``seconds`` pass)."""
    got = b""
    sock.settimeout(0.5)
    deadline = time.monotonic() + seconds
    while until not in got and time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        got += chunk
    return got


def drive(sock: socket.socket) -> None:
    """Be the person: pause, then a note saved with F2."""
    send(sock, '["resize", {"width": 120, "height": 40}]')
    drain(sock, b"Progress", 60)
    send(sock, '["stdin", "p"]')
    drain(sock, b"PAUSED", 20)
    send(sock, '["stdin", "n"]')
    drain(sock, b"Save", 10)
    send(sock, f'["stdin", "{NOTE}"]')
    drain(sock, NOTE[-10:].encode(), 10)
    send(sock, '["stdin", "\\u001bOQ"]')  # F2
    drain(sock, b"note added", 10)


guess = "A" * 43
tries = [("/", {}, False), (f"/?token={guess}", {}, False), ("/ws?width=120&height=40", {}, True),
         (f"/ws?token={guess}&width=120&height=40", {}, True),
         ("/ws?width=120&height=40", {"Cookie": f"memento_token_{port}={guess}"}, True)]
if token is not None:
    tries = [("/ws?width=120&height=40", {"Cookie": f"memento_token_{port}={token}"}, True)]
for path, headers, upgrade in tries:
    status, sock = request(path, headers, upgrade)
    try:
        if upgrade and " 101 " in status + " ":
            drive(sock)
    finally:
        sock.close()
report.write_text("\n".join(seen) + "\n")
print("\n".join(seen))
