"""A Telegram Bot API client (SPEC §18): ``getUpdates`` (long-poll with an offset) and ``sendMessage``.

Requests go to ``{api}/bot<token>/<method>`` (``api``: https://api.telegram.org, a self-hosted
Bot API server, or the tests' stand-in). Messages are sent as plain text (no ``parse_mode``):
whatever markup a task title or an agent's question holds is shown, never rendered.
"""

from __future__ import annotations

from .transport import ChatDown, request

MAX_TEXT = 4096  # sendMessage's limit, in characters


class Telegram:
    name = "telegram"

    def __init__(self, api: str, token: str):
        self.api = api.rstrip("/")
        self.token = token

    def _call(self, method: str, params: dict, timeout: float):
        doc = request("POST", f"{self.api}/bot{self.token}/{method}", body=params, timeout=timeout,
                      secret=self.token)
        if "result" not in doc:
            raise ChatDown(f"telegram {method}: an answer without a result")
        return doc["result"]

    def get_updates(self, offset: int | None, wait: int, timeout: float) -> list[dict]:
        """The updates after ``offset`` (a message each), waiting up to ``wait`` whole seconds for
        one (0: what is there now); ``timeout`` bounds the whole request."""
        params: dict = {"timeout": max(0, int(wait)), "allowed_updates": ["message"]}
        if offset is not None:
            params["offset"] = offset
        result = self._call("getUpdates", params, timeout)
        if not isinstance(result, list):
            raise ChatDown("telegram getUpdates: the result is not a list")
        return [u for u in result if isinstance(u, dict) and isinstance(u.get("update_id"), int)]

    def send(self, chat_id: int, text: str, reply_to: int | None, timeout: float) -> int:
        """Send ``text`` to ``chat_id`` (as a reply to ``reply_to`` when given); its message_id."""
        params: dict = {"chat_id": chat_id, "text": clip(text), "link_preview_options": {"is_disabled": True}}
        if reply_to is not None:
            params["reply_parameters"] = {"message_id": reply_to, "allow_sending_without_reply": True}
        result = self._call("sendMessage", params, timeout)
        if not isinstance(result, dict) or not isinstance(result.get("message_id"), int):
            raise ChatDown("telegram sendMessage: the result has no message_id")
        return result["message_id"]


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 2] + " …"
