"""What the forge's work remembers between runs (SPEC §19): ``.memento/forge_import.json``, what each
import wrote into each task (so a person's later edit is told from the import's own). Read and
written through owned.py, like the rest of Memento's own state an unconfined agent could reach."""

from __future__ import annotations

import json
from pathlib import Path

from .. import owned
from ..workspace import Workspace


def state_path(ws: Workspace) -> Path:
    return ws.memento_dir / "forge_import.json"


def load_state(ws: Workspace) -> dict:
    """``{"tasks": {"GH-12": {"repo", "number", "title", "fields", "accept", "reason"}}}``;
    empty when missing or not what Memento wrote (a link, a FIFO, bad JSON)."""
    raw = owned.read(state_path(ws))
    try:
        data = json.loads(raw.decode("utf-8")) if raw and raw != owned.NOT_A_FILE else {}
    except (UnicodeDecodeError, ValueError):
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), dict):
        data = {"tasks": {}}
    return data


def save_state(ws: Workspace, data: dict) -> None:
    ws.memento_dir.mkdir(exist_ok=True)
    owned.write(state_path(ws), (json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode())
