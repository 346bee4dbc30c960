"""The path jail: nothing outside memory/, no generated or person-owned file, no write without a summary."""

from __future__ import annotations

import os

import pytest

from memento_core.errors import MementoError
from memento_core.memory import read_entry
from memento_core.memory.writes import write_entry
from tests.core.memory.memhelp import commit_count, memento


@pytest.mark.parametrize("path, words", [
    ("../escape.md", "'..' is refused"),
    ("knowledge/../../escape.md", "'..' is refused"),
    ("/tmp/escape.md", "absolute paths are refused"),
    ("MEMORY.md", "MEMORY.md is generated"),
    ("PERSONA.md", "PERSONA.md is written only by people"),
    (".git/config.md", "never written"),
])
def test_refused_paths_via_the_cli(ws, path, words):
    before = commit_count(ws)
    proc = memento(ws, "memory", "write", path, "--summary", "try", stdin="text\n")
    assert proc.returncode == 2
    assert proc.stderr.startswith("[error] ") and words in proc.stderr
    assert commit_count(ws) == before
    assert not (ws.root / "escape.md").exists() and not (ws.root.parent / "escape.md").exists()


def test_symlink_to_etc_is_refused(ws):
    os.symlink("/etc", ws.memory_dir / "etc")
    with pytest.raises(MementoError, match="symbolic link .*outside memory/"):
        write_entry(ws, "etc/evil.md", "x\n", "try")
    with pytest.raises(MementoError, match="symbolic link"):
        read_entry(ws, "etc/passwd")
    assert not os.path.exists("/etc/evil.md")


def test_symlink_inside_memory_pointing_outside_is_refused(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws.memory_dir / "knowledge" / "lessons" / "out")
    os.symlink(outside / "target.md", ws.memory_dir / "knowledge" / "link.md")
    for path in ("knowledge/lessons/out/x.md", "knowledge/link.md"):
        proc = memento(ws, "memory", "write", path, "--summary", "try", stdin="text\n")
        assert proc.returncode == 2 and "symbolic link" in proc.stderr
    assert list(outside.iterdir()) == []


def test_write_without_summary_is_refused(ws):
    for args in (["--summary", "  "], []):
        proc = memento(ws, "memory", "write", "knowledge/lessons/x.md", *args, stdin="text\n")
        assert proc.returncode == 2 and "needs a summary" in proc.stderr
    assert not (ws.memory_dir / "knowledge/lessons/x.md").exists()


def test_show_reads_inside_the_jail_only(ws):
    assert "# MEMORY" in memento(ws, "memory", "show", "MEMORY.md").stdout
    proc = memento(ws, "memory", "show", "../../../../etc/passwd")
    assert proc.returncode == 2 and "'..' is refused" in proc.stderr
