"""Outside the sandbox (SPEC §13, network.py): the filtering proxy of one run, and bwrap as its child.

``python -I -S proxy.py --tag TAG [--forward HOST:PORT]... [--allow PATTERN]... -- BWRAP-ARGV...``
(standard library only, run by path). It makes a private folder in ``/tmp``
(``memento-net-TAG-…``, TAG names the project), hands it to bwrap on descriptor
3 (``--ro-bind-fd 3``), starts bwrap, makes its unix sockets there and serves
them while bwrap runs, removes the folder and exits as bwrap did. What connects comes from inner.py in the sandbox:

* ``proxy.sock``: an HTTP proxy. ``CONNECT host:port`` (HTTPS) and plain requests
  in absolute form (``GET http://host/…``) go through when the host and port
  match an ``--allow`` pattern (``hosts.py``: ``host``, ``*.domain``, each with an
  optional port, 80 and 443 without); the name is resolved here, outside.
  Anything else is answered ``403`` and noted in the run's log.
* ``fwd-N.sock``: the N-th ``--forward``, a plain relay to that host:port (a
  loopback model server).

A proxy of the person's own in ``HTTPS_PROXY``/``ALL_PROXY`` (this process gets
the agent's environment) is chained: what the rules let through to a host that
is not loopback goes through it, always as a ``CONNECT`` to the allowed host:port (a
plain request then goes in origin form through that tunnel): whatever the agent
pipelines after its request reaches that host only, never the person's proxy.

It stays in the run's process group (the tick stops the group); SIGTERM is passed
on to bwrap, and the folder is removed before this process ends the same way.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

HEAD_LIMIT = 65536
HEAD_TIMEOUT = 30.0
CONNECT_TIMEOUT = 30.0
NET_DIR_FD = 3  # network.NET_DIR_FD
SOCKET_DIRS = ("/run", "/var/run")  # every unix socket here is covered with /dev/null in the sandbox
MAX_SCANNED = 20000  # entries looked at under SOCKET_DIRS, at most
STARTS = 3  # bwrap is started again (at most this often) when its own set-up failed (the command never ran)


def _load(path: str, name: str):
    """A module by its path: run by path with -I, the package is not importable (and importlib.util,
    pathlib or dataclasses would cost more than this whole file at every agent start)."""
    module = type(sys)(name)
    module.__file__ = path
    sys.modules[name] = module
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), module.__dict__)  # noqa: S102 - Memento's own file
    return module


_HERE = os.path.dirname(os.path.realpath(__file__))
hosts = _load(os.path.join(os.path.dirname(_HERE), "hosts.py"), "memento_net_hosts")
_inner = None  # inner.py (relay, nodelay), loaded once bwrap is on its way: main


def relay(a: socket.socket, b: socket.socket) -> None:
    _inner.relay(a, b)


def nodelay(sock: socket.socket) -> socket.socket:
    return _inner.nodelay(sock)


def _say(text: str) -> None:
    try:
        os.write(2, f"[memento] network: {text}\n".encode("utf-8", "replace"))
    except OSError:
        pass


class Rules:
    """The ``--allow`` patterns."""

    def __init__(self, patterns: list[str]):
        self.patterns = [p for p in (hosts.parse_host(text) for text in patterns) if p is not None]

    def allows(self, host: str, port: int) -> bool:
        return any(p.matches(host, port) for p in self.patterns)


def _read_head(conn: socket.socket) -> tuple[bytes, bytes] | None:
    """(the request head up to its blank line, the bytes after it), or None."""
    conn.settimeout(HEAD_TIMEOUT)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            if len(data) > HEAD_LIMIT:
                return None
            chunk = conn.recv(8192)
            if not chunk:
                return None
            data += chunk
    except OSError:
        return None
    conn.settimeout(None)
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _answer(conn: socket.socket, status: str, text: str) -> None:
    body = (text + "\n").encode()
    try:
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + body)
    except OSError:
        pass
    conn.close()


def _target(line: str) -> tuple[str, int, str, bool] | None:
    """(host, port, the request line to send on, whether it is a CONNECT) of a proxy request line. An
    absolute-form URL is read as urllib reads it and its host checked as a pattern's is (hosts.py), so
    ``http://evil.example?.allowed`` is evil.example."""
    parts = line.split(" ")
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method == "CONNECT":
        found = hosts.split_host_port(target)
        return (*found, "", True) if found else None
    from urllib.parse import urlsplit

    try:
        url = urlsplit(target)
        port = url.port or 80
    except ValueError:
        return None
    host = url.hostname or ""
    bracketed = f"[{host}]" if ":" in host else host
    if url.scheme.lower() != "http" or "@" in url.netloc or hosts.parse_host(bracketed) is None:
        return None
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return host, port, f"{method} {path} {version}", False


