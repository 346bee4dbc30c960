"""Hostile input (SPEC §11): every parser either returns a value or raises Memento's own error.

Fuzzing runs a modest number of examples by default and many more under the
`slow` marker (enabled by .ci/run). Plus the file-system pathologies: a full
disk, a read-only folder, a plan that is a directory or a symlink, a huge plan.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memento_core import checkpoint, locks, notes, status_log
from memento_core.config.load import load_config
from memento_core.errors import MementoError
from memento_core.memory.entries import entry_from_text
from memento_core.plan.edits import set_status
from memento_core.plan.scan import parse_plan

PY = sys.executable
FEW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MANY = settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Bytes that look like the files' own structure, so fuzzing reaches deep paths fast.
FRAGMENTS = [b"# MASTER_PLAN: x\n", b"## Meta\n", b"- tick_mode: auto\n", b"- max_retries: ", b"## Phase 1: a\n",
             b"<!-- depends: Phase 2 -->\n", b"- [ ] T-1 t\n", b"- [x] `T-2` [MODULE:m] u [retries: 9]\n",
             b"  - verify: `true`\n", b"  - context_files: [a, b]\n", b"```\n", b"~~~~\n", b"---\n",
             b"### [NOTE] 2026-11-29T15:00:00 \xe2\x86\x92 T-1\n", b"## Active Notes\n", b"## Archive\n",
             b"## [2026-11-29T14:45:00Z] Tick #14\n", b"- **Status**: \xe2\x9c\x85 SUCCESS\n", b"- **Error Tail**:\n",
             b"---\nsummary: [unclosed\n---\n", b"\r\n", b"\xef\xbb\xbf", b"\x00", b"\xff\xfe", b"\x1b[2J", b"\xe2\x80\xa8"]
structured = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=20)), max_size=40).map(b"".join)


def _only_our_errors(func, *args):
    try:
        func(*args)
    except MementoError as exc:
        assert str(exc)  # a sentence, never empty


def _parse_all(tmp_path: Path, data: bytes) -> None:
    f = tmp_path / "f.md"
    f.write_bytes(data)
    _only_our_errors(lambda: parse_plan(f).errors)  # decode every task too
    _only_our_errors(notes.parse_notes, f)
    _only_our_errors(status_log.parse_status, f)
    text = data.decode("utf-8", errors="replace")
    checkpoint.parse_checkpoint(text)
    entry_from_text("knowledge/lessons/x.md", text, None)
    toml = tmp_path / "memento.toml"
    toml.write_bytes(data)
    _only_our_errors(load_config, toml)


@FEW
@given(data=structured)
def test_fuzz_every_parser(tmp_path, data):
    _parse_all(tmp_path, data)


@pytest.mark.slow
@MANY
@given(data=st.one_of(structured, st.binary(max_size=2000)))
def test_fuzz_every_parser_hard(tmp_path, data):
    _parse_all(tmp_path, data)


def test_config_errors_name_the_line(tmp_path):
    toml = tmp_path / "memento.toml"
    toml.write_text('[agent]\npreset = "script"\ntimeout = "forever"\n')
    with pytest.raises(MementoError, match=r"memento.toml:3:"):
        load_config(toml)


PLAN = "# MASTER_PLAN: p\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: a\n- [ ] T-1 t\n  - verify: true\n  - context_files: []\n"


def test_disk_full_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    plan = tmp_path / "MASTER_PLAN.md"
    plan.write_text(PLAN)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(locks.os, "fsync", full)
    with pytest.raises(OSError) as info:
        set_status(plan, "T-1", "x")
    assert info.value.errno == errno.ENOSPC
    assert plan.read_text() == PLAN
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".MASTER_PLAN.md.lock")) == ["MASTER_PLAN.md"]


def _cli_with_failing(ws: Path, failure: str, *args: str) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess whose write path fails like a full or read-only disk."""
    code = (
        "import errno, os, sys\n"
        f"err = errno.{failure}\n"
        "def fail(*a, **k):\n    raise OSError(err, os.strerror(err))\n"
        "os.fsync = fail\n"
        "from memento_core.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run([PY, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          cwd=ws)


@pytest.mark.parametrize("failure", ["ENOSPC", "EROFS"])
def test_cli_reports_a_full_or_read_only_disk_clearly(tmp_path, failure, git_identity):
    subprocess.run([PY, "-m", "memento_core.cli", "init", str(tmp_path / "ws")], check=True, capture_output=True)
    ws = tmp_path / "ws"
    before = (ws / "docs" / "MASTER_PLAN.md").read_bytes()
    r = _cli_with_failing(ws, failure, "resume")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("[error] ") and os.strerror(getattr(errno, failure)) in r.stderr
    assert (ws / "docs" / "MASTER_PLAN.md").read_bytes() == before
    assert not list((ws / "docs").glob(".*.tmp"))


def test_a_symlinked_plan_is_never_written_through(tmp_path):
    # SPEC §13: Memento never writes, restores or appends through a symbolic link.
    real = tmp_path / "plans" / "real.md"
    real.parent.mkdir()
    real.write_text(PLAN)
    (tmp_path / "docs").mkdir()
    link = tmp_path / "docs" / "MASTER_PLAN.md"
    link.symlink_to(Path("..") / "plans" / "real.md")
    with pytest.raises(locks.SymlinkRefused, match="is a symbolic link; Memento never writes through one"):
        set_status(link, "T-1", "x")
    with pytest.raises(locks.SymlinkRefused):
        locks.atomic_write_bytes(link, b"x")
    with pytest.raises(locks.SymlinkRefused):
        locks.open_append(link)
    assert link.is_symlink() and real.read_text() == PLAN


def test_plan_that_is_a_directory_stops_the_tick_clearly(tmp_path, git_identity):
    subprocess.run([PY, "-m", "memento_core.cli", "init", str(tmp_path / "ws")], check=True, capture_output=True)
    ws = tmp_path / "ws"
    (ws / "docs" / "MASTER_PLAN.md").unlink()
    (ws / "docs" / "MASTER_PLAN.md").mkdir()
    r = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(ws)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is a directory" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_fifty_megabyte_plan_is_handled(tmp_path, git_identity):
    sys.path.insert(0, str(Path(__file__).parents[3] / "bench"))
    from plangen import big_plan

    subprocess.run([PY, "-m", "memento_core.cli", "init", str(tmp_path / "ws")], check=True, capture_output=True)
    ws = tmp_path / "ws"
    text = big_plan(220_000)
    assert len(text) > 50_000_000
    (ws / "docs" / "MASTER_PLAN.md").write_text(text)
    r = subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(ws)], capture_output=True, text=True,
                       timeout=300)
    # exit 1: nothing will tick here (no cron entry), which status reports as IDLE
    assert r.returncode in (0, 1) and '"total": 220000' in r.stdout, r.stderr
