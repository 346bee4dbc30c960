"""Running git, the one way Memento runs it: hardened, never prompting (SPEC §4, §13).

Plain ``git`` subprocesses, no GitPython: nothing stays alive after a call. The git binary is
resolved to an absolute path once (cron's PATH is minimal), prompts are disabled, output is
parsed from ``-z`` formats so any file name (spaces, newlines, unicode) round-trips, and
pathspecs are literal so a file named ``*.py`` is that file and not a glob. Every command gets
:data:`HARDENING` (no hook, no fsmonitor, no signing program, whatever the repository's config
says) and an environment (:func:`git_env`) that cannot aim it at another repository or index.

All paths are relative to ``root`` with forward slashes. ``root`` is usually the repository's
top level; a workspace in a subdirectory of a larger repository works too (its paths are
relative to that subdirectory).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import MementoError

# Every git command Memento runs, whatever the repository's config says (SPEC §13): no
# hook (commit-tree, update-ref's reference-transaction, checkout's post-checkout), no
# fsmonitor daemon, no untracked cache or ignoreStat that could hide a file, no signing
# program. The agent could have set any of these with `git config`.
HARDENING = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.ignoreStat=false",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
)


# Variables that aim git at another repository, index or object store (the confined agent's
# private index and objects among them: sandbox/private_git.py): never in Memento's own git.
_REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
             "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")


# Pathspec argument lists are cut into batches so no command line gets near ARG_MAX.
_BATCH = 500


@functools.cache
def git_binary() -> str:
    """Absolute path of git, resolved once; MementoError if git is not installed."""
    found = shutil.which("git")
    if not found:
        for candidate in (
            "/usr/bin/git",
            "/usr/local/bin/git",
            "/opt/homebrew/bin/git",
            "/bin/git",
        ):
            if os.access(candidate, os.X_OK):
                found = candidate
                break
    if not found:
        raise MementoError(
            "git is not installed (not found on PATH nor in /usr/bin, /usr/local/bin)"
        )
    return os.path.abspath(found)


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment git runs with: never prompts, C locale, literal pathspecs, no optional locks."""
    env = {k: v for k, v in os.environ.items() if k not in _REPO_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_LITERAL_PATHSPECS"] = "1"
    env["GIT_OPTIONAL_LOCKS"] = "0"  # status never takes index.lock from under an agent
    env["LC_ALL"] = "C"
    env.setdefault("GIT_ASKPASS", "")
    if extra:
        env.update(extra)
    return env


def run_git(
    root: Path,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command in ``root`` the way all of Memento's are run (hardened, no prompt)."""
    try:
        proc = subprocess.run(
            [git_binary(), *HARDENING, "-C", str(root), *args],
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=env or git_env(),
        )
    except OSError as exc:
        raise MementoError(f"could not run git: {exc}") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise MementoError(f"git {args[0]} failed in {root}: {err}")
    return proc


def output(root: Path, args: Sequence[str], **kw) -> str:
    """:func:`run_git`'s stdout as text (any byte of a file name kept, as surrogate escapes)."""
    return run_git(root, args, **kw).stdout.decode("utf-8", "surrogateescape")


def batches(paths: Sequence[str]) -> Iterable[list[str]]:
    """``paths`` cut into lists short enough for one command line each."""
    for i in range(0, len(paths), _BATCH):
        yield list(paths[i : i + _BATCH])


def nul_paths(paths: Iterable[str]) -> bytes:
    """``paths`` as a ``--pathspec-file-nul`` input."""
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def split_z(data: str) -> list[str]:
    """A ``-z`` output's fields (the last NUL ends the last one)."""
    parts = data.split("\0")
    if parts and parts[-1] == "":
        parts.pop()
    return parts
