"""chat/transport.py against a real HTTP server on 127.0.0.1: the JSON answer, and every failure a
ChatDown whose message names the host and the service's reason but never the token; no proxy from
the environment."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memento_core.chat.transport import ChatDown, request

SECRET = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"


class Service:
    """A server answering every request with ``status`` and ``body``; it keeps what it was sent."""

    def __init__(self):
        self.status, self.body, self.got = 200, b"{}", []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                service.got.append((self.command, self.path, self.rfile.read(length), dict(self.headers)))
                self.send_response(service.status)
                self.send_header("Content-Length", str(len(service.body)))
                self.end_headers()
                self.wfile.write(service.body)

            do_GET = do_PUT = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, status: int, body) -> None:
        self.status = status
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def service():
    s = Service()
    yield s
    s.close()


def test_the_json_answer_and_what_was_sent(service):
    service.answer(200, {"ok": True, "result": [1]})
    doc = request("POST", f"{service.url}/bot{SECRET}/sendMessage", body={"text": "hé"}, timeout=5,
                  secret=SECRET, headers={"Authorization": "Bearer x"})
    assert doc == {"ok": True, "result": [1]}
    [(method, path, sent, headers)] = service.got
    assert (method, path, json.loads(sent)) == ("POST", f"/bot{SECRET}/sendMessage", {"text": "hé"})
    assert headers["Content-Type"] == "application/json" and headers["Authorization"] == "Bearer x"


@pytest.mark.parametrize("status, body", [
    (401, {"ok": False, "description": f"Unauthorized for bot{SECRET}"}),
    (200, {"ok": False, "description": f"Bad Request: bot{SECRET} blocked"}),
])
def test_an_error_answer_says_the_services_reason_without_the_token(service, status, body):
    service.answer(status, body)
    with pytest.raises(ChatDown) as caught:
        request("POST", f"{service.url}/bot{SECRET}/getUpdates", body={}, timeout=5, secret=SECRET)
    message = str(caught.value)
    assert message.startswith(f"127.0.0.1:{service.url.rsplit(':', 1)[1]} answered HTTP {status}: ")
    assert SECRET not in message and "bot***" in message
    assert caught.value.status == status


@pytest.mark.parametrize("body, says", [(b"<html>gateway</html>", "with no JSON"),
                                        (b"[1, 2]", "with no JSON object")])
def test_an_answer_that_is_no_json_object_is_a_chat_down(service, body, says):
    service.answer(502 if b"html" in body else 200, body)
    with pytest.raises(ChatDown, match=says) as caught:
        request("GET", f"{service.url}/sync", timeout=5)
    assert caught.value.status == (502 if b"html" in body else 200)


def test_an_unreachable_service_is_named_by_its_host_never_its_token():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ChatDown) as caught:
        request("POST", f"http://127.0.0.1:{port}/bot{SECRET}/getUpdates", body={}, timeout=5, secret=SECRET)
    assert str(caught.value).startswith(f"cannot reach 127.0.0.1:{port}: ")
    assert SECRET not in str(caught.value) and caught.value.status is None


def test_a_proxy_in_the_environment_is_not_used(service, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(var, f"http://127.0.0.1:{dead}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    service.answer(200, {"ok": True})
    assert request("PUT", f"{service.url}/x", body={}, timeout=5) == {"ok": True}
    assert len(service.got) == 1
