"""A real Matrix homeserver for the tests: Synapse (from PyPI, the dev extras) on 127.0.0.1.

:func:`start` writes a config of its own (SQLite, the client API only: no federation listener and
no federation with anyone, no key servers, no registration except through the shared secret,
rate limits out of the way), generates the signing key, starts ``synapse.app.homeserver`` in a
process group of its own and waits for ``/_matrix/client/versions``. :meth:`Homeserver.register`
makes an account through the admin API's shared-secret registration and returns its token.
:meth:`Homeserver.stop` ends the whole group and removes the folder.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SECRET = "memento-tests-shared-secret"
CONFIG = """\
server_name: "localhost"
pid_file: {dir}/homeserver.pid
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {dir}/homeserver.db
log_config: {dir}/log.yaml
media_store_path: {dir}/media_store
signing_key_path: {dir}/localhost.signing.key
registration_shared_secret: "{secret}"
macaroon_secret_key: "memento-tests-macaroon"
form_secret: "memento-tests-form"
report_stats: false
enable_registration: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
url_preview_enabled: false
enable_metrics: false
caches:
  sync_response_cache_duration: 0  # each test's client sees the room as it is now, not 2 minutes ago
rc_message: {{per_second: 1000, burst_count: 1000}}
rc_registration: {{per_second: 1000, burst_count: 1000}}
rc_login:
  address: {{per_second: 1000, burst_count: 1000}}
  account: {{per_second: 1000, burst_count: 1000}}
  failed_attempts: {{per_second: 1000, burst_count: 1000}}
rc_joins:
  local: {{per_second: 1000, burst_count: 1000}}
rc_invites:
  per_room: {{per_second: 1000, burst_count: 1000}}
  per_user: {{per_second: 1000, burst_count: 1000}}
"""
LOG = """\
version: 1
formatters: {{precise: {{format: '%(asctime)s %(name)s %(levelname)s %(message)s'}}}}
handlers: {{file: {{class: logging.FileHandler, formatter: precise, filename: {dir}/homeserver.log}}}}
root: {{level: WARNING, handlers: [file]}}
disable_existing_loggers: false
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Homeserver:
    def __init__(self, folder: Path, port: int, process: subprocess.Popen):
        self.folder, self.port, self.process = folder, port, process
        self.url = f"http://127.0.0.1:{port}"

    def register(self, name: str) -> tuple[str, str]:
        """A new account ``@name:localhost``: (its user id, its access token)."""
        nonce = self._json("GET", "/_synapse/admin/v1/register")["nonce"]
        password = "pw-" + name
        mac = hmac.new(SECRET.encode(), b"\0".join(x.encode() for x in (nonce, name, password, "notadmin")),
                       hashlib.sha1).hexdigest()
        doc = self._json("POST", "/_synapse/admin/v1/register",
                         {"nonce": nonce, "username": name, "password": password, "admin": False, "mac": mac})
        return doc["user_id"], doc["access_token"]

    def _json(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(15)
        except ProcessLookupError:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)


def start(timeout: float = 120.0) -> Homeserver:
    folder = Path(tempfile.mkdtemp(prefix="memento-synapse-"))
    port = free_port()
    config = folder / "homeserver.yaml"
    config.write_text(CONFIG.format(dir=folder, port=port, secret=SECRET))
    (folder / "log.yaml").write_text(LOG.format(dir=folder))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNAPSE_")}
    subprocess.run([sys.executable, "-m", "synapse.app.homeserver", "-c", str(config), "--generate-keys"],
                   check=True, capture_output=True, cwd=folder, env=env, timeout=timeout)
    with open(folder / "stdout.log", "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "synapse.app.homeserver", "-c", str(config)],
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=folder,
                                   env=env, start_new_session=True)
    server = Homeserver(folder, port, process)
    deadline = time.monotonic() + timeout
    while True:
        try:
            server._json("GET", "/_matrix/client/versions")
            return server
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                log = (folder / "stdout.log").read_text(errors="replace")[-3000:]
                server.stop()
                raise RuntimeError(f"Synapse did not start: {log}") from None
            time.sleep(0.25)
