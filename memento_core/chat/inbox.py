"""A message from either service in one shape, and who may steer (SPEC §18).

Only the listed chats and senders are obeyed: Telegram, a message in one of ``chats`` from one of
``senders`` (anyone there when ``senders`` is empty); Matrix, a message in ``room`` from one of
``senders``. Everything else is ignored and logged (logs/chat.log), never echoed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.model import MatrixChat, TelegramChat
from .matrix import reply_target, without_fallback

MAX_IN = 16 * 1024  # characters of a message acted on; the rest is cut (a note is for a worker to read)


@dataclass(frozen=True)
class Incoming:
    service: str  # "telegram" | "matrix"
    target: str  # where to answer: "telegram:<chat id>" or "matrix"
    where: str  # the chat id or room id it came from
    sender: str  # the sender's user id
    text: str  # the message's text (a Matrix reply's quoted fallback dropped)
    message_id: str  # Telegram's message_id, Matrix's event id
    reply_to: str | None  # the message it replies to


def from_telegram(update: dict) -> Incoming | None:
    """The text message of a getUpdates update; None for anything else (an edit, a sticker, a join)."""
    message = update.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("text"), str):
        return None
    chat = message.get("chat") if isinstance(message.get("chat"), dict) else {}
    sender = message.get("from") if isinstance(message.get("from"), dict) else {}
    replied = message.get("reply_to_message") if isinstance(message.get("reply_to_message"), dict) else {}
    chat_id = chat.get("id")
    return Incoming("telegram", f"telegram:{chat_id}", str(chat_id), str(sender.get("id")),
                    message["text"][:MAX_IN], str(message.get("message_id")),
                    str(replied["message_id"]) if isinstance(replied.get("message_id"), int) else None)


def from_matrix(event: dict, room: str) -> Incoming | None:
    """The text of an ``m.room.message`` event; None for anything else (an image, a redaction)."""
    content = event.get("content") if isinstance(event.get("content"), dict) else {}
    body = content.get("body")
    if not isinstance(body, str) or content.get("msgtype") not in ("m.text", "m.notice", "m.emote"):
        return None
    if isinstance(content.get("m.relates_to"), dict) and content["m.relates_to"].get("rel_type") == "m.replace":
        return None  # an edit of an earlier message: acted on once, as first sent
    reply_to = reply_target(content)
    return Incoming("matrix", "matrix", room, str(event.get("sender")),
                    without_fallback(body, reply_to is not None)[:MAX_IN], str(event.get("event_id")), reply_to)


def obeyed(message: Incoming, telegram: TelegramChat | None, matrix: MatrixChat | None) -> str:
    """'' when ``message`` comes from a listed chat and sender; else why it is ignored."""
    if message.service == "telegram":
        if telegram is None:
            return "telegram is not configured"
        try:
            chat, sender = int(message.where), int(message.sender)
        except ValueError:
            return "no chat or sender id"
        if chat not in telegram.chats:
            return "not a listed chat"
        if telegram.senders and sender not in telegram.senders:
            return "not a listed sender"
        return ""
    if matrix is None:
        return "matrix is not configured"
    if message.where != matrix.room:
        return "not the listed room"
    if message.sender not in matrix.senders:
        return "not a listed sender"
    return ""
