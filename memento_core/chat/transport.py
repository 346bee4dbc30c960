"""One JSON request to a chat service with a deadline (SPEC §18); its errors never hold a token.

The standard library's urllib: the tick's chat round is synchronous and bounded (3 s), and
nothing here needs more than a POST, a PUT or a GET with a JSON answer.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

MAX_ANSWER = 8 * 1024 * 1024  # a sync answer of a busy room stays well under this


class ChatDown(Exception):
    """The service could not be reached or refused the request; the message is safe to log."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def request(method: str, url: str, *, body: dict | None = None, headers: dict | None = None,
            timeout: float, secret: str = "") -> dict:
    """The JSON object the service answered; ChatDown when it is down, slow past ``timeout``,
    or answers an error (its ``description`` / ``error`` said, ``secret`` never)."""
    data = json.dumps(body).encode("utf-8") if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "User-Agent": "memento-chat", **(headers or {})})
    try:
        # No proxy from the environment: the chat host is reached as configured (a proxy
        # variable meant for the agent's sandbox must not carry the token elsewhere).
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=max(0.1, timeout)) as answer:
            raw = answer.read(MAX_ANSWER + 1)
            status = answer.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(64 * 1024), exc.code
    except (TimeoutError, urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ChatDown(_scrub(f"cannot reach {_host(url)}: {reason}", secret)) from None
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        raise ChatDown(f"{_host(url)} answered HTTP {status} with no JSON", status) from None
    if not isinstance(doc, dict):
        raise ChatDown(f"{_host(url)} answered HTTP {status} with no JSON object", status)
    if status >= 400 or doc.get("ok") is False:
        why = doc.get("description") or doc.get("error") or doc.get("errcode") or "an error"
        raise ChatDown(_scrub(f"{_host(url)} answered HTTP {status}: {why}", secret)[:300], status)
    return doc


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc or "the service"


def _scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text
