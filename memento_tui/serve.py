"""`memento-tui --serve`: the same dashboard in a browser (SPEC §6), through textual-serve.

Every browser tab that opens the page gets its own dashboard process
(``python -m memento_tui.app ROOT``) talking to the page over a websocket; all
of them read and edit the same files, exactly as several terminals would.

The server binds to 127.0.0.1 unless ``--host`` says otherwise: whoever reaches
the page can pause, skip and tick, so a non-loopback host prints a warning (the
README advises an SSH tunnel instead). Two checks keep other web pages out even
on loopback: a websocket whose Origin is not the page's own is refused (a page
on another site must not drive the dashboard through the browser), and on a
loopback binding a request whose Host is not a loopback name is refused (DNS
rebinding). The page's own URLs follow the Host the browser used, so a tunnel
from another local port works.

Loopback is no boundary (any local process, the agent of an unconfined tick
included, can connect), so every request also needs the server's secret token
(SPEC §6): made at start with ``secrets`` or read from ``--token-file``, printed
once in the URL to open (``http://127.0.0.1:8566/?token=…``) and kept in an
HttpOnly, SameSite=Strict cookie. Without it the page, the websocket and the
static files answer 403 and no dashboard process starts. The access log never
shows the token.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import logging
import re
import secrets
import shlex
import sys
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8566
LOOPBACK_NAMES = ("localhost",)
MIN_TOKEN = 16  # characters: a shorter secret can be guessed by a local script
_TOKEN_IN_LOG = re.compile(r"(token=)[^&\s\"]*")


def make_token() -> str:
    """A fresh secret for one server run (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def read_token_file(path: Path) -> str:
    """The token kept in ``path`` (one line); a MementoError naming the file when it cannot be one."""
    from memento_core.errors import MementoError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MementoError("--token-file: no such file", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise MementoError(f"--token-file: cannot read it: {why}", path=path) from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise MementoError("--token-file: the file is empty; write one line, a secret of "
                           f"{MIN_TOKEN} or more characters (e.g. python -c 'import secrets; "
                           "print(secrets.token_urlsafe())')", path=path)
    token = lines[0]
    if len(lines) > 1 or len(token) < MIN_TOKEN or not re.fullmatch(r"[A-Za-z0-9._~-]+", token):
        raise MementoError(f"--token-file: the token must be one line of {MIN_TOKEN} or more letters, digits, "
                           f"'-', '_', '.' or '~' (got {len(lines)} line(s), {len(token)} characters)",
                           path=path, line=1)
    return token


def cookie_name(port: int) -> str:
    """The cookie holding the token; one per port (cookies ignore ports, two servers must not clash)."""
    return f"memento_token_{port}"


def has_token(query_token: str | None, cookie_token: str | None, token: str) -> bool:
    """Whether the request carries ``token`` in its query or its cookie (compared in constant time)."""
    return any(given is not None and hmac.compare_digest(given.encode(), token.encode())
               for given in (query_token, cookie_token))


class _HideToken(logging.Filter):
    """The access log prints request lines: ``?token=…`` is cut out of them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = _TOKEN_IN_LOG.sub(r"\1…", record.msg)
        return True


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, maybe ``[::1]`` or with a port) is this machine only."""
    name = host.strip()
    if name.startswith("["):
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    if name.lower() in LOOPBACK_NAMES or name.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def app_command(root: Path, *, auto_tick: bool = False, polling: bool = False,
                interval: float | None = None) -> str:
    """The shell command textual-serve runs for each browser tab: this interpreter, this dashboard."""
    parts = [sys.executable, "-P", "-m", "memento_tui.app", str(root)]  # -P: see cron.TICK_ARGS
    if auto_tick:
        parts.append("--auto-tick")
    if interval is not None:
        parts += ["--interval", f"{interval:g}s"]
    if polling:
        parts.append("--polling")
    parts.append("--in-browser")  # its answers to questions say they came from the browser (SPEC §18)
    return shlex.join(parts)


def exposure_warning(host: str, port: int) -> str | None:
    """The warning a non-loopback host gets (None on loopback)."""
    if is_loopback(host):
        return None
    return (f"[warn] serving on {host}:{port}: anyone who can reach this address can pause, skip and "
            f"tick this project; prefer the default 127.0.0.1 and an SSH tunnel "
            f"(ssh -L {port}:127.0.0.1:{port} server)")


def refusal(host_header: str, origin: str | None, *, loopback_bound: bool) -> str | None:
    """Why a request is refused (None when it is let in)."""
    if loopback_bound and not is_loopback(host_header):
        return f"Host {host_header!r} is not this machine"
    if origin is not None and urlsplit(origin).netloc.lower() != host_header.lower():
        return f"Origin {origin!r} is not this page"
    return None


def make_server(root: Path, host: str, port: int, token: str, *, auto_tick: bool = False,
                polling: bool = False, interval: float | None = None):
    """The textual-serve server for the dashboard of ``root`` (not started); every request needs ``token``."""
    from aiohttp import web
    from textual_serve.server import Server

    cookie = cookie_name(port)

    @web.middleware
    async def guard(request: web.Request, handler):
        """Every route: the Host and Origin checks, then the token; a valid ``?token=`` sets the cookie."""
        websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        origin = request.headers.get("Origin") if websocket else None
        why = refusal(request.host, origin, loopback_bound=is_loopback(host))
        query_token = request.query.get("token")
        if why is None and not has_token(query_token, request.cookies.get(cookie), token):
            why = "no valid token (open the URL memento-tui --serve printed, with its ?token=…)"
        if why:
            raise web.HTTPForbidden(text=f"memento-tui --serve: refused: {why}\n")
        response = await handler(request)
        if query_token is not None and not websocket and isinstance(response, web.Response):
            response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
        return response

    class DashboardServer(Server):
        """textual-serve's server with the page's URLs taken from the request, behind ``guard``."""

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard)
            return app

        def initialize_logging(self) -> None:
            super().initialize_logging()
            logging.getLogger("aiohttp.access").addFilter(_HideToken())

        async def handle_index(self, request: web.Request):
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

        async def on_startup(self, app: web.Application) -> None:
            """No banner of textual-serve's: its URL has no token (a 403), and ours was printed
            once the socket was bound."""

        def serve_on(self, sock) -> None:
            """textual-serve's ``serve``, on a socket already bound and listening."""
            import asyncio
            import signal

            self.debug = False
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, self.request_exit)
            web.run_app(self._make_app(), sock=sock, handle_signals=False, loop=loop, print=lambda *args: None)

    name = root.name
    return DashboardServer(app_command(root, auto_tick=auto_tick, polling=polling, interval=interval),
                           host=host, port=port, title=f"Memento: {name}")