_HOP = (b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization", b"host")


def _origin_head(line: str, headers: bytes, host: str, port: int) -> bytes:
    """The request in origin form for the allowed ``host``: its own Host (not the agent's, which a
    shared front end would route by), and ``Connection: close``: one request per connection."""
    kept = [h for h in headers.split(b"\r\n") if h and h.split(b":", 1)[0].strip().lower() not in _HOP]
    name = f"[{host}]" if ":" in host else host
    authority = name if port == 80 else f"{name}:{port}"
    return b"\r\n".join([line.encode("latin-1"), f"Host: {authority}".encode(), *kept, b"Connection: close"]) \
        + b"\r\n\r\n"


def _proxy(conn: socket.socket, rules: Rules) -> None:
    try:
        out = _opened(conn, rules)
    except Exception as exc:  # noqa: BLE001 - whatever an agent sends, it gets an answer and the proxy serves on
        _say(f"a request it could not take: {type(exc).__name__}: {exc}")
        _answer(conn, "400 Bad Request", "memento: the proxy could not take this request")
        return
    if out is not None:
        relay(conn, out)


def _opened(conn: socket.socket, rules: Rules) -> socket.socket | None:
    """The connection to the request's host, its request or tunnel answered; None once ``conn``
    is answered and closed (refused, malformed, unreachable)."""
    got = _read_head(conn)
    if got is None:
        conn.close()
        return None
    head, rest = got
    first, _, headers = head.partition(b"\r\n")
    found = _target(first.decode("latin-1"))
    if found is None:
        _answer(conn, "400 Bad Request", "memento: not a proxy request")
        return None
    host, port, line, tunnel = found
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if host != host.strip() or hosts.parse_host(f"[{host}]" if ":" in host else host) is None:
        # A name no lookup takes (an empty or too long label, a character a name has not): the
        # name's encoding for the lookup would fail here, on the agent's input.
        _answer(conn, "400 Bad Request", f"memento: {shown!r} is not a host name nor an address")
        return None
    if not rules.allows(host, port):
        _say(f"refused {shown}: not the model endpoint nor in [sandbox] allow")
        _answer(conn, "403 Forbidden", f'memento: {shown} is not reachable from the sandbox (network = "model"); '
                                       "add it to [sandbox] allow in memento.toml")
        return None
    upstream = UPSTREAM if UPSTREAM and not hosts.is_loopback(host) else None
    try:
        out = nodelay(socket.create_connection(upstream[:2] if upstream else (host, port), timeout=CONNECT_TIMEOUT))
        if upstream:  # always a tunnel to the allowed host: the person's proxy never reads a request
            _through(out, shown, upstream[2])
        out.settimeout(None)
    except (OSError, UnicodeError, ValueError) as exc:  # UnicodeError: a name the lookup cannot encode
        _answer(conn, "502 Bad Gateway", f"memento: cannot reach {shown}: {getattr(exc, 'strerror', None) or exc}")
        return None
    try:
        if tunnel:
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            out.sendall(rest) if rest else None
        else:  # what follows (a body, a pipelined request) reaches only this host:port, which closes
            out.sendall(_origin_head(line, headers, host, port) + rest)
    except OSError:
        out.close()
        conn.close()
        return None
    return out


def _through(out: socket.socket, target: str, auth: bytes) -> None:
    """Open a tunnel to ``target`` through the person's proxy on ``out``; OSError when it refuses."""
    out.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n".encode() + auth + b"\r\n")
    got = _read_head(out)
    status = got[0].split(b"\r\n", 1)[0].decode("latin-1") if got else "no answer"
    if got is None or " 200" not in status:
        raise OSError(f"the proxy in HTTPS_PROXY refused the tunnel: {status}")
    if got[1]:
        raise OSError("the proxy in HTTPS_PROXY sent data before the tunnel")


def _upstream(env) -> tuple[str, int, bytes] | None:
    """The person's own proxy (``HTTPS_PROXY``, else ``ALL_PROXY``) as (host, port, its
    Proxy-Authorization header line or b''): Memento's proxy chains to it. None without one."""
    from urllib.parse import unquote, urlsplit

    for name in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        url = env.get(name, "").strip()
        if not url:
            continue
        parts = urlsplit(url if "://" in url else "http://" + url)
        if parts.scheme != "http" or not parts.hostname:
            _say(f"{name} is not an http:// proxy: it is not used")
            return None
        auth = b""
        if parts.username:
            import binascii

            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            auth = b"Proxy-Authorization: Basic " + binascii.b2a_base64(pair, newline=False) + b"\r\n"
        return parts.hostname, parts.port or 8080, auth
    return None


UPSTREAM: tuple[str, int, bytes] | None = None


def _forward(conn: socket.socket, host: str, port: int) -> None:
    try:
        out = nodelay(socket.create_connection((host, port), timeout=CONNECT_TIMEOUT))
        out.settimeout(None)
    except OSError:
        conn.close()
        return
    relay(conn, out)


def _serve(listener: socket.socket, handle, *args) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(conn, *args), daemon=True).start()


