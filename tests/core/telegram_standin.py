"""A local stand-in of the Telegram Bot API methods Memento uses (getUpdates, sendMessage).

Telegram's servers cannot run here; this answers as https://core.telegram.org/bots/api says:
requests to ``/bot<token>/<method>`` with JSON parameters, answers ``{"ok": true, "result": …}``
or ``{"ok": false, "error_code": N, "description": "…"}``; ``getUpdates`` returns the
``Update`` objects with ``update_id`` at least ``offset`` (an offset confirms and forgets the
earlier ones), waiting up to ``timeout`` seconds for one; ``sendMessage`` takes ``chat_id``,
``text`` (1-4096 characters), ``reply_parameters`` and returns the sent ``Message``. The person
is played by :meth:`say`, which queues the update Telegram would deliver.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BOT = {"id": 7000001, "is_bot": True, "first_name": "Memento", "username": "memento_test_bot"}


class TelegramStandIn:
    def __init__(self, token: str = "123456:ABCdefGhIJKlmnoPQRstuVWXyz0123456789"):
        self.token = token
        self.updates: list[dict] = []
        self.sent: list[dict] = []  # the parameters of every sendMessage accepted
        self.requests: list[tuple[str, dict]] = []
        self.paths: list[str] = []  # every request's path, a wrong token's included
        self.messages: dict[int, dict] = {}  # message_id -> Message, for replies
        self.next_update = 500
        self.next_message = 100
        self.cond = threading.Condition()
        self.server: ThreadingHTTPServer | None = None
        self.port = 0

    # ---------------------------------------------------------------- the person

    def say(self, chat_id: int, from_id: int, text: str, reply_to: int | None = None) -> int:
        """The person (``from_id``) writes ``text`` in ``chat_id``, as a reply to the message
        ``reply_to`` when given; the new message's id."""
        with self.cond:
            message = {"message_id": self._message_id(), "date": int(time.time()),
                       "from": {"id": from_id, "is_bot": False, "first_name": "Person"},
                       "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "group"}, "text": text}
            if reply_to is not None:
                message["reply_to_message"] = self.messages[reply_to]
            self.messages[message["message_id"]] = message
            self.next_update += 1
            self.updates.append({"update_id": self.next_update, "message": message})
            self.cond.notify_all()
            return message["message_id"]

    def _message_id(self) -> int:
        self.next_message += 1
        return self.next_message

    # ---------------------------------------------------------------- the Bot API

    def handle(self, path: str, params: dict) -> tuple[int, dict]:
        self.paths.append(path)
        prefix = f"/bot{self.token}/"
        if not path.startswith(prefix):
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        method = path[len(prefix):]
        self.requests.append((method, params))
        if method == "getUpdates":
            return 200, {"ok": True, "result": self._get_updates(params)}
        if method == "sendMessage":
            return self._send(params)
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def _get_updates(self, params: dict) -> list[dict]:
        offset, wait = params.get("offset"), float(params.get("timeout") or 0)
        deadline = time.monotonic() + wait
        with self.cond:
            if isinstance(offset, int):
                self.updates = [u for u in self.updates if u["update_id"] >= offset]  # confirmed: forgotten
            while not self.updates and time.monotonic() < deadline:
                self.cond.wait(deadline - time.monotonic())
            return list(self.updates[: int(params.get("limit") or 100)])

    def _send(self, params: dict) -> tuple[int, dict]:
        text = params.get("text")
        if not isinstance(params.get("chat_id"), (int, str)):
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: chat_id is empty"}
        if not isinstance(text, str) or not text.strip():
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message text is empty"}
        if len(text) > 4096:
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message is too long"}
        with self.cond:
            message = {"message_id": self._message_id(), "date": int(time.time()), "from": BOT,
                       "chat": {"id": params["chat_id"], "type": "private"}, "text": text}
            reply = (params.get("reply_parameters") or {}).get("message_id")
            if reply in self.messages:
                message["reply_to_message"] = self.messages[reply]
            self.messages[message["message_id"]] = message
            self.sent.append(dict(params, message_id=message["message_id"]))
        return 200, {"ok": True, "result": message}

    # ---------------------------------------------------------------- the server

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> None:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    params = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    params = None
                if not isinstance(params, dict):
                    status, doc = 400, {"ok": False, "error_code": 400, "description": "Bad Request: bad JSON"}
                else:
                    status, doc = standin.handle(self.path, params)
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            with self.cond:
                self.cond.notify_all()
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def sent_to(self, chat_id: int) -> list[dict]:
        return [s for s in self.sent if s["chat_id"] == chat_id]
