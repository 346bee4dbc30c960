"""`memento-tui --serve`: the real server in a subprocess, fetched over HTTP, run in a real headless Chromium.

The page draws the dashboard with xterm.js into canvases, so the DOM holds no
dashboard text; memento_tui/browser.py reads what the page received over its
websocket (through the DevTools protocol), checks the page wrote it into the
terminal and that the terminal's canvas is painted. The browser part skips,
with the reason, only when Chromium is missing or cannot start here.
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from memento_tui.browser import (
    BrowserUnavailable,
    Chromium,
    free_port,
    look_at,
    serve_process,
    stop_group,
    wait_for_http,
)
from memento_tui.serve import app_command, exposure_warning, is_loopback, refusal


@pytest.fixture
def served(demo: Path, tmp_path: Path):
    """The demo served on a free port: (url, the server process); every process is stopped after."""
    port = free_port()
    proc = serve_process(demo, port, tmp_path / "serve.log")
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", proc)
        yield f"http://127.0.0.1:{port}/", proc
    finally:
        stop_group(proc)


def _served_output(demo: Path, log: Path, *extra: str) -> str:
    """Start the server, wait until it answers, stop it: what it printed."""
    port = free_port()
    proc = serve_process(demo, port, log, *extra)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", proc)
    finally:
        stop_group(proc)
    return log.read_text(encoding="utf-8", errors="replace").replace(f":{port}", ":PORT").replace(f" {port}:", " PORT:")


# The project's name (the header), two panes, a task of the plan, the footer.
WORDS = ("calc (Memento demo)", "Progress", "Tasks", "T-101", "Quit")


def _chromium() -> Chromium:
    try:
        return Chromium().start()
    except BrowserUnavailable as exc:
        pytest.skip(f"no usable headless Chromium ({exc}); .ci/run installs Debian's `chromium`")


def test_the_served_dashboard_runs_in_a_real_browser(served, tmp_path: Path):
    url, proc = served
    with urllib.request.urlopen(url, timeout=10) as r:
        page = r.read().decode()
    port = url.rsplit(":", 1)[1].strip("/")
    assert 'class="textual-terminal"' in page
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    browser = _chromium()
    try:
        view = look_at(url, expect=WORDS, browser=browser)
    finally:
        browser.close()
    (tmp_path / "served.png").write_bytes(view.screenshot)
    missing = [w for w in WORDS if w not in view.text]
    assert not missing, f"the page never received {missing} of the dashboard: {view.text[:800]!r}"
    assert "-first-byte" in view.body_class, "the page's script never wrote the stream into the terminal"
    assert view.colours >= 8, f"the terminal canvas is blank ({view.colours} colours)"
    assert view.screenshot.startswith(b"\x89PNG")
    assert proc.poll() is None, "the server died while the browser was looking"


def test_the_server_refuses_other_hosts_and_other_origins(served):
    url, _ = served
    port = int(url.rsplit(":", 1)[1].strip("/"))
    # DNS rebinding: a name that resolved to 127.0.0.1 but is not this machine's.
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/", headers={"Host": f"evil.example:{port}"})
    assert conn.getresponse().status == 403
    conn.close()
    # Another site's page opening the dashboard's websocket through the person's browser.
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/ws", headers={
        "Host": f"127.0.0.1:{port}", "Origin": "http://evil.example", "Connection": "Upgrade",
        "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    assert conn.getresponse().status == 403
    conn.close()


def test_serve_is_loopback_only_unless_told_and_warns_then(demo: Path, tmp_path: Path):
    out = _served_output(demo, tmp_path / "default.log")
    assert f"[ok] serving the dashboard of {demo} on http://127.0.0.1:PORT" in out
    assert "[warn]" not in out
    out = _served_output(demo, tmp_path / "open.log", "--host", "0.0.0.0")
    assert "[warn] serving on 0.0.0.0:PORT" in out and "ssh -L PORT:127.0.0.1:PORT" in out


def test_loopback_and_refusal_rules():
    for host in ("127.0.0.1", "localhost", "::1", "[::1]:8566", "127.0.0.1:8566", "LOCALHOST:1", "127.1.2.3"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "192.168.1.5", "evil.example", "localhost.evil.example:80", "::"):
        assert not is_loopback(host), host
    assert exposure_warning("127.0.0.1", 1) is None and exposure_warning("0.0.0.0", 1)
    assert refusal("127.0.0.1:9000", "http://127.0.0.1:9000", loopback_bound=True) is None  # an SSH tunnel
    assert refusal("127.0.0.1:9000", None, loopback_bound=True) is None
    assert refusal("127.0.0.1:9000", "http://localhost:9000", loopback_bound=True)
    assert refusal("shop.example:8566", None, loopback_bound=False) is None
    assert "python" in app_command(Path("/a b/c"), polling=True) and "'/a b/c' --polling" in app_command(
        Path("/a b/c"), polling=True)


def test_serve_without_a_workspace_and_host_without_serve(tmp_path: Path):
    r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--serve", str(tmp_path / "nothing")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("[error]") and "no such directory" in r.stderr
    r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--host", "0.0.0.0", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--host and --port go with --serve" in r.stderr
    r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--serve", "--port", "70000", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "a port is a number from 1 to 65535, got '70000'" in r.stderr


def test_a_taken_port_is_one_clear_error(demo: Path, tmp_path: Path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--serve", "--port", str(port), str(demo)],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"[error] cannot serve on 127.0.0.1:{port}: " in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
