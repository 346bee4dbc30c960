"""sandbox/inner.py (SPEC §13): the forwarder inside the sandbox's network namespace — its command
line, the loopback listener relaying each connection to proxy.py's unix socket (waited for while
it is still being made), the proxy variables the command gets, and an exit like the command's.
Its run inside bwrap is judged in test_network.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memento_core.sandbox import inner

INNER = Path(inner.__file__)


def test_the_command_line_names_forwards_the_proxy_and_the_command():
    forwards, proxy, command = inner.parse(["--forward", "localhost:8080=/s/a", "--forward", "[::1]:11434=/s/b",
                                            "--proxy", "/s/p", "--", "claude", "-p", "--", "x"])
    assert forwards == [("localhost", 8080, "/s/a"), ("::1", 11434, "/s/b")]
    assert (proxy, command) == ("/s/p", ["claude", "-p", "--", "x"])
    with pytest.raises(SystemExit, match="unknown option --port"):
        inner.parse(["--port", "1", "--", "x"])


def test_run_alone_it_refuses_a_missing_command_before_doing_anything():
    proc = subprocess.run([sys.executable, "-I", "-S", str(INNER), "--proxy", "/nowhere", "--"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "inner.py: no command after --" in proc.stderr


def test_the_command_gets_the_proxy_for_everything_but_loopback(monkeypatch):
    monkeypatch.setenv("KEEP", "kept")
    env = inner._env(4711)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
        assert env[name] == "http://127.0.0.1:4711"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1" and env["KEEP"] == "kept"
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    assert "HTTPS_PROXY" not in inner._env(None)


def stop(listener: socket.socket, thread: threading.Thread) -> None:
    """Close ``listener`` and end the thread that accepts on it. Shut down first, which wakes its
    accept: a thread left there took a later test's connections (the descriptor's number is used
    again: a test of test_network.py saw its proxy's call go to this file's relay, and its agent
    waited out its 10 s)."""
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    thread.join(timeout=10)
    listener.close()
    assert not thread.is_alive()


def serving(listener: socket.socket, path: str) -> threading.Thread:
    """inner.py's relay from ``listener`` to the unix socket at ``path``, in a thread."""
    thread = threading.Thread(target=inner._serve, args=(listener, path), daemon=True)
    thread.start()
    return thread


def upper_server(path: str, ready: threading.Event | None = None) -> tuple[socket.socket, threading.Thread]:
    """A unix socket at ``path`` answering each connection with what it read, upper-cased, and its thread."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(4096):
                    data += chunk
                conn.sendall(data.upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


def exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(data)
        client.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := client.recv(4096):
            reply += chunk
    return reply


def test_a_loopback_connection_is_relayed_both_ways_to_the_unix_socket(tmp_path):
    path = str(tmp_path / "proxy.sock")
    server = upper_server(path)
    listener = inner._listen("127.0.0.1", 0)
    relaying = serving(listener, path)
    try:
        big = os.urandom(3 * inner.CHUNK).hex().encode()
        assert exchange(listener.getsockname()[1], big) == big.upper()
        assert exchange(listener.getsockname()[1], b"again") == b"AGAIN"
    finally:
        stop(listener, relaying)
        stop(*server)


def test_a_socket_still_being_made_is_waited_for(tmp_path):
    path = str(tmp_path / "late.sock")
    listener = inner._listen("127.0.0.1", 0)
    relaying = serving(listener, path)
    client = socket.create_connection(("127.0.0.1", listener.getsockname()[1]), timeout=30)
    server = None
    try:
        client.sendall(b"early words")
        client.shutdown(socket.SHUT_WR)
        time.sleep(0.3)  # the forwarder has found no socket yet (tried every 5 ms)
        server = upper_server(path)  # proxy.py's socket appears after the connection came
        reply = b""
        while chunk := client.recv(4096):
            reply += chunk
        assert reply == b"EARLY WORDS"
    finally:
        client.close()
        stop(listener, relaying)
        if server is not None:
            stop(*server)


EXIT_LIKE = """
import os, sys
sys.path.insert(0, {folder!r})
import inner
pid = os.posix_spawn("/bin/sh", ["sh", "-c", sys.argv[1]], dict(os.environ))
inner._exit_like(os.waitpid(pid, 0)[1])
"""


@pytest.mark.parametrize(("script", "code"), [("exit 3", 3), ("exit 0", 0), ("kill -TERM $$", -15),
                                              ("kill -USR1 $$", -10)])
def test_it_exits_as_its_command_did_by_code_or_by_the_same_signal(script, code):
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", EXIT_LIKE.format(folder=str(INNER.parent)), script],
                          timeout=60)
    assert proc.returncode == code
