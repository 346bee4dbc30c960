"""Inside the sandbox's network namespace (SPEC §13, network.py): loopback listeners, then the command.

Run by bwrap as ``python -I -S inner.py [--forward HOST:PORT=SOCKET]... --proxy SOCKET -- COMMAND...``
(standard library only, by path: it is bound into the sandbox on its own). It
listens on loopback (the namespace has nothing else): each ``--forward`` on its
own ``HOST:PORT`` (a local model server's, so the base URL the agent was given
works unchanged), the proxy on a free port, which the command gets in
``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` (``NO_PROXY``: loopback). Every
connection is relayed to its unix socket, where proxy.py, outside, decides.

The command runs as this process's child, in its process group and session;
the signals a run is stopped with are passed on to it, and this process exits
as it did (its code, or the same signal). ``relay`` is proxy.py's too.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

CHUNK = 65536
SOCKET_WAIT = 10.0  # seconds inner.py waits for proxy.py's socket to appear
FOLDER = "/tmp/.memento-net"  # network.INSIDE: proxy.py's folder in the sandbox
_PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _one_way(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways between ``a`` and ``b`` until both sides are done; close both."""
    back = threading.Thread(target=_one_way, args=(b, a), daemon=True)
    back.start()
    _one_way(a, b)
    back.join()
    a.close()
    b.close()


def nodelay(sock: socket.socket) -> socket.socket:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _to_socket(conn: socket.socket, path: str) -> None:
    """Relay ``conn`` to proxy.py's socket at ``path`` (which it may still be making: it starts
    serving while bwrap starts, so it is waited for, a while)."""
    import time

    out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + SOCKET_WAIT
    while True:
        try:
            out.connect(path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                out.close()
                conn.close()
                return
            time.sleep(0.005)
        except OSError:
            out.close()
            conn.close()
            return
    relay(nodelay(conn), out)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_to_socket, args=(conn, path), daemon=True).start()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def _split(target: str) -> tuple[str, int]:
    host, _, port = target.rpartition(":")
    return host.strip("[]"), int(port)


def _close_inherited() -> None:
    """Close what bwrap passed on beyond stdin, stdout and stderr (proxy.py's folder descriptor)."""
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            try:
                os.close(int(name))
            except OSError:
                pass


def parse(argv: list[str]) -> tuple[list[tuple[str, int, str]], str, list[str]]:
    """(forwards as (host, port, socket), the proxy's socket, the command)."""
    forwards, proxy = [], ""
    rest = list(argv)
    while rest and rest[0] != "--":
        flag, value = rest.pop(0), rest.pop(0)
        if flag == "--forward":
            target, _, path = value.partition("=")
            forwards.append((*_split(target), path))
        elif flag == "--proxy":
            proxy = value
        else:
            raise SystemExit(f"inner.py: unknown option {flag}")
    return forwards, proxy, rest[1:]


def _env(proxy_port: int | None) -> dict[str, str]:
    env = dict(os.environ)
    if proxy_port is not None:
        url = f"http://127.0.0.1:{proxy_port}"
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = url
        env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status))


def _say_started(folder: str, within: float = 10.0) -> bool:
    """Tell proxy.py the sandbox is set up, before the command starts: proxy.py starts bwrap again
    only when it never heard this, so a command that ran is never run twice."""
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(os.path.join(folder, "start.sock"))
            return True
        except OSError:
            time.sleep(0.002)
        finally:
            sock.close()
    return False


def main(argv: list[str]) -> None:
    _close_inherited()
    forwards, proxy, command = parse(argv)
    if not command:
        raise SystemExit("inner.py: no command after --")
    for host, port, path in forwards:
        for address in (("127.0.0.1", "::1") if host == "localhost" else (host,)):
            try:
                listener = _listen(address, port)
            except OSError:  # ::1 without IPv6 in the namespace; a port already forwarded
                continue
            threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    proxy_port = None
    if proxy:
        listener = _listen("127.0.0.1", 0)
        proxy_port = listener.getsockname()[1]
        threading.Thread(target=_serve, args=(listener, proxy), daemon=True).start()
    child = 0
    for sig in _PASSED_ON:  # before the child exists: a signal in between is not lost
        signal.signal(sig, lambda number, _frame: child and os.kill(child, number))
    if not _say_started(FOLDER):
        print("[memento] the sandbox's network is not served (proxy.py): the command was not run",
              file=sys.stderr, flush=True)
        os._exit(125)
    try:
        child = os.posix_spawn(command[0], command, _env(proxy_port),
                               setsigdef=(*_PASSED_ON, signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        print(f"[memento] cannot run {command[0]!r}: {exc.strerror or exc}", file=sys.stderr, flush=True)
        os._exit(127)
    _, status = os.waitpid(child, 0)
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
