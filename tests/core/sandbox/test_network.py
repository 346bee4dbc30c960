"""The agent's network (SPEC §13): ``[sandbox] network = "model"`` reaches only the model endpoint and
``allow``; hostile agents in the real bubblewrap sandbox, judged at the listeners this test runs."""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

from memento_core.config.load import config_from_dict, load_config
from memento_core.plan.scan import parse_plan
from memento_core.sandbox import network
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import AGENTS, PY, agent, entries, git

from . import test_sandbox
from .test_sandbox import needs_bwrap, sandboxed_ws

outside = test_sandbox.outside  # the fixture: a folder outside the project and outside /tmp

NET_TASK = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `{verify}grep -q done hello.txt`
  - context_files: [hello.txt]
"""


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


SENTINEL = b"SENTINEL\r\n\r\n"


class Listener:
    """A TCP (or unix) listener on this machine that records what each connection sends and answers
    it like a tiny HTTP server: ``answer`` as the body."""

    def __init__(self, family=socket.AF_INET, address=("127.0.0.1", 0), answer=b"the model says hi", raw=None):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(32)
        self.answer, self.received, self.accepted = answer, [], 0
        self.raw = raw or b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    @property
    def data(self) -> bytes:
        with self.lock:
            return b"".join(self.received)

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.accepted += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        conn.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data and (chunk := conn.recv(4096)):
                data += chunk
            conn.sendall(self.raw)
        except OSError:
            pass
        finally:
            conn.close()
            with self.lock:
                self.received.append(data)

    def others(self, limit: float = 15.0) -> tuple[int, bytes]:
        """(connections, bytes) from others so far. Our own connection, once accepted and every
        accepted one recorded, proves nothing is still on its way (the accept queue is first in,
        first out)."""
        import time

        with socket.socket(self.sock.family, socket.SOCK_STREAM) as own:
            own.settimeout(limit)
            own.connect(self.sock.getsockname())
            own.sendall(SENTINEL)
            got = own.recv(100)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with self.lock:
                if SENTINEL in self.received and len(self.received) == self.accepted:
                    self.received.remove(SENTINEL)
                    self.accepted -= 1
                    return len(self.received), b"".join(self.received)
            time.sleep(0.01)
        raise AssertionError(f"the listener at {self.sock.getsockname()!r} did not settle: {self.accepted} accepted, "
                             f"{self.received}, our own got {got!r}")

    def close(self):
        """Wake the accept first: closed under a blocked accept, the descriptor's number could be
        reused by the next test's listener, and this thread's retried accept would take its calls."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture
def listeners():
    made = []

    def make(*args, **kw):
        made.append(Listener(*args, **kw))
        return made[-1]

    yield make
    for listener in made:
        listener.close()


def proxy_folders(root: Path) -> list[str]:
    """The proxy folders of ``root``'s runs that are still there (each run removes its own)."""
    return glob.glob(f"/tmp/memento-net-{network.folder_tag(root)}-*")


def ws_with(tmp_path: Path, command: str, sandbox: str, verify: str = ""):
    ws = sandboxed_ws(tmp_path, command, extra=sandbox, tasks=NET_TASK.format(verify=verify))
    return ws


def succeeded(ws) -> bool:
    """True when the tick's entry is SUCCESS; else an AssertionError with its reason and the tick's log,
    whole: a run that failed under CI's load must say why."""
    entry = entries(ws)[0]
    if entry.status == "SUCCESS":
        return True
    log = ws.root / (entry.field("Log") or "logs/none")
    said = log.read_text(errors="replace") if log.is_file() else f"(no log at {log})"
    raise AssertionError(f"{entry.status}: {entry.field('Reason')}\n{entry.field('Verify Output')}\n--- log\n{said}")


# --------------------------------------------------------------------------- hostile agents


