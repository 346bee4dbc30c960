"""`memento-tui --serve`: the real server in a subprocess, fetched over HTTP, run in a real headless Chromium.

The page draws the dashboard with xterm.js into canvases, so the DOM holds no
dashboard text; memento_tui/browser.py reads what the page received over its
websocket (through the DevTools protocol), checks the page wrote it into the
terminal and that the terminal's canvas is painted. The browser part skips,
with the reason, only when Chromium is missing or cannot start here.
"""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from memento_tui.browser import (
    BrowserUnavailable,
    Chromium,
    free_port,
    look_at,
    serve_process,
    stop_group,
    wait_for_http,
)
from memento_tui.serve import app_command, exposure_warning, has_token, is_loopback, refusal
from tests.tui.screens.test_dialogs import ask

TOKEN = "test-token-0123456789abcdef"
AGENTS = Path(__file__).resolve().parents[1] / "agents"


def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "serve.token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture
def served(demo: Path, tmp_path: Path):
    """The demo served on a free port with TOKEN: (url, the server process); every process is stopped after."""
    port = free_port()
    proc = serve_process(demo, port, tmp_path / "serve.log", "--token-file", str(token_file(tmp_path)))
    try:
        wait_for_http(f"http://127.0.0.1:{port}/?token={TOKEN}", proc)
        yield f"http://127.0.0.1:{port}/", proc
    finally:
        stop_group(proc)


def printed_url(log: Path, proc: subprocess.Popen) -> str:
    """The URL with the fresh token the server printed (waits for the line)."""
    for _ in range(600):
        m = re.search(r"\[ok\] open (http://\S+\?token=[\w-]+)", log.read_text(errors="replace"))
        if m:
            return m.group(1)
        assert proc.poll() is None, log.read_text(errors="replace")
        time.sleep(0.1)
    raise AssertionError(f"the server printed no URL: {log.read_text(errors='replace')}")


