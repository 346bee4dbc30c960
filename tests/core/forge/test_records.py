"""forge/records.py (SPEC §19): .memento/forge_import.json, what each import wrote into each task.
Read through owned.py: anything but the regular file Memento wrote (a link, a FIFO, bad JSON, the
wrong shape) reads as an empty record, never an exception and never followed."""

from __future__ import annotations

import json
import os

import pytest

from memento_core.forge.records import load_state, save_state, state_path
from memento_core.workspace import Workspace

TASK = {"repo": "octo/shop", "number": 12, "title": "Add “health” endpoint", "fields": {"verify": "`true`"},
        "accept": ["returns 200"], "reason": ""}


@pytest.fixture
def ws(tmp_path) -> Workspace:
    (tmp_path / "proj").mkdir()
    return Workspace(tmp_path / "proj")


def test_a_saved_record_reads_back_as_written(ws):
    assert load_state(ws) == {"tasks": {}}  # nothing imported yet; .memento/ need not exist
    save_state(ws, {"tasks": {"GH-12": TASK}})
    assert state_path(ws) == ws.memento_dir / "forge_import.json"
    assert load_state(ws) == {"tasks": {"GH-12": TASK}}
    text = state_path(ws).read_text(encoding="utf-8")
    assert "“health”" in text and text.endswith("}\n") and text.index('"accept"') < text.index('"title"')


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"tasks": []}', '{"other": {}}', "\xff"])
def test_a_damaged_record_reads_as_empty(ws, damage):
    ws.memento_dir.mkdir()
    state_path(ws).write_bytes(damage.encode("latin-1"))
    assert load_state(ws) == {"tasks": {}}


def test_a_link_or_a_fifo_in_its_place_is_never_followed_or_opened(ws, tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"tasks": {"GH-1": TASK}}))
    ws.memento_dir.mkdir()
    state_path(ws).symlink_to(elsewhere)
    assert load_state(ws) == {"tasks": {}}
    state_path(ws).unlink()
    os.mkfifo(state_path(ws))
    assert load_state(ws) == {"tasks": {}}  # returns at once: a FIFO is never opened