def serve(root: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, token: str | None = None,
          token_file: Path | None = None, auto_tick: bool = False, polling: bool = False,
          interval: float | None = None) -> int:
    """Serve the dashboard of ``root`` until Ctrl+C or SIGTERM; the exit code.

    ``token`` None: a fresh one, printed once in the URL; from ``token_file`` the URL names the file."""
    warning = exposure_warning(host, port)
    if warning:
        print(warning, file=sys.stderr)
    fresh = token is None
    token = make_token() if fresh else token
    try:  # bound before anything says "serving": a taken port is an error, never an [ok] first
        sock = bind(host, port)
    except OSError as exc:  # the port is taken, the address is not ours
        print(f"[error] cannot serve on {host}:{port}: {exc.strerror or exc}"
              + (f" (another program listens there: --port {port + 1}?)" if exc.errno == errno.EADDRINUSE else ""),
              file=sys.stderr)
        return 2
    server = make_server(root, host, port, token, auto_tick=auto_tick, polling=polling, interval=interval)
    shown = f"[{host}]" if ":" in host else host
    print(f"[ok] serving the dashboard of {root} (Ctrl+C stops)", flush=True)
    if fresh:
        print(f"[ok] open http://{shown}:{port}/?token={token}", flush=True)
    else:
        print(f"[ok] open http://{shown}:{port}/?token=TOKEN, TOKEN the line in {token_file}", flush=True)
    with sock:
        server.serve_on(sock)
    return 0


def bind(host: str, port: int):
    """A listening TCP socket on ``host``:``port`` (IPv4 or IPv6), or the OSError that refused it."""
    import socket

    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp does: a restart right after
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve_from_args(args, demo_interval: float) -> int:
    """`memento-tui --serve [DIR | --demo] [--host H] [--port P]`: find the workspace, then serve it
    (the demo's dashboards tick every ``demo_interval`` seconds, as app.py's own demo does)."""
    import tempfile

    from memento_core.errors import MementoError
    from memento_core.workspace import Workspace

    try:
        token = read_token_file(Path(args.token_file)) if args.token_file else None
        if args.demo:
            from memento_core.demo import create_demo

            root = create_demo(Path(tempfile.mkdtemp(prefix="memento-demo-")) / "calc")
        else:
            root = Workspace.find(args.project or args.dir or None).root
    except MementoError as exc:
        print(f"[error] {exc}", file=sys.stderr)
        return 2
    try:
        return serve(root, args.host or DEFAULT_HOST, DEFAULT_PORT if args.port is None else args.port,
                     token=token, token_file=Path(args.token_file) if args.token_file else None,
                     auto_tick=args.auto_tick or args.demo, polling=args.polling,
                     interval=demo_interval if args.demo else None)
    finally:
        if args.demo:  # the demo's temporary folder goes with the server that made it
            import shutil

            shutil.rmtree(root.parent, ignore_errors=True)