@needs_bwrap
def test_an_agent_reaches_no_port_but_its_endpoint_directly_or_through_the_proxy(tmp_path, listeners):
    model, victim = listeners(), listeners()
    exfil = agent("exfiltrates_over_network.py", str(victim.port))
    # verify runs the same attempt: it is confined with the same network.
    ws = ws_with(tmp_path / "model", exfil, f'allow = ["127.0.0.1:{model.port}"]\n', verify=f"{exfil} && ")
    assert run_tick(ws.root).exit_code == 0
    assert succeeded(ws)
    log = (ws.root / entries(ws)[0].log_path).read_text()
    assert "CONNECT: sent" in log and "403 Forbidden" in log  # it did reach the proxy, which refused
    assert victim.others() == (0, b"")
    assert f"[memento] network: refused 127.0.0.1:{victim.port}" in log
    assert proxy_folders(ws.root) == []  # each run's proxy removed its folder
    # The same agent with the host's network: the listener hears it (the test can see a leak).
    ws = ws_with(tmp_path / "all", exfil, 'network = "all"\n')
    run_tick(ws.root)
    assert b"SECRET-FROM-THE-AGENT" in victim.others()[1]


@needs_bwrap
def test_an_agent_reaches_no_unix_socket_outside(tmp_path, listeners):
    name = f"memento-test-{uuid.uuid4().hex[:8]}"
    abstract = listeners(socket.AF_UNIX, "\0" + name)
    in_tmp = listeners(socket.AF_UNIX, str(tmp_path / "agent.sock"))  # /tmp is private in the sandbox
    run_dir = None
    var_dir = Path(tempfile.mkdtemp(prefix="memento-test-", dir="/var/tmp"))  # a socket the host is listening on
    paths = [str(tmp_path / "agent.sock"), str(var_dir / "mysql.sock")]  # outside /run, /tmp and the home
    found = [abstract, in_tmp, listeners(socket.AF_UNIX, paths[1])]
    if os.access("/run", os.W_OK):  # a system socket such as /run/dbus/system_bus_socket
        run_dir = Path(tempfile.mkdtemp(prefix="memento-test-", dir="/run"))
        found.append(listeners(socket.AF_UNIX, str(run_dir / "bus.sock")))
        paths.append(str(run_dir / "bus.sock"))
    try:
        command = agent("connects_to_sockets.py", name, *paths)
        ws = ws_with(tmp_path / "model", command, "")
        assert run_tick(ws.root).exit_code == 0 and succeeded(ws)
        assert [s.others() for s in found] == [(0, b"")] * len(found)
        ws = ws_with(tmp_path / "none", command, 'network = "none"\n')
        assert run_tick(ws.root).exit_code == 0
        assert [s.others() for s in found] == [(0, b"")] * len(found)
        # The host's network: the abstract socket (and /run's) are reached; the test can see a leak.
        ws = ws_with(tmp_path / "all", command, 'network = "all"\n')
        run_tick(ws.root)
        assert abstract.others()[0] == 1 and all(s.others()[0] == 1 for s in found[2:])
    finally:
        shutil.rmtree(var_dir, ignore_errors=True)
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)


# --------------------------------------------------------------------------- well-behaved agents


@needs_bwrap
def test_the_command_preset_reaches_its_allow_hosts(tmp_path, listeners):
    model, tunnel = listeners(answer=b"from the model"), listeners(answer=b"through the tunnel")
    allow = f'allow = ["127.0.0.1:{model.port}", "localhost:{tunnel.port}"]\n'
    ws = ws_with(tmp_path / "get", agent("reaches_model.py", "get", f"http://127.0.0.1:{model.port}/v1/chat"), allow)
    assert run_tick(ws.root).exit_code == 0 and succeeded(ws)
    assert model.data.startswith(b"GET /v1/chat ") and (ws.root / "hello.txt").read_text() == "done from the model\n"
    # A CONNECT tunnel through the proxy to an allowed host (resolved outside: localhost).
    ws = ws_with(tmp_path / "tunnel", agent("reaches_model.py", "connect", f"localhost:{tunnel.port}"), allow)
    assert run_tick(ws.root).exit_code == 0 and succeeded(ws)
    assert tunnel.data.startswith(b"GET /tunnel ") and "through the tunnel" in (ws.root / "hello.txt").read_text()


