"""Benchmark: what the sandbox adds to an agent start (SPEC §13) and to a request to the model.

`true` started the way the tick starts the agent (``run_in_group``: a new
session, output to the tick log), outside and inside the bubblewrap sandbox
of a real workspace (``sandbox.bwrap_prefix``: its full layout, with 20
untracked files and a guard file bound read-only); median of N starts each.
The sandbox with the host's network (``network = "all"``, budget ≤ 50 ms), and
with ``network = "model"``, the default: the network namespace, the filtering
proxy outside and the forwarder inside started too (budget ≤ 100 ms).

A request: a client makes N requests (a new connection each, ``GET /``, the
answer read to its end) to a loopback HTTP server outside; run unconfined,
straight to the server, then in the sandbox through the port forward (a
loopback base URL) and through the CONNECT proxy (an ``allow`` host); what the
sandbox adds is the difference of the medians (budget ≤ 5 ms).

Run: python bench/sandbox_cost.py [--rounds 31]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table import header, print_table  # noqa: E402

from memento_core import sandbox  # noqa: E402
from memento_core.agents import run_in_group  # noqa: E402
from memento_core.config.load import config_from_dict  # noqa: E402
from memento_core.workspace import Workspace  # noqa: E402

BUDGET_MS = 50.0
NETWORK_BUDGET_MS = 100.0
REQUEST_BUDGET_MS = 5.0
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def _median_ms(root: Path, wrap: list[str], rounds: int) -> float:
    return _starts(root, wrap, rounds)[0]


def _starts(root: Path, wrap: list[str], rounds: int) -> tuple[float, float]:
    """(the median wall time of a start, the CPU time the started processes used per start), in ms.
    The CPU time hardly depends on the machine's load; the wall time does."""
    samples = []
    log = root / "logs" / "bench.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(rounds):
        t0 = time.perf_counter()
        result = run_in_group(["true"], cwd=root, log_path=log, timeout=30, wrap=wrap)
        samples.append(time.perf_counter() - t0)
        assert result.ok, result
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / rounds
    return statistics.median(samples) * 1000, cpu * 1000


_CLIENT = """
import os, socket, statistics, sys, time
from urllib.parse import urlsplit
port, rounds, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = urlsplit(os.environ.get("HTTPS_PROXY", ""))
samples = []
for _ in range(rounds):
    t0 = time.perf_counter()
    if how == "connect":
        s = socket.create_connection((proxy.hostname, proxy.port))
        s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\\r\\n\\r\\n" % port)
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            head += s.recv(1)
    else:
        s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
    while s.recv(65536):
        pass
    s.close()
    samples.append(time.perf_counter() - t0)
print(statistics.median(samples) * 1000)
"""


def _server() -> socket.socket:
    """A loopback server answering every connection with a small HTTP response."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def answer(conn):
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener


def _request_ms(root: Path, wrap: list[str], port: int, rounds: int, how: str) -> float:
    proc = subprocess.run([*wrap, sys.executable, "-c", _CLIENT, str(port), str(rounds), how], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return float(proc.stdout.strip().splitlines()[-1])


def rows(rounds: int = 31) -> list:
    binary = sandbox.bwrap_binary()
    why = sandbox.probe(binary) if binary else "bubblewrap (bwrap) is not installed"
    if why:
        return [(f"sandbox cost: not measured ({why})", "-", f"≤ {BUDGET_MS:.0f} ms", None)]
    server = _server()
    port = server.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True,
                       capture_output=True, env=ENV)
        untracked = [f"scratch/note-{i}.txt" for i in range(20)]
        for rel in (*untracked, "guarded.txt"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("x\n")
        ws = Workspace(root)

        def prefix(network: str) -> list[str]:
            config = config_from_dict({"agent": {"preset": "command", "command": "x"},
                                       "sandbox": {"network": network, "allow": [f"127.0.0.1:{port}"]}})
            return sandbox.bwrap_prefix(ws, config, binary=binary, guard_paths=["guarded.txt"], untracked=untracked)

        wrap, model = prefix("all"), prefix("model")
        outside, cpu_outside = _starts(root, [], rounds)
        inside, cpu_inside = _starts(root, wrap, rounds)
        netns, cpu_netns = _starts(root, model, rounds)
        direct = _request_ms(root, [], port, rounds * 4, "direct")
        forward = _request_ms(root, model, port, rounds * 4, "direct")
        tunnel = _request_ms(root, model, port, rounds * 4, "connect")
    server.close()
    added, added_net = inside - outside, netns - outside
    return [
        (f"agent start (`true`) unconfined, median of {rounds} (ms)", f"{outside:.1f}", "", None),
        (f"agent start (`true`) in the sandbox, {len(wrap)} bwrap args (ms)", f"{inside:.1f}", "", None),
        ('what the sandbox adds to an agent start, network = "all" (ms)', f"{added:.1f}", f"≤ {BUDGET_MS:.0f} ms",
         added <= BUDGET_MS),
        ('what the sandbox adds to an agent start, network = "model": namespace, proxy, forwarder (ms)',
         f"{added_net:.1f}", f"≤ {NETWORK_BUDGET_MS:.0f} ms", added_net <= NETWORK_BUDGET_MS),
        ('CPU time of an agent start: unconfined / network = "all" / "model" (ms)',
         f"{cpu_outside:.1f} / {cpu_inside:.1f} / {cpu_netns:.1f}", "", None),
        (f"a request straight to a loopback server, median of {rounds * 4} (ms)", f"{direct:.2f}", "", None),
        ("what the port forward adds to a request (ms)", f"{forward - direct:.2f}",
         f"≤ {REQUEST_BUDGET_MS:.0f} ms", forward - direct <= REQUEST_BUDGET_MS),
        ("what the CONNECT proxy adds to a request (ms)", f"{tunnel - direct:.2f}",
         f"≤ {REQUEST_BUDGET_MS:.0f} ms", tunnel - direct <= REQUEST_BUDGET_MS),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=31)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.rounds)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