def children(proc: subprocess.Popen) -> list[int]:
    """The processes the server started (a dashboard per websocket it let in)."""
    pids: list[int] = []
    for task in Path(f"/proc/{proc.pid}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def _served_output(demo: Path, log: Path, *extra: str) -> str:
    """Start the server, wait until it answers, stop it: what it printed."""
    port = free_port()
    proc = serve_process(demo, port, log, *extra)
    try:
        wait_for_http(printed_url(log, proc), proc)
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


def test_the_served_dashboard_runs_in_a_real_browser(demo: Path, tmp_path: Path):
    """The browser opens the URL the server printed; the page's websocket carries no token: the cookie does."""
    port = free_port()
    proc = serve_process(demo, port, tmp_path / "serve.log")
    try:
        url = printed_url(tmp_path / "serve.log", proc)
        assert url.startswith(f"http://127.0.0.1:{port}/?token=") and len(url.split("=", 1)[1]) >= 40
        wait_for_http(url, proc)
        _look_in_the_browser(url, proc, port, tmp_path)
    finally:
        stop_group(proc)


def _look_in_the_browser(url: str, proc: subprocess.Popen, port: int, tmp_path: Path) -> None:
    with urllib.request.urlopen(url, timeout=10) as r:
        page = r.read().decode()
        cookie = r.headers["Set-Cookie"]
    assert 'class="textual-terminal"' in page
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and f"memento_token_{port}=" in cookie
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
    conn.request("GET", f"/?token={TOKEN}", headers={"Host": f"evil.example:{port}"})
    assert conn.getresponse().status == 403
    conn.close()
    # Another site's page opening the dashboard's websocket through the person's browser.
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/ws", headers={
        "Host": f"127.0.0.1:{port}", "Origin": "http://evil.example", "Cookie": f"memento_token_{port}={TOKEN}", "Connection": "Upgrade",
        "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    assert conn.getresponse().status == 403
    conn.close()


def _status(port: int, path: str, headers: dict[str, str] | None = None, *, upgrade: bool = False):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    head = {"Host": f"127.0.0.1:{port}", **(headers or {})}
    if upgrade:
        head |= {"Origin": f"http://127.0.0.1:{port}", "Connection": "Upgrade", "Upgrade": "websocket",
                 "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    conn.request("GET", path, headers=head)
    response = conn.getresponse()
    out = (response.status, response.getheader("Set-Cookie") or "", response.read().decode(errors="replace"))
    conn.close()
    return out


def test_without_the_token_page_websocket_and_files_answer_403_and_no_dashboard_starts(served, tmp_path: Path):
    url, proc = served
    port = int(url.rsplit(":", 1)[1].strip("/"))
    wrong = {"Cookie": f"memento_token_{port}={TOKEN[:-1]}x"}
    for path, headers, upgrade in (
        ("/", {}, False), ("/?token=", {}, False), (f"/?token={TOKEN[:-1]}", {}, False), ("/", wrong, False),
        ("/static/js/textual.js", {}, False), ("/download/x", {}, False),
        ("/ws?width=80&height=24", {}, True), ("/ws", wrong, True), (f"/ws?token={TOKEN}x", {}, True),
        # another port's cookie is another server's
        ("/ws", {"Cookie": f"memento_token_{port + 1}={TOKEN}"}, True),
    ):
        status, cookie, body = _status(port, path, headers, upgrade=upgrade)
        assert status == 403 and "no valid token" in body and not cookie, (path, headers, status)
    assert children(proc) == [], "a refused websocket started a dashboard"
    # The token in the query or the cookie lets in; only a query sets the cookie.
    status, cookie, body = _status(port, f"/?token={TOKEN}")
    assert status == 200 and 'class="textual-terminal"' in body
    assert cookie.startswith(f"memento_token_{port}={TOKEN};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, cookie, _ = _status(port, "/", {"Cookie": f"memento_token_{port}={TOKEN}"})
    assert status == 200 and not cookie
    # The server's output never shows the token (it came from a file: no URL carries it either).
    stop_group(proc)
    out = (tmp_path / "serve.log").read_text(errors="replace")
    assert TOKEN not in out and "token=…" in out and f"?token=TOKEN, TOKEN the line in {tmp_path}" in out


def _hostile_workspace(demo: Path, port: int, report: Path, *extra: str) -> None:
    """The demo, its agent tests/agents/opens_serve_websocket.py through the `command` preset, unconfined:
    the agent reaches loopback, so only the token stands between it and the dashboard."""
    command = " ".join([sys.executable, str(AGENTS / "opens_serve_websocket.py"), str(port), str(report), *extra])
    (demo / "memento.toml").write_text(f'[agent]\npreset = "command"\ncommand = """{command}"""\n'
                                       f'timeout = "3min"\n[sandbox]\nmode = "none"\n')
    subprocess.run(["git", "commit", "-qam", "the hostile agent"], cwd=demo, check=True)


def _tick(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(root)], env=env,
                          capture_output=True, text=True, timeout=300)


def _notes_and_mode(root: Path) -> tuple[str, list[str]]:
    from memento_core.notes import parse_notes
    from memento_core.plan.scan import parse_plan

    return parse_plan(root / "docs" / "MASTER_PLAN.md").meta.tick_mode, [
        n.text for n in parse_notes(root / "docs" / "HUMAN_NOTES.md")]


def test_an_agent_without_the_token_cannot_pause_the_pipeline_or_write_a_note(served, demo: Path, tmp_path: Path):
    url, proc = served
    port = int(url.rsplit(":", 1)[1].strip("/"))
    report = tmp_path / "agent-report.txt"
    _hostile_workspace(demo, port, report)
    mode, notes = _notes_and_mode(demo)
    ran = _tick(demo)
    assert ran.returncode in (0, 1), ran.stderr
    assert _notes_and_mode(demo) == (mode, notes) == ("auto", notes)
    assert not any("agent note" in n for n in notes)
    assert children(proc) == [], "a refused websocket started a dashboard"
    tries = report.read_text().splitlines()  # it did try: the server refused each
    assert len(tries) == 5 and all(t.endswith("403 Forbidden") for t in tries), tries


def test_serve_demo_dashboards_tick_every_3s(tmp_path: Path):
    """`--serve --demo` runs each tab's dashboard on the demo's 3 s interval, not memento.toml's minute."""
    import asyncio

    import aiohttp

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "memento_tui.app", "--serve", "--demo", "--port", str(port),
                             "--token-file", str(token_file(tmp_path))], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)

    async def open_tab() -> list[str]:
        async with aiohttp.ClientSession(cookies={f"memento_token_{port}": TOKEN}) as session, \
                session.ws_connect(f"http://127.0.0.1:{port}/ws?width=80&height=24") as ws:
            await ws.send_str('["resize", {"width": 80, "height": 24}]')
            commands: list[str] = []
            for _ in range(300):  # a forked child shows the server's own command until it execs
                commands = [_cmdline(pid) for pid in children(proc)]
                if any("--serve" not in c for c in commands if c):
                    break
                await asyncio.sleep(0.1)
            return commands

    try:
        wait_for_http(f"http://127.0.0.1:{port}/?token={TOKEN}", proc)
        commands = asyncio.run(open_tab())
    finally:
        stop_group(proc)
    assert any("memento_tui.app" in c and "--auto-tick --interval 3s" in c for c in commands), commands


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_the_same_agent_given_the_token_does_pause_and_write(served, demo: Path, tmp_path: Path):
    """The control: the hostile script is able; only the missing token stopped it above."""
    url, proc = served
    port = int(url.rsplit(":", 1)[1].strip("/"))
    report = tmp_path / "agent-report.txt"
    _hostile_workspace(demo, port, report, TOKEN)
    ran = _tick(demo)
    assert ran.returncode in (0, 1), ran.stderr
    assert report.read_text().split(": ", 1)[1].startswith("HTTP/1.1 101"), report.read_text()
    mode, notes = _notes_and_mode(demo)
    assert mode == "paused" and any("agent note: the person says skip" in n for n in notes), (mode, notes)