def _bind(folder: str, name: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.path.join(folder, name))
    sock.listen(64)
    return sock


def _private_folder(tag: str) -> str:
    for _ in range(100):
        path = f"/tmp/memento-net-{tag}-{os.urandom(6).hex()}"
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue
    raise SystemExit("proxy.py: cannot make a folder in /tmp")


def _remove(folder: str) -> None:
    for name in os.listdir(folder):
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass
    try:
        os.rmdir(folder)
    except OSError:
        pass


def parse(argv: list[str]) -> tuple[list[tuple[str, int]], list[str], str, list[str]]:
    """(the forwards, the allow patterns, the folder's tag, the command)."""
    forwards, allow, tag = [], [], "x"
    rest = list(argv)
    while rest and rest[0] != "--":
        flag, value = rest.pop(0), rest.pop(0)
        if flag == "--forward":
            found = hosts.split_host_port(value)
            if found is None:
                raise SystemExit(f"proxy.py: not host:port: {value}")
            forwards.append(found)
        elif flag == "--allow":
            allow.append(value)
        elif flag == "--tag" and value.isalnum():
            tag = value
        else:
            raise SystemExit(f"proxy.py: unknown option {flag} {value}")
    return forwards, allow, tag, rest[1:]


def _die_with_parent(parent: int) -> None:
    """SIGTERM to this process when the tick (``parent``) dies, even by SIGKILL (PR_SET_PDEATHSIG):
    bwrap's --die-with-parent then ends the sandbox, as it did when the tick was bwrap's parent."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the tick died before the call
        os.kill(os.getpid(), signal.SIGTERM)


def _sockets(roots=SOCKET_DIRS, limit: int = MAX_SCANNED) -> list[str]:
    """Every unix socket under ``roots`` (links not followed; unreadable folders skipped)."""
    import stat

    found: list[str] = []
    seen = 0
    todo = [r for r in dict.fromkeys(os.path.realpath(r) for r in roots) if os.path.isdir(r)]
    while todo and seen < limit:
        folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISSOCK(mode):
                found.append(entry.path)
            elif stat.S_ISDIR(mode):
                todo.append(entry.path)
    return sorted(found)


_ONE = frozenset(("--tmpfs", "--dev", "--proc", "--dir", "--chdir", "--unsetenv", "--remount-ro", "--perms",
                  "--size", "--uid", "--gid", "--hostname", "--cap-add", "--cap-drop"))
_TWO = frozenset(("--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try", "--setenv",
                  "--ro-bind-fd", "--bind-fd", "--file", "--symlink", "--chmod"))
_HOST_VIEW = frozenset(("--ro-bind", "--ro-bind-try"))  # a read-only view of the host's own path


def _host_paths(command: list[str], paths: list[str]) -> list[str]:
    """Those of ``paths`` the sandbox shows as the host's own: the last mount of bwrap's argv over each
    is a ``--ro-bind`` of that same path (``/ /``). Under ``--tmpfs`` (/tmp, the home) a path is not
    there; under a ``--bind`` (the project, the private home, even where a part is read-only) it is the
    project's or Memento's own."""
    mounts: list[tuple[str, bool | None]] = []  # (where, the host's own; None: a --bind, never covered)
    at = 1
    while at < len(command) and command[at] != "--":
        flag = command[at]
        if flag in _TWO:
            if flag not in ("--setenv", "--chmod"):
                mounts.append((command[at + 2], None if flag == "--bind" else flag in _HOST_VIEW and
                               os.path.realpath(command[at + 1]) == os.path.realpath(command[at + 2])))
            at += 3
        else:
            if flag in ("--tmpfs", "--dev", "--proc", "--dir"):
                mounts.append((command[at + 1], False))
            at += 2 if flag in _ONE else 1
    shown = []
    for path in paths:
        last = [host for dest, host in mounts if path == dest or path.startswith(dest.rstrip("/") + "/")]
        if last and last[-1] and None not in last:
            shown.append(path)
    return shown


def _listening(table: str = "/proc/net/unix") -> list[str]:
    """The unix sockets with a path the host has listening (abstract ``@`` names: the new network
    namespace hides them), those still there as sockets."""
    import stat

    found = []
    try:
        with open(table, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()[1:]
    except OSError:
        return []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/") or fields[5] != "01":  # 01: listening
            continue
        try:
            if stat.S_ISSOCK(os.lstat(fields[7]).st_mode):
                found.append(fields[7])
        except OSError:
            continue
    return found


def _covered(command: list[str], sockets: list[str]) -> list[str]:
    """bwrap's argv with ``--ro-bind /dev/null SOCKET`` for each socket, right after ``--unshare-net``."""
    at = command.index("--unshare-net") + 1
    masks = [arg for path in sockets for arg in ("--ro-bind", "/dev/null", path)]
    return [*command[:at], *masks, *command[at:]]


