"""What the notification tests share (SPEC §15): a real JSON webhook on 127.0.0.1 that Apprise's
``json://`` URL posts to (down until started), (the ``receiver`` fixture in tests/core/conftest.py), a plan whose T-1 blocks, and
[notify] urls written into a workspace's memento.toml and committed."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.core.scenarios.test_engine import agent


class Receiver:
    """A JSON webhook on 127.0.0.1: bound from the start (so its port stays ours), listening
    only while ``up``; what it received, in order."""

    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append({"path": self.path, **json.loads(body or b"{}")})
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        self.server.daemon_threads = True
        self.server.server_bind()  # bound, not listening: a connection is refused (down)
        self.port = self.server.server_address[1]
        self.thread: threading.Thread | None = None

    def url(self, path: str = "hook") -> str:
        return f"json://127.0.0.1:{self.port}/{path}"

    def start(self) -> None:
        self.server.server_activate()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.thread is not None:
            self.server.shutdown()
            self.thread.join(10)
        self.server.server_close()


def task(n: int, verify: str = "") -> str:
    return (f"- [ ] `T-{n}` [MODULE:m] Write file {n}\n  - verify: `{verify or f'grep -q done T-{n}.txt'}`\n"
            f"  - context_files: [T-{n}.txt]\n")


# T-1 never passes; three more keep the share of blocked tasks under the breaker's 30%.
ONE_BLOCKS = task(1, "test -f never.txt") + task(2) + task(3) + task(4)

WRITES = agent("does_task.py", "{task_id}.txt", "done")



def with_notify(ws, *urls: str, events: str = "") -> None:
    text = ws.config_path.read_text() + "[notify]\nurls = [" + ", ".join(f'"{u}"' for u in urls) + "]\n"
    if events:
        text += f"events = {events}\n"
    ws.config_path.write_text(text)
    import subprocess

    subprocess.run(["git", "commit", "-qam", "notify"], cwd=ws.root, check=True)

