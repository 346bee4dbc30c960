"""``logs/chat.log`` (SPEC §18): what came in from the chat and what was done with it, one line each;
a message from a chat or sender that is not listed is logged here and never echoed."""

from __future__ import annotations

from ..lines import message_text
from ..locks import open_append
from ..runlog import utc_stamp
from ..workspace import Workspace


def chat_log(ws: Workspace, message: str) -> None:
    line = " ".join(message_text(message).split())  # one line, whatever the sender typed
    try:
        with open_append(ws.logs_dir / "chat.log", split=True) as fh:
            fh.write(f"{utc_stamp()} {line}\n")
    except OSError:
        pass


def preview(text: str, limit: int = 80) -> str:
    """What a log line quotes of a message: defused, one line, short, in quotes."""
    flat = " ".join(message_text(text).split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
