"""A real headless Chromium looking at `memento-tui --serve`, for the test and screenshots/serve.png.

The served page draws the dashboard with xterm.js into canvases, so the DOM holds
no dashboard text. What is checked instead, through the Chrome DevTools Protocol:

- the terminal stream the page received over its websocket (Network.webSocketFrameReceived),
  with escape sequences removed: the dashboard's own words (the project's name) are in it;
- the page's script wrote that stream into the terminal (textual-serve marks the body
  ``-first-byte``);
- xterm's text canvas is painted in many colours (glyphs, borders, bars), read back with getImageData;
- a screenshot (Page.captureScreenshot) for people and for the README.

``python -m memento_tui.browser`` regenerates screenshots/serve.png from the demo.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
WINDOW = (1200, 800)
# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), then any other escape: ESC, intermediates (a
# character set: ESC ( B), a final from 0 to ~ (ESC 7, ESC =, ESC M, ESC c).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]")
# What the page asks xterm's text layer: how many distinct colours it has painted (a blank
# or single-colour terminal has one or two; text, borders and bars make many).
_COLOURS_JS = """(() => {
  const c = document.querySelector('canvas.xterm-text-layer');
  if (!c) { return -1; }
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length && seen.size < 1000; i += 4) {
    if (d[i + 3] !== 0) { seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]); }
  }
  return seen.size;
})()"""


class BrowserUnavailable(Exception):
    """No Chromium here, or it cannot start (the test skips with this reason)."""


def find_chromium() -> str | None:
    """The Chromium (or Chrome) binary on PATH, or None."""
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM to the process group ``proc`` leads, SIGKILL after ``grace`` seconds; reaped."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group's stragglers too (a served dashboard)
    except ProcessLookupError:
        pass
    proc.wait()


def plain(stream: bytes) -> str:
    """Terminal output as text: decoded, escape sequences removed."""
    return _ESCAPES.sub("", stream.decode("utf-8", "replace"))


@dataclass
class PageView:
    """What the browser saw of the served page."""

    text: str = ""                      # the terminal stream, escape sequences removed
    body_class: str = ""
    colours: int = 0                    # distinct colours on xterm's text canvas
    screenshot: bytes = b""             # PNG
    console: list[str] = field(default_factory=list)


class Chromium:
    """A headless Chromium with a DevTools port, in its own process group."""

    def __init__(self, binary: str | None = None):
        self.binary = binary or find_chromium()
        if not self.binary:
            raise BrowserUnavailable("no chromium on PATH (Debian: apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="memento-chromium-")
        self.proc: subprocess.Popen | None = None
        self.devtools = ""

    def start(self, timeout: float = 60.0) -> Chromium:
        """Start it and wait for its DevTools port; BrowserUnavailable (and nothing left behind) if not."""
        try:
            return self._start(timeout)
        except BrowserUnavailable:
            self.close()
            raise

    def _start(self, timeout: float) -> Chromium:
        args = [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                f"--window-size={WINDOW[0]},{WINDOW[1]}", "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}", "about:blank"]
        try:
            self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         start_new_session=True)
        except OSError as exc:
            raise BrowserUnavailable(f"cannot start {self.binary}: {exc}") from None
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode("utf-8", "replace") if self.proc.stderr else ""
                raise BrowserUnavailable(f"chromium exited with code {self.proc.returncode}: "
                                         f"{err.strip().splitlines()[-1] if err.strip() else '(no output)'}")
            if port_file.exists() and len(port_file.read_text().split()) >= 2:
                self.devtools = f"127.0.0.1:{port_file.read_text().split()[0]}"
                return self
            time.sleep(0.1)
        raise BrowserUnavailable(f"chromium did not open its DevTools port within {timeout:g}s")

    def page_target(self) -> str:
        """The websocket URL of the browser's page (about:blank)."""
        with urllib.request.urlopen(f"http://{self.devtools}/json/list", timeout=10) as r:
            targets = json.load(r)
        return next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stderr:
                self.proc.stderr.close()
            stop_group(self.proc, grace=5)
            self.proc = None
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