@needs_bwrap
def test_a_cli_reaches_the_endpoint_of_its_base_url(tmp_path, listeners, monkeypatch, outside):
    """The claude preset's endpoint is its ANTHROPIC_BASE_URL: a loopback one is forwarded as it is."""
    model = listeners(answer=b"claude's model")
    (outside / "bin").mkdir()
    (outside / "home").mkdir()
    fake = outside / "bin" / "claude"  # outside /tmp (private in the sandbox) and the home (hidden)
    fake.write_text(f"#!/bin/sh\nexec {PY} {AGENTS / 'reaches_model.py'} env ANTHROPIC_BASE_URL /v1/messages\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{outside / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{model.port}")
    monkeypatch.setenv("HOME", str(outside / "home"))
    ws = ws_with(tmp_path, "unused", "")
    ws.config_path.write_text(ws.config_path.read_text().replace('preset = "command"', 'preset = "claude"'))
    git(ws.root, "commit", "-qam", "claude")
    doctor = subprocess.run([sys.executable, "-m", "memento_core.cli", "doctor"], cwd=ws.root, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert f"may reach: 127.0.0.1:{model.port} (ANTHROPIC_BASE_URL)" in doctor.stdout
    assert run_tick(ws.root).exit_code == 0
    assert succeeded(ws)
    assert model.data.startswith(b"GET /v1/messages ") and "claude's model" in (ws.root / "hello.txt").read_text()


@needs_bwrap
def test_a_persons_own_proxy_is_chained_for_allowed_hosts_only(tmp_path, listeners, monkeypatch):
    upstream = listeners(raw=b"HTTP/1.1 200 Connection Established\r\n\r\n")
    monkeypatch.setenv("HTTPS_PROXY", f"http://me:s3cret@127.0.0.1:{upstream.port}")
    allow = 'allow = ["api.example.invalid:443"]\n'
    ws = ws_with(tmp_path / "ok", agent("reaches_model.py", "connect", "api.example.invalid:443"), allow)
    assert run_tick(ws.root).exit_code == 0 and succeeded(ws)
    ws = ws_with(tmp_path / "no", agent("reaches_model.py", "connect", "other.example.invalid:443"), allow)
    run_tick(ws.root)
    assert entries(ws)[0].status == "FAILED"  # the agent was refused: 403
    count, data = upstream.others()
    assert count == 1 and data.startswith(b"CONNECT api.example.invalid:443 HTTP/1.1\r\n")
    assert b"Proxy-Authorization: Basic bWU6czNjcmV0\r\n" in data  # me:s3cret


class ForwardingProxy(Listener):
    """The person's own proxy, as squid does it: requests in absolute form, kept alive and pipelined,
    each sent on to its host; ``CONNECT`` tunnels. Every name is this machine: ``names`` maps a host
    to the Listener that plays it."""

    def __init__(self, names: dict):
        self.names, self.asked = names, []
        super().__init__()

    def _one(self, conn):
        from urllib.parse import urlsplit

        conn.settimeout(5)
        data = b""
        try:
            while chunk := conn.recv(4096):
                data += chunk
                while b"\r\n\r\n" in data:
                    head, _, data = data.partition(b"\r\n\r\n")
                    method, target = head.split(b" ")[:2]
                    self.asked.append(head.split(b"\r\n")[0])
                    if method == b"CONNECT":
                        conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                        port = self.names[target.decode().rsplit(":", 1)[0]].port
                        with socket.create_connection(("127.0.0.1", port)) as out:
                            out.sendall(data + conn.recv(4096))
                            conn.sendall(out.recv(4096))
                        return
                    port = self.names[urlsplit(target.decode()).hostname].port
                    with socket.create_connection(("127.0.0.1", port)) as out:
                        out.sendall(head + b"\r\n\r\n")
                        conn.sendall(out.recv(4096))
        except (OSError, KeyError, ValueError, IndexError):
            pass
        finally:
            conn.close()


@needs_bwrap
def test_nothing_pipelined_or_smuggled_in_a_url_passes_the_filter(tmp_path, listeners, monkeypatch):
    """Under the person's proxy, a plain request goes through a CONNECT to its allowed host, and its
    URL's host is the one checked."""
    model, victim = listeners(answer=b"from the model"), listeners()
    upstream = ForwardingProxy({"api.example.invalid": model, "evil.invalid": victim})
    try:
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{upstream.port}")
        command = agent("smuggles_through_proxy.py", "api.example.invalid", "evil.invalid")
        ws = ws_with(tmp_path, command, 'allow = ["*.example.invalid"]\n')
        assert run_tick(ws.root).exit_code == 0 and succeeded(ws)
        assert victim.others() == (0, b"")
        assert upstream.asked == [b"CONNECT api.example.invalid:80 HTTP/1.1"]
        head = model.data.split(b"\r\n\r\n")[0].split(b"\r\n")
        assert head[0] == b"GET /ok HTTP/1.1" and b"Host: api.example.invalid" in head and b"Connection: close" in head
        log = (ws.root / entries(ws)[0].log_path).read_text()
        assert "[memento] network: refused evil.invalid:80" in log and "from the model" in log
    finally:
        upstream.close()


def test_the_host_sockets_covered_are_those_the_sandbox_shows_from_the_host():
    from memento_core.sandbox import proxy

    argv = ["bwrap", "--ro-bind", "/", "/", "--setenv", "--bind", "/x", "--tmpfs", "/tmp", "--tmpfs", "/home/me",
            "--ro-bind", "/home/me/tools", "/home/me/tools", "--bind", "/srv/p", "/srv/p",
            "--ro-bind", "/srv/p/.git", "/srv/p/.git", "--unshare-net", "--", "--bind", "/var", "/var"]
    paths = ["/var/lib/mysql/mysql.sock", "/tmp/a.sock", "/home/me/b.sock", "/home/me/tools/c.sock",
             "/srv/p/d.sock", "/srv/p/.git/e.sock", "/x/f.sock"]
    assert proxy._host_paths(argv, paths) == ["/var/lib/mysql/mysql.sock", "/home/me/tools/c.sock", "/x/f.sock"]


# --------------------------------------------------------------------------- bad input


def test_a_bad_allow_entry_stops_the_tick_with_exit_2(tmp_path):
    ws = sandboxed_ws(tmp_path, agent("does_task.py", "hello.txt", "done"), mode="none",
                      extra='allow = ["not a host"]\n')
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 2 and "is not a host or host:port" in outcome.message
    assert not (ws.root / "hello.txt").exists()


@needs_bwrap
def test_a_cli_whose_endpoint_cannot_be_known_stops_the_tick(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("OPENCLAW_CONFIG_PATH", raising=False)
    monkeypatch.delenv("OPENCLAW_STATE_DIR", raising=False)
    ws = sandboxed_ws(tmp_path / "ws", agent("does_task.py", "hello.txt", "done"), extra='network = "model"\n')
    ws.config_path.write_text(ws.config_path.read_text().replace('preset = "command"', 'preset = "openclaw"'))
    git(ws.root, "commit", "-qam", "openclaw")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 2
    assert "openclaw preset's model endpoint cannot be known" in outcome.message
    assert "[sandbox] allow" in outcome.message and "memento.toml:" in outcome.message
    assert str(ws.root) not in outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == [" "] and entries(ws) == []
    # Naming the host in allow is the way out (here a host nothing listens on: the run itself fails).
    ws.config_path.write_text(ws.config_path.read_text() + 'allow = ["gateway.example:443"]\n')
    config = load_config(ws.config_path)
    network.check(config, path=ws.config_path)  # no error


# --------------------------------------------------------------------------- the endpoints of each preset


def _cfg(preset: str, **agent) -> object:
    return config_from_dict({"agent": {"preset": preset, **agent}})


def _shown(preset: str, env: dict, home: Path, **agent) -> tuple[list[str], str]:
    found = network.reach(_cfg(preset, **agent), env=env, home=str(home))
    return [str(e) for e in found.endpoints], found.unknown


def test_endpoints_of_claude_gemini_and_aider(tmp_path):
    assert _shown("claude", {}, tmp_path) == (["api.anthropic.com:443"], "")
    assert _shown("claude", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080/x"}, tmp_path) == (["127.0.0.1:8080"], "")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://gw.corp:9443"}}))
    (tmp_path / ".claude" / ".credentials.json").write_text("{}")
    assert _shown("claude", {}, tmp_path) == (["gw.corp:9443", "platform.claude.com:443"], "")
    assert "CLAUDE_CODE_USE_BEDROCK" in _shown("claude", {"CLAUDE_CODE_USE_BEDROCK": "1"}, tmp_path)[1]
    assert _shown("gemini", {}, tmp_path) == (["generativelanguage.googleapis.com:443"], "")
    assert _shown("gemini", {"GOOGLE_GEMINI_BASE_URL": "http://localhost:5000"}, tmp_path) == (["localhost:5000"], "")
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "oauth_creds.json").write_text("{}")
    assert _shown("gemini", {}, tmp_path)[0] == ["generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443",
                                                 "oauth2.googleapis.com:443", "www.googleapis.com:443"]
    assert _shown("aider", {}, tmp_path, model="sonnet") == (["api.anthropic.com:443"], "")
    assert _shown("aider", {"OPENAI_API_BASE": "http://127.0.0.1:9/v1"}, tmp_path, model="openai/mock") == (
        ["127.0.0.1:9"], "")
    assert "names no provider" in _shown("aider", {}, tmp_path, model="acme/secret-model")[1]


