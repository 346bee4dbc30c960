"""memory/layout.py (SPEC §9): the names of memory/'s own files and folders, as the store makes
them and the jail guards them — judged by the names SPEC §9 gives, on disk."""

from __future__ import annotations

import pytest

from memento_core.errors import MementoError
from memento_core.memory import store


def test_a_new_store_is_the_layout_of_spec_9(ws):
    root = ws.memory_dir
    assert sorted(p.name for p in root.iterdir()) == [".git", ".gitattributes", "MEMORY.md", "journal", "knowledge"]
    assert sorted(p.name for p in (root / "knowledge").iterdir()) == ["decisions", "lessons", "people"]
    assert store.git(root, "ls-files").split() == [".gitattributes", "MEMORY.md"]


@pytest.mark.parametrize(("rel", "words"), [
    ("MEMORY.md", "MEMORY.md is generated"),
    ("PERSONA.md", "PERSONA.md is written only by people"),
    (".archive/x.md", ".archive/ is written only by `memento memory gc`"),
])
def test_the_names_the_jail_keeps_from_a_worker(ws, rel, words):
    with pytest.raises(MementoError) as refused:
        store.jail(ws, rel)
    assert words in str(refused.value)
    assert store.jail(ws, rel, writing=False)[0] == rel  # each can still be read