@pytest.mark.parametrize("content, why", [
    (None, "no such file"), ("", "the file is empty"), ("\n \n", "the file is empty"),
    ("short", "one line of 16 or more"), ("a" * 20 + "\n" + "b" * 20, "got 2 line(s)"),
    ("has spaces in it but long enough", "one line of 16 or more"), ("dir", "cannot read it"),
])
def test_a_bad_token_file_is_one_clear_error(demo: Path, tmp_path: Path, content, why):
    path = tmp_path / "token"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--serve", "--port", str(free_port()),
                        "--token-file", str(path), str(demo)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith(f"[error] {path}") and why in r.stderr, r.stderr
    assert "Traceback" not in r.stderr + r.stdout and "serving" not in r.stdout


def test_token_rules():
    assert has_token("a" * 20, None, "a" * 20) and has_token(None, "a" * 20, "a" * 20)
    assert not has_token(None, None, "a" * 20) and not has_token("a" * 19, "b" * 20, "a" * 20)


def test_serve_is_loopback_only_unless_told_and_warns_then(demo: Path, tmp_path: Path):
    out = _served_output(demo, tmp_path / "default.log")
    assert f"[ok] serving the dashboard of {demo} (Ctrl+C stops)" in out and "[ok] open http://127.0.0.1:PORT/?token=" in out
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