STARTED = threading.Event()  # inner.py connected to start.sock: the sandbox was set up


def _started(conn: socket.socket) -> None:
    STARTED.set()
    conn.close()


def _serve_all(folder: str, forwards: list[tuple[str, int]], allow: list[str]) -> None:
    """The sockets and their threads. This runs while bwrap starts: inner.py waits for a socket
    that is not there yet, so the agent's start does not wait for this."""
    global _inner, UPSTREAM
    threading.Thread(target=_serve, args=(_bind(folder, "start.sock"), _started), daemon=True).start()
    _inner = _load(os.path.join(_HERE, "inner.py"), "memento_net_inner")
    UPSTREAM = _upstream(os.environ)
    rules = Rules(allow)
    threading.Thread(target=_serve, args=(_bind(folder, "proxy.sock"), _proxy, rules), daemon=True).start()
    for number, (host, port) in enumerate(forwards):
        threading.Thread(target=_serve, args=(_bind(folder, f"fwd-{number}.sock"), _forward, host, port),
                         daemon=True).start()


def main(argv: list[str]) -> None:
    parent = os.getppid()
    forwards, allow, tag, command = parse(argv)
    folder = _private_folder(tag)
    try:
        fd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
        if fd != NET_DIR_FD:
            os.dup2(fd, NET_DIR_FD)
            os.close(fd)
        os.set_inheritable(NET_DIR_FD, True)
        stopped: list[int] = []
        child = 0

        def pass_on(number, _frame):
            stopped.append(number)
            if child:
                try:
                    os.kill(child, number)
                except ProcessLookupError:  # a signal to the whole group: waitpid reaped it first
                    pass

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, pass_on)
        for start in range(STARTS):
            sockets = sorted({*_sockets(), *_host_paths(command, _listening())})
            try:
                child = os.posix_spawn(command[0], _covered(command, sockets), os.environ,
                                       setsigdef=(signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE,
                                                  signal.SIGXFSZ))
            except OSError as exc:
                _say(f"cannot run {command[0]!r}: {exc.strerror or exc}")
                _remove(folder)
                os._exit(127)
            if stopped:  # stopped before bwrap existed: it goes too
                os.kill(child, stopped[0])
            if start == 0:
                try:
                    _serve_all(folder, forwards, allow)
                except OSError as exc:  # the agent then reaches nothing; its run goes on and says so
                    _say(f"cannot serve the sandbox's network: {exc}")
                _die_with_parent(parent)
            _, status = os.waitpid(child, 0)
            if stopped or STARTED.wait(2.0):  # (its connection may still wait to be taken)
                break
            # inner.py never said it started, and it says so before it runs the command: bwrap's
            # own set-up failed (a socket gone since the scan, a document a person saved by rename
            # at that instant), the command never ran, and starting again is safe.
            gone = [path for path in sockets if not os.path.lexists(path)]
            _say(f"{gone[0]} went away while the sandbox started: starting it again" if gone
                 else "bwrap's set-up failed (the command did not run): starting the sandbox again")
        os.close(NET_DIR_FD)
    finally:
        _remove(folder)
    (_inner or _load(os.path.join(_HERE, "inner.py"), "memento_net_inner"))._exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