class _Cdp:
    """A minimal Chrome DevTools Protocol session over aiohttp's websocket client."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.events: asyncio.Queue = asyncio.Queue()

    async def pump(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                await self.events.put(data)

    async def call(self, method: str, **params) -> dict:
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.ws.send_json({"id": self.next_id, "method": method, "params": params})
        reply = await asyncio.wait_for(future, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def evaluate(self, expression: str):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")


async def _look(target: str, url: str, expect: tuple[str, ...], timeout: float) -> PageView:
    import aiohttp

    view = PageView()
    stream = bytearray()
    async with aiohttp.ClientSession() as session, session.ws_connect(target, max_msg_size=0) as ws:
        cdp = _Cdp(ws)
        pump = asyncio.create_task(cdp.pump())
        try:
            await cdp.call("Network.enable")
            await cdp.call("Page.enable")
            await cdp.call("Runtime.enable")
            await cdp.call("Emulation.setDeviceMetricsOverride", width=WINDOW[0], height=WINDOW[1],
                           deviceScaleFactor=1, mobile=False)
            await cdp.call("Page.navigate", url=url)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and not (all(e in plain(bytes(stream)) for e in expect)
                                                       and "-first-byte" in view.body_class):
                try:
                    event = await asyncio.wait_for(cdp.events.get(), 0.5)
                except TimeoutError:
                    event = None
                if event is not None:
                    _take(event, stream, view)
                view.body_class = await cdp.evaluate("document.body ? document.body.className : ''") or ""
            await asyncio.sleep(1.0)  # let xterm paint the last frames
            view.text = plain(bytes(stream))
            view.colours = int(await cdp.evaluate(_COLOURS_JS) or 0)
            shot = await cdp.call("Page.captureScreenshot", format="png")
            view.screenshot = base64.b64decode(shot["data"])
        finally:
            pump.cancel()
    return view


def _take(event: dict, stream: bytearray, view: PageView) -> None:
    method = event["method"]
    params = event.get("params", {})
    if method == "Network.webSocketFrameReceived":
        frame = params.get("response", {})
        data = frame.get("payloadData", "")
        # opcode 2: a binary frame (the terminal stream), base64 in the protocol.
        stream += base64.b64decode(data) if frame.get("opcode") == 2 else b""
    elif method == "Runtime.consoleAPICalled":
        view.console.append(" ".join(str(a.get("value", "")) for a in params.get("args", [])))


def look_at(url: str, expect: str | tuple[str, ...], timeout: float = 120.0,
            browser: Chromium | None = None) -> PageView:
    """Open ``url`` in headless Chromium and wait (up to ``timeout``) until the terminal stream
    contains every string of ``expect`` and the page has written it into the terminal; what it saw."""
    expect = (expect,) if isinstance(expect, str) else tuple(expect)
    own = browser is None
    browser = browser or Chromium().start()
    try:
        return asyncio.run(_look(browser.page_target(), url, expect, timeout))
    finally:
        if own:
            browser.close()


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> bytes:
    """GET ``url`` until it answers 200 (the server is up); its body. Fails if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read()
        except OSError as exc:
            last = str(exc)
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:g}s ({last})")


def serve_process(root: Path, port: int, log: Path, *extra: str) -> subprocess.Popen:
    """`memento-tui --serve ROOT --port PORT` in its own process group (its dashboards join it),
    its output in ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-P", "-m", "memento_tui.app", "--serve", "--port", str(port),
                                 *extra, str(root)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def main() -> int:
    """Regenerate screenshots/serve.png: the demo, a few real ticks, served, seen by Chromium."""
    from memento_core.demo import create_demo
    from memento_core.tick.__main__ import run_tick

    from .screenshots import _identity

    _identity()
    out = Path(__file__).resolve().parent.parent / "screenshots" / "serve.png"
    with tempfile.TemporaryDirectory(prefix="memento-serve-shot-") as tmp:
        root = create_demo(Path(tmp) / "calc")
        for _ in range(4):
            run_tick(root)
        port = free_port()
        token = Path(tmp) / "serve.token"
        token.write_text(secrets.token_urlsafe() + "\n")
        server = serve_process(root, port, Path(tmp) / "serve.log", "--token-file", str(token))
        url = f"http://127.0.0.1:{port}/?token={token.read_text().strip()}"
        try:
            wait_for_http(url, server)
            view = look_at(url, expect="calc (Memento demo)")
        finally:
            stop_group(server)
    out.write_bytes(view.screenshot)
    print(f"[ok] wrote {out} ({len(view.screenshot)} bytes, {view.colours} colours)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
