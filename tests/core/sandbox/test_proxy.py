"""The network proxy of a sandboxed run (memento_core/sandbox/proxy.py, SPEC §13) against request
lines an agent may send it: malformed hosts and ports get an answer (400, or 502 when the name
cannot be looked up), never an unanswered close, and the proxy goes on serving. The real proxy
runs as its own process, as a run starts it, with a stand-in for bwrap that only says it started;
a real socket client talks to it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core.sandbox import proxy

# Stands in for bwrap: tells the proxy the sandbox started (start.sock), prints the proxy's
# folder (given on descriptor 3) and waits until its stdin closes. The proxy puts its
# --ro-bind masks after "--unshare-net": they are this script's arguments.
_SANDBOX = """
import os, socket, sys
folder = os.readlink("/proc/self/fd/3")
s = socket.socket(socket.AF_UNIX); s.connect(os.path.join(folder, "start.sock")); s.close()
print(folder, flush=True)
sys.stdin.read()
"""


def running_proxy(env: dict[str, str]):
    """The folder of a running proxy.py allowing ``*.example.com`` and ``localhost:1``; stopped after."""
    command = [sys.executable, "-I", "-S", proxy.__file__, "--tag", "hostile", "--allow", "*.example.com",
               "--allow", "localhost:1", "--", sys.executable, "-c", _SANDBOX, "--unshare-net"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=env)
    try:
        folder = proc.stdout.readline().strip()
        assert folder.startswith("/tmp/memento-net-hostile-"), proc.stderr.read()
        yield Path(folder)
        assert proc.poll() is None, "the proxy died"
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert not Path(folder).exists()


@pytest.fixture(scope="module")
def proxy_folder():
    """A proxy that looks names up itself (no person's proxy)."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    yield from running_proxy(env)


@pytest.fixture(scope="module")
def chained_folder():
    """A proxy chained to a person's proxy on a loopback port nothing listens on: an allowed,
    well-formed name is never looked up here (a test reaches no network), it gets a 502."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    yield from running_proxy({**env, "HTTPS_PROXY": f"http://127.0.0.1:{port}"})


def ask(folder: Path, request: bytes) -> bytes:
    """What the proxy answers ``request`` with, up to its close."""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(str(folder / "proxy.sock"))
        client.sendall(request)
        got = b""
        while chunk := client.recv(65536):
            got += chunk
    return got


def status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), f"no answer, only {answer!r}"
    return int(answer[9:12])


def still_serving(folder: Path) -> None:
    """A refused host still gets its 403: the proxy is up and answers."""
    assert status(ask(folder, b"CONNECT evil.invalid:443 HTTP/1.1\r\n\r\n")) == 403


@pytest.mark.parametrize("target", [
    "a..example.com:443",  # an empty label: the name cannot be encoded to be looked up
    ".example.com:443",
    "x" * 64 + ".example.com:443",  # a label longer than 63
    ("a" * 60 + ".") * 5 + "example.com:443",  # a name longer than 253
    "\u00e9t\u00e9.example.com:443",  # not ASCII (the line is read as Latin-1)
    "a.example.com:\u00b2",  # a digit to str.isdigit, none to int()
    "a.example.com:0", "a.example.com:65536", "a.example.com:-1", "a.example.com:",
    "a.example.com:99999999999999999999999",
    "a.example.com\x00.evil:443", "[a.example.com]:443", "[::1%eth0]:443", "[]:443",
], ids=lambda t: repr(t)[:40])
def test_a_malformed_connect_gets_an_answer(proxy_folder, target):
    answer = ask(proxy_folder, f"CONNECT {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode("latin-1"))
    assert status(answer) in (400, 403)  # refused before any lookup
    still_serving(proxy_folder)


def test_an_empty_label_under_a_wildcard_is_a_bad_request(proxy_folder):
    """The issue's own: ``*.example.com`` allowed, ``a..example.com`` asked."""
    answer = ask(proxy_folder, b"CONNECT a..example.com:443 HTTP/1.1\r\n\r\n")
    assert status(answer) == 400 and b"a..example.com" in answer
    still_serving(proxy_folder)


_LABEL = st.one_of(st.text(alphabet="abz09-", min_size=0, max_size=70),
                   st.text(alphabet=st.characters(max_codepoint=0xFF, blacklist_characters="\r\n "), max_size=8))
_HOST = st.one_of(st.lists(_LABEL, min_size=1, max_size=5).map(".".join).map(lambda h: h + ".example.com"),
                  st.text(alphabet=st.characters(max_codepoint=0xFF, blacklist_characters="\r\n "), max_size=20),
                  st.sampled_from(["[::1]", "[", "]", "[::1", "::1", "127.1", "localhost", "LOCALHOST."]))
_PORT = st.one_of(st.integers(-5, 70000).map(str), st.sampled_from(["", "443", "\u00b9", "0x1bb", " 443", "+443"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=_HOST, port=_PORT, method=st.sampled_from(["CONNECT", "GET"]))
def test_any_request_line_gets_an_answer(chained_folder, host, port, method):
    target = f"{host}:{port}" if method == "CONNECT" else f"http://{host}:{port}/"
    answer = ask(chained_folder, f"{method} {target} HTTP/1.1\r\n\r\n".encode("latin-1"))
    assert status(answer) in (400, 403, 502)  # 502: nothing listens on localhost:1 nor the chained proxy
    still_serving_chained = ask(chained_folder, b"CONNECT a.example.com:443 HTTP/1.1\r\n\r\n")
    assert status(still_serving_chained) == 502  # allowed, well formed: on to the chained proxy


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=_HOST, port=_PORT, method=st.sampled_from(["CONNECT", "GET"]))
def test_any_request_line_gets_an_answer_heavy(chained_folder, host, port, method):
    test_any_request_line_gets_an_answer.hypothesis.inner_test(chained_folder, host, port, method)


def test_a_timed_out_run_stopped_with_its_group_ends_like_its_sandbox_without_a_traceback():
    """At an agent's timeout the tick sends SIGTERM to the run's whole process group: the proxy
    and its sandbox get it at once. The proxy's handler, passing the signal on, then meets a child
    its waitpid already reaped; it used to die there with a ProcessLookupError traceback in every
    timed-out sandboxed attempt's log (and no exit status of its child)."""
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    command = [sys.executable, "-I", "-S", proxy.__file__, "--tag", "timeout", "--", sys.executable, "-c",
               _SANDBOX, "--unshare-net"]
    for _ in range(5):  # the race is the tick's: give it five chances
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, env=env)
        folder = proc.stdout.readline().strip()
        assert folder.startswith("/tmp/memento-net-timeout-"), proc.stderr.read()
        time.sleep(0.2)  # the proxy is in its waitpid
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        proc.stdin.close()
        assert "Traceback" not in err, err
        assert proc.returncode == -signal.SIGTERM  # ended like its sandbox: by the signal
        assert not Path(folder).exists()
