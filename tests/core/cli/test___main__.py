"""cli/__main__.py: `python -m memento_core.cli`, how workers and tests run `memento`, exits with the code
main() returns (0, 1 and 2 each seen from the process) and prints what main prints."""

from __future__ import annotations

from pathlib import Path

from memento_core import __version__
from tests.core.cli.runs import memento


def test_the_process_exits_with_mains_code(ws: Path):
    assert memento("memory", "index", str(ws)).returncode == 0
    missing = memento("memory", "search", "no such words", cwd=ws)
    assert missing.returncode == 1 and missing.stdout == "[warn] no match for 'no such words' in memory/\n"
    gone = memento("status", str(ws / "nowhere"))
    assert gone.returncode == 2 and gone.stderr == f"[error] {ws / 'nowhere'}: no such directory\n"


def test_no_command_is_argparses_usage_and_exit_2_and_version_is_exit_0(tmp_path: Path):
    bare = memento(cwd=tmp_path)
    assert bare.returncode == 2 and bare.stderr.startswith("usage: memento ")
    assert "the following arguments are required: COMMAND" in bare.stderr
    version = memento("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout == f"memento {__version__}\n"
