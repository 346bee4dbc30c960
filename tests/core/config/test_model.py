"""config/model.py: the values of memento.toml; the shape of ``[git] author``."""

from __future__ import annotations

from memento_core.config.model import parse_author


def test_parse_author():
    assert parse_author("Ada Lovelace <ada@example.org>") == ("Ada Lovelace", "ada@example.org")
    assert parse_author("<ada@example.org>") is None
    assert parse_author("Ada") is None
