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
"""

from __future__ import annotations

import ipaddress
import shlex
import sys
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8566
LOOPBACK_NAMES = ("localhost",)


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


def app_command(root: Path, *, auto_tick: bool = False, polling: bool = False) -> str:
    """The shell command textual-serve runs for each browser tab: this interpreter, this dashboard."""
    parts = [sys.executable, "-m", "memento_tui.app", str(root)]
    if auto_tick:
        parts.append("--auto-tick")
    if polling:
        parts.append("--polling")
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


def make_server(root: Path, host: str, port: int, *, auto_tick: bool = False, polling: bool = False):
    """The textual-serve server for the dashboard of ``root`` (not started)."""
    from aiohttp import web
    from textual_serve.server import Server

    class DashboardServer(Server):
        """textual-serve's server with the page's URLs taken from the request and the two checks."""

        def _check(self, request: web.Request, *, websocket: bool) -> None:
            origin = request.headers.get("Origin") if websocket else None
            why = refusal(request.host, origin, loopback_bound=is_loopback(host))
            if why:
                raise web.HTTPForbidden(text=f"memento-tui --serve: refused: {why}\n")

        async def handle_index(self, request: web.Request):
            self._check(request, websocket=False)
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

        async def handle_websocket(self, request: web.Request):
            self._check(request, websocket=True)
            return await super().handle_websocket(request)

    name = root.name
    return DashboardServer(app_command(root, auto_tick=auto_tick, polling=polling), host=host, port=port,
                           title=f"Memento: {name}")


def serve(root: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, auto_tick: bool = False,
          polling: bool = False) -> int:
    """Serve the dashboard of ``root`` until Ctrl+C or SIGTERM; the exit code."""
    warning = exposure_warning(host, port)
    if warning:
        print(warning, file=sys.stderr)
    server = make_server(root, host, port, auto_tick=auto_tick, polling=polling)
    shown = f"[{host}]" if ":" in host else host
    print(f"[ok] serving the dashboard of {root} on http://{shown}:{port} (Ctrl+C stops)", flush=True)
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the address is not ours
        print(f"[error] cannot serve on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def serve_from_args(args) -> int:
    """`memento-tui --serve [DIR | --demo] [--host H] [--port P]`: find the workspace, then serve it."""
    import tempfile

    from memento_core.errors import MementoError
    from memento_core.workspace import Workspace

    try:
        if args.demo:
            from memento_core.demo import create_demo

            root = create_demo(Path(tempfile.mkdtemp(prefix="memento-demo-")) / "calc")
        else:
            root = Workspace.find(args.project or args.dir or None).root
    except MementoError as exc:
        print(f"[error] {exc}", file=sys.stderr)
        return 2
    return serve(root, args.host or DEFAULT_HOST, DEFAULT_PORT if args.port is None else args.port,
                 auto_tick=args.auto_tick or args.demo, polling=args.polling)
