"""memento.toml's [chat] validated: the Telegram and Matrix rooms, never a token (SPEC §18).

A token written in memento.toml is an error (the file is committed and the
agent reads it): tokens live in files of mode 0600 named by ``token_file``.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import MementoError
from .model import MatrixChat, TelegramChat
from .validator import Validator, key_line

# Keys that would hold a secret: never in memento.toml, which is committed and read by the agent.
_SECRET_KEYS = ("token", "access_token", "bot_token", "password", "secret", "api_key")
_BOT_TOKEN_RE = re.compile(r"^\d{5,}:[A-Za-z0-9_-]{30,}$")  # what BotFather hands out
_MATRIX_TOKEN_RE = re.compile(r"^(syt|mct|syl)_[A-Za-z0-9_=-]{10,}$")  # Synapse's access tokens


def _chat_line(v: Validator, service: str, key: str) -> int:
    """The line of ``key`` of ``[chat] service``: an inline table's line, or [chat.service]'s key."""
    return key_line(v.text, f"chat.{service}", key) if f"chat.{service}" in v.text.replace(" ", "") \
        else key_line(v.text, "chat", service)


def _chat_fail(v: Validator, service: str, key: str, message: str) -> MementoError:
    return MementoError(f"[chat] {service}.{key}: {message}", path=v.path, line=_chat_line(v, service, key))


def chat_section(v: Validator) -> dict[str, Any]:
    """[chat] telegram and matrix (SPEC §18), validated. A token written here is an error: tokens
    live in files of mode 0600 named by ``token_file`` (chat/tokens.py checks those)."""
    table = v.table("chat")
    for key, value in table.items():
        if key in _SECRET_KEYS or (isinstance(value, str) and _looks_like_token(value)):
            raise _token_here(v, "", key, key_line(v.text, "chat", key))
        if key not in ("telegram", "matrix"):
            continue
        if not isinstance(value, dict):
            raise v.fail("chat", key, f"expected a table such as {key} = {{ token_file = \"…\", … }}, got {value!r}")
        for inner, item in value.items():
            if inner in _SECRET_KEYS or (isinstance(item, str) and _looks_like_token(item)):
                raise _token_here(v, key, inner, _chat_line(v, key, inner))
    out: dict[str, Any] = {}
    if "telegram" in table:
        out["chat_telegram"] = _telegram(v, table["telegram"])
    if "matrix" in table:
        out["chat_matrix"] = _matrix(v, table["matrix"])
    return out


def _looks_like_token(value: str) -> bool:
    value = value.strip()
    return bool(_BOT_TOKEN_RE.match(value) or _MATRIX_TOKEN_RE.match(value))


def _token_here(v: Validator, service: str, key: str, line: int) -> MementoError:
    where = f"[chat] {service}.{key}" if service else f"[chat] {key}"
    return MementoError(f"{where}: a token is never written in memento.toml (it is committed, and the agent "
                        "reads it): put it in a file of mode 0600 and name that file with token_file",
                        path=v.path, line=line)


def _token_file(v: Validator, service: str, table: dict) -> str:
    path = table.get("token_file")
    if not isinstance(path, str) or not path.strip():
        raise _chat_fail(v, service, "token_file", 'expected the path of a file of mode 0600 holding the token, '
                         f'e.g. "~/.config/memento/{service}-token"')
    return path.strip()


def _telegram(v: Validator, table: dict) -> TelegramChat:
    known = ("token_file", "chats", "senders", "api")
    for key in table:
        if key not in known:
            raise _chat_fail(v, "telegram", key, f"unknown key; one of {', '.join(known)}")
    token_file = _token_file(v, "telegram", table)
    chats = table.get("chats")
    if not isinstance(chats, list) or not chats or not all(_whole(c) for c in chats):
        raise _chat_fail(v, "telegram", "chats", f"expected a list of chat ids such as [123456789], got {chats!r}")
    senders = table.get("senders", [])
    if not isinstance(senders, list) or not all(_whole(s) for s in senders):
        raise _chat_fail(v, "telegram", "senders", f"expected a list of user ids such as [111222333], got {senders!r}")
    api = table.get("api", "https://api.telegram.org")
    if not isinstance(api, str) or not re.match(r"^https?://[^\s/]+(/[^\s]*)?$", api.strip()):
        raise _chat_fail(v, "telegram", "api", f'expected a URL such as "https://api.telegram.org", got {api!r}')
    return TelegramChat(token_file, tuple(chats), tuple(senders), api.strip().rstrip("/"))


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_MATRIX_USER_RE = re.compile(r"^@[^:\s]+:\S+$")


def _matrix(v: Validator, table: dict) -> MatrixChat:
    known = ("homeserver", "user", "token_file", "room", "senders")
    for key in table:
        if key not in known:
            raise _chat_fail(v, "matrix", key, f"unknown key; one of {', '.join(known)}")
    homeserver = table.get("homeserver")
    if not isinstance(homeserver, str) or not re.match(r"^https?://[^\s/]+/?$", homeserver.strip()):
        raise _chat_fail(v, "matrix", "homeserver", f'expected a URL such as "https://matrix.example.org", '
                         f"got {homeserver!r}")
    user = table.get("user")
    if not isinstance(user, str) or not _MATRIX_USER_RE.match(user.strip()):
        raise _chat_fail(v, "matrix", "user", f'expected a Matrix user id such as "@memento:example.org", got {user!r}')
    token_file = _token_file(v, "matrix", table)
    room = table.get("room")
    if not isinstance(room, str) or not re.match(r"^!\S+$", room.strip()):  # v12 room ids have no server part
        raise _chat_fail(v, "matrix", "room", f'expected a room id such as "!abc:example.org" (the room\'s '
                         f"settings show it), got {room!r}")
    senders = table.get("senders")
    if not isinstance(senders, list) or not senders or not all(
            isinstance(s, str) and _MATRIX_USER_RE.match(s.strip()) for s in senders):
        raise _chat_fail(v, "matrix", "senders", 'required: the Matrix users who may steer, such as '
                         f'["@me:example.org"], got {senders!r}')
    return MatrixChat(homeserver.strip().rstrip("/"), user.strip(), token_file, room.strip(),
                      tuple(s.strip() for s in senders))