def test_endpoints_of_codex_and_openclaw(tmp_path):
    assert _shown("codex", {}, tmp_path) == (["api.openai.com:443"], "")
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text('model_provider = "mock"\n[model_providers.mock]\nbase_url = "http://127.0.0.1:7/v1"\n')
    assert _shown("codex", {"CODEX_HOME": str(codex)}, tmp_path) == (["127.0.0.1:7"], "")
    (codex / "config.toml").write_text('model_provider = "azure"\n')
    assert "has no base_url" in _shown("codex", {"CODEX_HOME": str(codex)}, tmp_path)[1]
    (codex / "config.toml").write_text("")
    (codex / "auth.json").write_text(json.dumps({"tokens": {"access_token": "x"}}))
    assert _shown("codex", {"CODEX_HOME": str(codex)}, tmp_path)[0] == [
        "api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"]
    assert "no model set" in _shown("openclaw", {}, tmp_path)[1]
    (tmp_path / ".openclaw").mkdir()
    (tmp_path / ".openclaw" / "openclaw.json").write_text(
        '{\n // JSON5\n "models": {"providers": {"mock": {"baseUrl": "http://127.0.0.1:6/v1",},}},\n'
        ' "agents": {"defaults": {"model": {"primary": "mock/m"}}}}\n')
    assert _shown("openclaw", {}, tmp_path) == (["127.0.0.1:6"], "")
    assert _shown("openclaw", {}, tmp_path, model="anthropic/claude") == (["api.anthropic.com:443"], "")