def test_a_browser_tabs_dashboard_is_mementos_whatever_folder_it_starts_in(tmp_path):
    """textual-serve runs the tab's command in the folder `memento-tui --serve` started in (a
    project's, whose files an agent writes): a memento_tui/ there is not what it imports (-P)."""
    marker = tmp_path / "imported"
    here = tmp_path / "project"
    for rel in ("memento_tui/__init__.py", "memento_tui/app.py"):
        (here / rel).parent.mkdir(parents=True, exist_ok=True)
        (here / rel).write_text(f"open({str(marker)!r}, 'a').write(__file__)\n")
    r = subprocess.run(app_command(here) + " --help", shell=True, cwd=here, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "memento-tui" in r.stdout, r.stderr
    assert not marker.exists()


def test_serve_without_a_workspace_and_host_without_serve(tmp_path: Path):
    r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--serve", str(tmp_path / "nothing")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("[error]") and "no such directory" in r.stderr
    r = subprocess.run([sys.executable, "-m", "memento_tui.app", "--host", "0.0.0.0", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--host, --port and --token-file go with --serve" in r.stderr
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
    assert r.returncode == 2 and f"[error] cannot serve on 127.0.0.1:{port}: Address already in use" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    # Issue 38 item 8: nothing said "serving" or offered a URL before the error.
    assert "[ok]" not in r.stdout and "http://" not in r.stdout + r.stderr.split("--port")[0]


def test_every_url_the_server_prints_opens_the_dashboard(demo: Path, tmp_path: Path):
    """Issue 38 item 8: the banner's last URL had no token (a 403 for whoever clicked it). Every
    URL printed carries the token, and the last one opens the dashboard in Chromium."""
    port = free_port()
    log = tmp_path / "serve.log"
    proc = serve_process(demo, port, log)
    try:
        url = printed_url(log, proc)
        wait_for_http(url, proc)
        printed = re.findall(r"https?://\S+", log.read_text(errors="replace"))
        assert printed and all("?token=" in u for u in printed), printed
        assert printed[-1] == url
        _look_in_the_browser(printed[-1], proc, port, tmp_path)
    finally:
        stop_group(proc)


def test_the_browser_view_shows_the_question_and_answers_it(demo, tmp_path):
    """`memento-tui --serve`: a real Chromium sees the question; a page's websocket (the keys a
    person types in the browser) answers it, and the note says it came from the browser."""
    import asyncio

    import aiohttp

    ask(demo)
    port = free_port()
    proc = serve_process(demo, port, tmp_path / "serve.log", "--token-file", str(token_file(tmp_path)))
    url = f"http://127.0.0.1:{port}/?token={TOKEN}"

    async def answer_in_the_page() -> None:
        async with aiohttp.ClientSession(cookies={f"memento_token_{port}": TOKEN}) as session, \
                session.ws_connect(f"http://127.0.0.1:{port}/ws?width=120&height=40") as ws:
            await ws.send_str('["resize", {"width": 120, "height": 40}]')
            seen = ""

            async def until(words: str, seconds: float = 60) -> None:
                nonlocal seen
                deadline = asyncio.get_running_loop().time() + seconds
                # What the page shows, its styles and cursor moves left out (a styled word may be
                # drawn as several runs).
                while words not in re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]", "", seen):
                    left = deadline - asyncio.get_running_loop().time()
                    assert left > 0, f"never saw {words!r}"
                    try:
                        msg = await ws.receive(timeout=left)
                    except TimeoutError:
                        continue
                    if msg.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                        data = msg.data if isinstance(msg.data, str) else msg.data.decode("utf-8", "replace")
                        seen += data
                    elif msg.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        raise AssertionError("the dashboard closed its websocket")

            await until("Progress")
            await until("answer it (w)")  # the question is on the screen: the dashboard has read the plan
            await ws.send_str('["stdin", "w"]')
            await until("Answer (F2)")
            await ws.send_str('["stdin", "2"]')  # the second choice, by its number
            await asyncio.sleep(0.5)  # the pick is made before F2 reads it
            await ws.send_str('["stdin", "\\u001bOQ"]')  # F2
            notes = demo / "docs" / "HUMAN_NOTES.md"
            for _ in range(300):
                if any(n.is_answer for n in parse_notes(notes)):
                    return
                await asyncio.sleep(0.1)

    try:
        wait_for_http(url, proc)
        try:
            browser = Chromium().start()
        except BrowserUnavailable as exc:
            pytest.skip(f"no usable headless Chromium ({exc})")
        try:
            view = look_at(url, expect=("T-202 asks: Which rounding for div",), browser=browser)
        finally:
            browser.close()
        assert "T-202 asks: Which rounding for div" in view.text
        asyncio.run(answer_in_the_page())
    finally:
        stop_group(proc)
    [note] = [n for n in parse_notes(demo / "docs" / "HUMAN_NOTES.md") if n.is_answer]
    assert (note.target, note.text, note.source) == ("T-202", "half-up", "browser")
    assert parse_plan(demo / "docs" / "MASTER_PLAN.md").task("T-202").status == " "
