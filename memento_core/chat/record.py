"""``.memento/chat.json`` (SPEC §18): where each service's reading stopped, the question messages,
the sends still to make, and what went wrong last. Written atomically, under ``.memento/chat.lock``
(held for a whole round: the tick, `memento chat poll` and the dashboard never act on one
message twice).

{"telegram": {"offset": 124}, "matrix": {"since": "s72_…"},
 "questions": {"T-4": {"telegram:123": "57", "matrix": "$ev"}},  # open questions' messages
 "old_questions": {"telegram:123 41": "T-2"},           # answered ones': a late reply is refused
 "states": {"blocked:T-2": "blocked"},                  # what was posted, once per change of state
 "pending": [{"id", "key", "text", "targets": ["telegram:123", "matrix"], "reply_to": {…}}],
 "errors": {"telegram": {"error", "at"}}, "sent": {"matrix": "stamp"}}
"""

from __future__ import annotations

import json
from pathlib import Path

from ..lines import read_regular_or_none
from ..locks import atomic_write_text
from ..workspace import Workspace

MAX_OLD_QUESTIONS = 500  # the messages of questions no longer open that a late reply may still name
MAX_PENDING = 200  # a service down for days: the oldest sends are dropped, never an endless file


def record_path(ws: Workspace) -> Path:
    return ws.memento_dir / "chat.json"


def lock_path(ws: Workspace) -> Path:
    return ws.memento_dir / "chat.lock"


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def load(ws: Workspace) -> dict:
    """The record; missing or damaged, an empty one (a damaged offset reads a message again at
    worst: Telegram keeps an update until it is confirmed, the Matrix token is just a position)."""
    try:
        raw = read_regular_or_none(record_path(ws), limit=4 * 1024 * 1024)
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (OSError, ValueError):
        data = {}
    data = _dict(data)
    pending = [p for p in data.get("pending") or [] if isinstance(p, dict) and isinstance(p.get("targets"), list)
               and isinstance(p.get("text"), str)]
    return {"telegram": _dict(data.get("telegram")), "matrix": _dict(data.get("matrix")),
            "questions": {k: _dict(v) for k, v in _dict(data.get("questions")).items()},
            "old_questions": _dict(data.get("old_questions")),
            "states": _dict(data.get("states")), "pending": pending[-MAX_PENDING:],
            "errors": _dict(data.get("errors")), "sent": _dict(data.get("sent"))}


def save(ws: Workspace, record: dict) -> None:
    path = record_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    record["pending"] = record["pending"][-MAX_PENDING:]
    atomic_write_text(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
