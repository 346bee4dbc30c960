"""config/write.py: the memento.toml `memento init` writes, and the schedule's edit (one line when
it can, comments kept; under the lock; a bad value or a broken file leaves it alone)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memento_core.config.load import load_config
from memento_core.config.model import PRESET_NAMES, Config
from memento_core.config.write import DEFAULT_CONFIG_TOML, set_schedule_every
from memento_core.errors import MementoError


def test_default_template_parses_to_the_defaults(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    cfg = load_config(path)
    assert cfg.raw == tomllib.loads(DEFAULT_CONFIG_TOML)
    assert Config(raw=cfg.raw) == cfg
    for name in PRESET_NAMES:
        assert name in DEFAULT_CONFIG_TOML


def test_set_schedule_every_edits_one_line_and_keeps_comments(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    cfg = set_schedule_every(path, "15min")
    assert (cfg.schedule_every, cfg.schedule_every_text) == (900, "15min")
    assert load_config(path) == cfg
    old_lines = DEFAULT_CONFIG_TOML.splitlines()
    new_lines = path.read_text().splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert len(changed) == 1
    assert changed[0][1].startswith('every = "15min"')
    assert "# cron interval" in changed[0][1]


def test_set_schedule_every_creates_missing_file_and_section(tmp_path):
    missing = tmp_path / "new" / "memento.toml"
    assert set_schedule_every(missing, "1h").schedule_every == 3600
    assert load_config(missing).schedule_every_text == "1h"

    no_section = tmp_path / "memento.toml"
    no_section.write_text('[agent]\npreset = "script"  # keep me\n')
    cfg = set_schedule_every(no_section, "10m")
    assert cfg.schedule_every == 600
    assert cfg.agent_preset == "script"
    # tomli-w rewrote the file: the data survives, comments do not.
    assert tomllib.loads(no_section.read_text()) == {
        "agent": {"preset": "script"},
        "schedule": {"every": "10m"},
    }


def test_set_schedule_every_rejects_bad_values_and_leaves_file_alone(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    for bad in ("soon", "0s"):
        with pytest.raises(MementoError, match="every"):
            set_schedule_every(path, bad)
    assert path.read_text() == DEFAULT_CONFIG_TOML


def test_set_schedule_every_refuses_to_clobber_broken_toml(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text("[schedule\nevery = 1\n")
    with pytest.raises(MementoError) as info:
        set_schedule_every(path, "5min")
    assert info.value.line == 1
    assert path.read_text() == "[schedule\nevery = 1\n"


def test_set_schedule_every_uses_the_lock_file_outside_docs(tmp_path):
    (tmp_path / ".memento").mkdir()
    path = tmp_path / "memento.toml"
    set_schedule_every(path, "2min")
    assert (tmp_path / ".memento" / "locks" / "memento.toml.lock").exists()
    assert Path(path).exists()