def test_command_and_script_reach_only_allow():
    config = config_from_dict({"agent": {"preset": "command", "command": "x"}, "sandbox": {"allow": ["pypi.org"]}})
    found = network.reach(config, env={})
    assert found.endpoints == () and [str(p) for p in found.allow] == ["pypi.org"] and not found.unknown
    assert network.describe(config, env={}) == ["pypi.org ([sandbox] allow)",
                                                "the command preset has no model endpoint: only [sandbox] allow"]


# --------------------------------------------------------------------------- the run's processes


def _left(*markers: str) -> list[int]:
    return sorted({pid for m in markers for pid in test_sandbox.marked_processes(m)})


@needs_bwrap
def test_a_timeout_stops_the_proxy_the_forwarder_and_the_agent(tmp_path):
    pidfile = f".memento/worker/net-{os.getpid()}.pid"
    ws = sandboxed_ws(tmp_path, agent("sleeps.py", pidfile), tasks=NET_TASK.format(verify="").replace(
        "  - context_files", "  - timeout: 2s\n  - context_files"))
    try:
        outcome = run_tick(ws.root)
        assert outcome.results[0].reason.startswith("agent timed out after 2s"), outcome.results[0].reason
        assert _left(pidfile, str(ws.root)) == []  # the agent, inner.py, bwrap, proxy.py
    finally:
        for pid in _left(pidfile, str(ws.root)):
            os.kill(pid, 9)
    assert proxy_folders(ws.root) == []


