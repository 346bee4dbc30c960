"""tkem/cachetools' history replayed under the default sandbox (issue 36): bytecode and coverage as its CI makes them.

tests/fixtures/replay/cachetools.bundle holds 23 consecutive commits of
cachetools' main line (v6.2.3 to the first of v7.0.0, 2025-12 to 2026-01: the
threading tests, test_keys.py, @cachedmethod turned into descriptors; six of
them change tests/, eleven the code). Its ``.gitignore`` ignores bytecode file
by file (``*.pyc``), never ``__pycache__/``, and ``.coverage`` by name. Verify
is its CI's test command as the commit's own tox.ini says it (CI runs ``tox``:
``py.test --cov=cachetools --cov-report term-missing``, ``THREADING_TESTS=1``
from the commit that adds the threading tests on), the whole suite on the
source tree; tox's ``--basetemp={envtmpdir}`` is left out (no test uses a
temporary folder). So every verify writes bytecode next to the code and the
tests, ``.pytest_cache/`` and ``.coverage``, over what an earlier verify left.

Before the scratch rule (memento_core/scratch.py) the replay stopped at T-2:
coverage could not erase the ``.coverage`` the first verify had left, bound
read-only as a person's file (``OSError: [Errno 16] Device or resource busy``).
With coverage and pytest's cache switched off it went on to T-14, the first
commit that changes a test file, and stopped there as issue 36 describes:
``verify changed files outside context_files:
tests/__pycache__/test_keys.cpython-311-pytest-8.4.2.pyc.5`` (pytest could not
rename its new bytecode over the read-only one an earlier verify wrote).
"""

from __future__ import annotations

import configparser
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from tests.core.sandbox.test_sandbox import needs_bwrap

from .replays import PYTHON, Project, git, replay


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def tox_command(upstream: Path, rev: str, changed: list[str]) -> str:
    """The commit's tox.ini [testenv] (deps pytest, pytest-cov: our dev extras): its setenv and its
    command, ``py.test`` run as ``python -m pytest`` on the source tree instead of tox's install."""
    tox = configparser.ConfigParser(interpolation=None)
    tox.read_string(git(upstream, "show", f"{rev}:tox.ini"))
    env = " ".join(f"{k.strip()}={shlex.quote(v.strip())}"
                   for k, _, v in (line.partition("=") for line in tox["testenv"].get("setenv", "").splitlines())
                   if k.strip())
    words = shlex.split(tox["testenv"]["commands"])
    assert words[0] == "py.test", words
    args = [w for w in words[1:] if w != "{posargs}" and not w.startswith("--basetemp=")]
    return " ".join([*filter(None, [env]), "PYTHONPATH=src", PYTHON, "-m", "pytest", *args])


CACHETOOLS = Project("cachetools", 23, tox_command)


@needs_bwrap
@pytest.mark.slow
@pytest.mark.skipif(not CACHETOOLS.bundle.is_file(), reason=f"{CACHETOOLS.bundle} is missing")
def test_cachetools_commits_replay_byte_for_byte_with_bytecode_and_coverage(tmp_path):
    assert importlib.util.find_spec("pytest_cov"), "cachetools' CI runs pytest-cov: pip install -e '.[dev]'"
    done = replay(tmp_path, CACHETOOLS)
    # The run exercised what it is here for: bytecode next to the tests, written by verify (never
    # committed: *.pyc is ignored; removed after each attempt, so no forged .pyc outlives one:
    # tests/core/scenarios/test_bytecode_left.py), and the coverage data.
    logs = "".join(p.read_text() for p in (done.root / "logs").glob("tick_*.log"))
    assert re.search(r"bytecode verify made or rewrote, removed: .*__pycache__/\S+\.pyc", logs)
    assert (done.root / ".coverage").is_file()
