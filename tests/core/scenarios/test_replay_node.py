"""netlify/netlify-redirect-parser's history replayed under the default sandbox (issue 36): `npm test` with its caches.

tests/fixtures/replay/redirect-parser.bundle holds 16 consecutive commits of
netlify-redirect-parser's main line (2021-05-31 to 2021-06-01: a refactoring
run through src/ and its tests, seven of them changing tests; ESLint's globs
widened to src/ at T-6, its configuration changed at T-16; package-lock.json
the same throughout). Before the replay a person ran
``npm ci`` (from the npm registry, its download cached under
``~/.cache/memento-replay/npm``): ``node_modules/`` is the person's ignored
folder (husky's git hooks installed too, as ``npm ci`` does). Verify is the
project's own ``npm test``: ``run-s format test:dev``, which is ESLint with
``--cache`` (``.eslintcache``), prettier and AVA, whose Babel cache is
``node_modules/.cache/ava/`` (and AVA's ``esm`` loader keeps its own in
``node_modules/esm/node_modules/.cache/esm/``): each verify writes them, over
what the last one left. ``node_modules/`` stays byte for byte, those caches aside.

Before the scratch rule of issue 36 the first task failed: ``node_modules/``
was one read-only mount and AVA stopped with ``Internal error: ENOENT: no such
file or directory, mkdir 'node_modules/.cache/ava'``.

Skipped, with npm's own words, only when the registry cannot be reached and
npm's cache cannot stand in for it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.core.sandbox.test_sandbox import needs_bwrap

from .replays import Project, replay

NPM_CACHE = Path.home() / ".cache" / "memento-replay" / "npm"  # outside the repository, kept between runs
# What npm says when it cannot reach the registry (and its cache has not got the package).
OFFLINE = re.compile(r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
                     r"ENOTCACHED)\b|npm (ERR!|error) network")


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def npm_ci(root: Path) -> None:
    """A person's ``npm ci`` from the project's package-lock.json, before the run."""
    npm = shutil.which("npm")
    assert npm, "npm is missing (.ci/run installs it: apt-get install npm)"
    proc = subprocess.run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--cache", str(NPM_CACHE)],
                          cwd=root, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0 and OFFLINE.search(proc.stdout + proc.stderr):
        pytest.skip(f"the npm registry cannot be reached: {proc.stderr.strip()[-400:]}")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (root / "node_modules" / ".bin" / "ava").exists()


def npm_test(upstream: Path, rev: str, changed: list[str]) -> str:
    return "npm test"


REDIRECT_PARSER = Project("redirect-parser", 16, npm_test, persons=("node_modules",),
                          scratch=(r"(^|/)node_modules/\.cache/",), prepare=npm_ci)


@needs_bwrap
@pytest.mark.slow
@pytest.mark.skipif(not REDIRECT_PARSER.bundle.is_file(), reason=f"{REDIRECT_PARSER.bundle} is missing")
def test_node_commits_replay_byte_for_byte_with_npm_test_and_its_caches(tmp_path):
    done = replay(tmp_path, REDIRECT_PARSER)
    # npm test wrote its caches inside the project, and they outlived the run as the project's state.
    assert list((done.root / "node_modules" / ".cache" / "ava").glob("*.js"))
    assert (done.root / ".eslintcache").is_file()