def _stop_a_running_tick(tmp_path: Path, sig: int, name: str):
    """A tick whose agent runs in the sandbox, sent ``sig`` once the agent started: (its workspace, what
    of the run is still alive once the tick is gone and the run had a while to end)."""
    import time

    pidfile = f".memento/worker/{name}-{os.getpid()}.pid"
    ws = sandboxed_ws(tmp_path, agent("sleeps.py", pidfile))
    tick = subprocess.Popen([sys.executable, "-m", "memento_core.tick", "--project", str(ws.root)],
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (ws.root / pidfile).exists() and time.monotonic() < deadline and tick.poll() is None:
            time.sleep(0.05)
        assert (ws.root / pidfile).exists(), "the agent never started"
        tick.send_signal(sig)
        tick.wait(timeout=60)
        deadline = time.monotonic() + 30
        while (_left(pidfile, str(ws.root)) or proxy_folders(ws.root)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return ws, _left(pidfile, str(ws.root))
    finally:
        tick.kill()
        tick.wait()
        for pid in _left(pidfile, str(ws.root)):
            os.kill(pid, 9)


@needs_bwrap
def test_sigterm_to_the_tick_stops_the_whole_run(tmp_path):
    import signal

    ws, left = _stop_a_running_tick(tmp_path, signal.SIGTERM, "term")
    assert left == [] and proxy_folders(ws.root) == []


@needs_bwrap
def test_a_killed_tick_takes_the_whole_run_with_it(tmp_path):
    """kill -9 of the tick: the proxy gets SIGTERM (its parent died), bwrap and the sandbox go with it."""
    import signal

    ws, left = _stop_a_running_tick(tmp_path, signal.SIGKILL, "kill")
    assert left == [] and proxy_folders(ws.root) == []


@needs_bwrap
@pytest.mark.parametrize("net", ["model", "none"])
def test_a_socket_gone_since_the_prefix_was_made_does_not_stop_a_run(tmp_path, listeners, net):
    """The sockets under /run are found when each run starts (the agent's prefix serves verify too)."""
    from memento_core import sandbox

    if not os.access("/run", os.W_OK):
        pytest.skip("/run is not writable here: no socket to make there")
    run_dir = Path(tempfile.mkdtemp(prefix="memento-test-", dir="/run"))
    try:
        gone = listeners(socket.AF_UNIX, str(run_dir / "gone.sock"))
        ws = sandboxed_ws(tmp_path, "true", extra=f'network = "{net}"\n')
        wrap = sandbox.bwrap_prefix(ws, load_config(ws.config_path), binary=sandbox.bwrap_binary())
        gone.close()
        shutil.rmtree(run_dir)
        proc = subprocess.run([*wrap, "/bin/sh", "-c", "echo ran"], cwd=ws.root, capture_output=True, text=True,
                              timeout=60)
        assert (proc.returncode, proc.stdout) == (0, "ran\n"), proc.stderr
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


@needs_bwrap
def test_a_sandbox_whose_set_up_failed_is_started_again_and_a_command_that_ran_is_not(tmp_path):
    """bwrap's own set-up can fail (a person's editor renames docs/MASTER_PLAN.md over the file
    bwrap is binding): the command never ran, so proxy.py starts the sandbox again. A command that
    ran and failed is never run twice (inner.py says it started before it runs it)."""
    from memento_core import sandbox

    ws = sandboxed_ws(tmp_path, "true", extra='network = "none"\n')
    counter, fails = tmp_path / "bwrap-starts", tmp_path / "fail-once"
    fake = tmp_path / "bwrap-failing-once"
    fake.write_text(f"#!/bin/sh\necho x >> {counter}\nif [ -e {fails} ]; then rm {fails}; "
                    "echo 'bwrap: Can not bind mount: Unable to find it in mount table' >&2; exit 1; fi\n"
                    f'exec {sandbox.bwrap_binary()} "$@"\n')
    fake.chmod(0o755)
    wrap = sandbox.bwrap_prefix(ws, load_config(ws.config_path), binary=str(fake))
    runs = ws.root / ".memento" / "worker" / "runs"

    fails.write_text("")
    proc = subprocess.run([*wrap, "/bin/sh", "-c", f"echo ran >> {runs}"], cwd=ws.root, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert counter.read_text().count("x") == 2 and runs.read_text() == "ran\n"  # once, on the second start

    counter.unlink()
    runs.unlink()
    proc = subprocess.run([*wrap, "/bin/sh", "-c", f"echo ran >> {runs}; exit 1"], cwd=ws.root,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and runs.read_text() == "ran\n" and counter.read_text().count("x") == 1
