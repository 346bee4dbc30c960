"""A Matrix client-server API client (SPEC §18): ``/sync`` with a since token, ``m.room.message``.

Memento's account reads the one configured room: ``/sync`` with a filter that keeps only that
room's messages, and sends plain ``m.text`` (no ``formatted_body``: markup is shown, never
rendered). An answer to a question is a message whose ``m.relates_to.m.in_reply_to`` names the
question's event; the quoted fallback older clients put before a reply's text is dropped.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from .transport import ChatDown, request

MAX_TEXT = 16000  # well under Synapse's 64 KiB event limit


class Matrix:
    name = "matrix"

    def __init__(self, homeserver: str, user: str, room: str, token: str):
        self.homeserver = homeserver.rstrip("/")
        self.user = user
        self.room = room
        self.token = token

    def _call(self, method: str, path: str, timeout: float, body: dict | None = None) -> dict:
        return request(method, f"{self.homeserver}/_matrix/client/v3{path}", body=body, timeout=timeout,
                       headers={"Authorization": f"Bearer {self.token}"}, secret=self.token)

    def sync(self, since: str | None, wait_ms: int, timeout: float) -> tuple[str, list[dict], bool]:
        """(the next since token, the room's new message events oldest first, whether the room
        is among the account's invites). Without ``since``: only the token (what was said before
        Memento listened is not acted on)."""
        room_filter = {"room": {"rooms": [self.room], "timeline": {"types": ["m.room.message"], "limit": 100},
                                "state": {"types": []}, "ephemeral": {"types": []},
                                "account_data": {"types": []}},
                       "presence": {"types": []}, "account_data": {"types": []}}
        query = f"?timeout={max(0, int(wait_ms))}&filter={quote(json.dumps(room_filter, separators=(',', ':')))}"
        if since:
            query += f"&since={quote(since)}"
        doc = self._call("GET", f"/sync{query}", timeout)
        token = doc.get("next_batch")
        if not isinstance(token, str):
            raise ChatDown("matrix /sync: an answer without next_batch")
        rooms = doc.get("rooms") if isinstance(doc.get("rooms"), dict) else {}
        invited = self.room in (rooms.get("invite") or {})
        if not since:
            return token, [], invited
        joined = (rooms.get("join") or {}).get(self.room) or {}
        events = ((joined.get("timeline") or {}).get("events")) or []
        return token, [e for e in events if isinstance(e, dict) and e.get("type") == "m.room.message"], invited

    def join(self, timeout: float) -> None:
        """Accept the invitation to the configured room (and only to it)."""
        self._call("POST", f"/rooms/{quote(self.room, safe='')}/join", timeout, body={})

    def send(self, text: str, reply_to: str | None, txn: str, timeout: float) -> str:
        """Send ``text`` to the room (as a reply to the event ``reply_to`` when given); its event id.
        ``txn`` makes a retried send the same event (the server keeps one per transaction id)."""
        content: dict = {"msgtype": "m.notice", "body": clip(text)}  # a bot speaks in notices
        if reply_to:
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
        doc = self._call("PUT", f"/rooms/{quote(self.room, safe='')}/send/m.room.message/{quote(txn, safe='')}",
                         timeout, body=content)
        event_id = doc.get("event_id")
        if not isinstance(event_id, str):
            raise ChatDown("matrix send: an answer without event_id")
        return event_id


def reply_target(content: dict) -> str | None:
    """The event a message replies to (``m.relates_to.m.in_reply_to.event_id``), or None."""
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict):
        return None
    reply = relates.get("m.in_reply_to")
    event_id = reply.get("event_id") if isinstance(reply, dict) else None
    return event_id if isinstance(event_id, str) else None


def without_fallback(body: str, is_reply: bool) -> str:
    """A reply's text without the quoted fallback (``> <@user> question`` lines, then a blank
    line) that clients put before it; other text as it is."""
    if not is_reply:
        return body
    lines = body.split("\n")
    if not lines or not lines[0].startswith(">"):
        return body
    i = 0
    while i < len(lines) and lines[i].startswith(">"):
        i += 1
    if i < len(lines) and lines[i].strip() == "":
        i += 1
    return "\n".join(lines[i:])


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 2] + " …"
