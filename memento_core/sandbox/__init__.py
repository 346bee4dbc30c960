"""Confinement (SPEC §13): the bubblewrap sandbox the agent and verify run in.

``resolve(config)`` says how the agent runs here: ``bwrap`` when memento.toml's
``[sandbox] mode`` asks for it (``auto``: when a real probe, ``bwrap … true``,
works on this machine), else ``none`` (unconfined). ``bwrap_prefix`` builds the
argv prefix that runs a command inside the sandbox; the tick passes it to
``run_in_group`` (tick/confine.py gathers the task's paths).

The layout, in bwrap's order (a later mount wins over an earlier one):

* ``--ro-bind / /``: the whole file system read-only; ``--dev /dev``,
  ``--proc /proc`` (of the new PID namespace), ``--tmpfs /tmp`` (private);
* ``$TMPDIR`` as the agent gets it: under /tmp made inside the private /tmp
  (``--dir``), elsewhere bound writable, unless it is ``/``, the home folder, the
  project or a folder holding one of them (CLIs refuse to start without their
  temp folder; codex refuses one under /tmp for its helpers);
* the preset's own state paths and ``[sandbox] writable`` entries, writable;
* the project's work tree, writable;
* read-only again inside it: ``.git``, ``.memento``, ``logs``, ``memory``,
  ``docs``, ``memento.toml``, ``scripts``, the ``.memento_*`` files, every
  ``guard_files`` path and every file untracked before the run;
* ``.memento/worker/`` writable (the worker's scratch: tick_result.md, the
  memory write queue);
* ``--unshare-pid --die-with-parent --new-session --cap-drop ALL``
  (``--unshare-net`` when ``network = false``), ``MEMENTO_SANDBOX=1`` in the
  environment. Without ``--cap-drop ALL`` a bwrap run by root keeps every
  capability, and the agent could umount the read-only binds.

A path that does not exist is skipped (bwrap refuses a missing source). Every
path is bound at its real location (symbolic links resolved), so a link can
never aim a writable mount somewhere else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..config import Config
from ..workspace import Workspace

MODES = ("auto", "bwrap", "none")
SANDBOX_ENV = "MEMENTO_SANDBOX"
PROBE_TIMEOUT = 10.0

# Inside the work tree: read-only even in the sandbox (Memento's own files).
PROTECTED = (".git", ".memento", "logs", "memory", "docs", "memento.toml", "scripts")
# Each preset's own state (logins, sessions, settings): writable for that preset only.
PRESET_STATE: dict[str, tuple[str, ...]] = {
    "claude": ("~/.claude/", "~/.claude.json"),
    "codex": ("~/.codex/",),
    "gemini": ("~/.gemini/",),
    "aider": ("~/.aider*",),
    "openclaw": ("~/.openclaw/",),
}
# Writable for every preset (a trailing / means a folder, made when missing).
COMMON_STATE = ("~/.cache/",)
# --cap-drop ALL: bwrap started by root keeps every capability otherwise, and the agent
# could simply umount the read-only binds (or remount / read-write).
_NAMESPACE_FLAGS = ("--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL")
_BASE = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")


@dataclass(frozen=True)
class Resolution:
    """How the agent runs here: the status schema's ``"sandbox"`` value (SPEC §13)."""

    mode: str  # "bwrap" | "none"
    confined: bool
    reason: str | None  # why it is not confined (None when it is)
    binary: str | None = None

    def as_dict(self) -> dict:
        return {"mode": self.mode, "confined": self.confined, "reason": self.reason}


def bwrap_binary() -> str | None:
    return shutil.which("bwrap")


@lru_cache(maxsize=4)
def probe(binary: str) -> str | None:
    """Run ``bwrap <the layout's base> true``: None when it works, else why not (one line)."""
    argv = [binary, *_BASE, *_NAMESPACE_FLAGS, "true"]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot run here: {exc}"
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot run here: {err[-1] if err else f'exit code {proc.returncode}'}"
    return None


def resolve(config: Config) -> Resolution:
    """The sandbox this configuration gets on this machine (the probe runs once per process)."""
    mode = config.sandbox_mode
    if mode == "none":
        return Resolution("none", False, '[sandbox] mode = "none" in memento.toml')
    binary = bwrap_binary()
    why = probe(binary) if binary else "bubblewrap (bwrap) is not installed"
    if why is None:
        return Resolution("bwrap", True, None, binary)
    if mode == "bwrap":
        return Resolution("bwrap", False, f'{why}; [sandbox] mode = "bwrap" refuses to run the agent unconfined')
    return Resolution("none", False, why)


def expand(entry: str, root: Path, home: str | None = None) -> Path:
    """A ``writable``/state entry as a path: ``~`` is the home folder, a relative path is the project's."""
    home = home if home is not None else os.path.expanduser("~")
    if entry == "~" or entry.startswith("~/"):
        entry = home + entry[1:]
    path = Path(entry)
    return path if path.is_absolute() else root / path


def _real(path: Path) -> str | None:
    """``path`` with every link resolved, or None when it (or its target) does not exist."""
    try:
        real = os.path.realpath(path, strict=True)
    except (OSError, RuntimeError):
        return None
    return real


def state_paths(preset: str, root: Path, home: str | None = None) -> list[Path]:
    """The preset's own state paths that exist (folders made when missing, if they can be)."""
    found: list[Path] = []
    for entry in (*PRESET_STATE.get(preset, ()), *COMMON_STATE):
        folder = entry.endswith("/")
        path = expand(entry.rstrip("/"), root, home)
        if "*" in path.name:
            found.extend(sorted(path.parent.glob(path.name)) if path.parent.is_dir() else [])
            continue
        if folder and not path.exists() and not path.is_symlink():
            try:
                path.mkdir(parents=True)
            except OSError:
                continue
        found.append(path)
    return found


def _binds(flag: str, paths: Iterable[Path], seen: set[tuple[str, str]], *, keep: str | None = None) -> list[str]:
    """``flag real real`` for each path that exists; with ``keep``, never a path that is ``keep``
    or one of its parents (a person's link to ``.`` must not make the whole work tree read-only)."""
    out: list[str] = []
    for path in paths:
        real = _real(path)
        if real is None or (flag, real) in seen:
            continue
        if keep is not None and (real == keep or keep.startswith(real.rstrip("/") + "/")):
            continue
        seen.add((flag, real))
        out += [flag, real, real]
    return out


def protected_paths(root: Path, guard_paths: Iterable[str] = (), untracked: Iterable[str] = ()) -> list[Path]:
    """What stays read-only inside the work tree (paths relative to ``root``; missing ones skipped later)."""
    paths = [root / rel for rel in PROTECTED]
    try:
        paths += sorted(p for p in root.iterdir() if p.name.startswith(".memento_"))
    except OSError:
        pass
    paths += [root / rel for rel in guard_paths]
    paths += [root / rel for rel in sorted(untracked)]
    return paths


def _outside(binary: str, root: Path, config: Config, home: str | None, seen: set[tuple[str, str]]) -> list[str]:
    """The start of every sandbox: the read-only system, a private /tmp (with ``$TMPDIR``), and the
    preset's state folders and ``[sandbox] writable`` writable."""
    argv = [binary, *_BASE]
    private_tmp, tmp_bind = temp_dir(root, home)
    argv += ["--dir", private_tmp] if private_tmp else []
    writable = [*state_paths(config.agent_preset, root, home),
                *(expand(w, root, home) for w in config.sandbox_writable), *tmp_bind]
    return argv + _binds("--bind", writable, seen)


def bwrap_prefix(
    ws: Workspace,
    config: Config,
    *,
    binary: str,
    guard_paths: Sequence[str] = (),
    untracked: Iterable[str] = (),
    cwd: Path | None = None,
    home: str | None = None,
) -> list[str]:
    """The argv prefix running a command in the sandbox (the command follows it, after ``--``)."""
    root = Path(ws.root)
    seen: set[tuple[str, str]] = set()
    argv = _outside(binary, root, config, home, seen)
    argv += _binds("--bind", [root], seen)
    argv += _binds("--ro-bind", protected_paths(root, guard_paths, untracked), seen, keep=_real(root))
    worker = worker_dir(ws)
    argv += _binds("--bind", [worker], seen)
    argv += [*_NAMESPACE_FLAGS, *(() if config.sandbox_network else ("--unshare-net",))]
    argv += ["--setenv", SANDBOX_ENV, "1", "--chdir", _real(Path(cwd or root)) or str(root), "--"]
    return argv


def temp_dir(root: Path, home: str | None = None, tmpdir: str | None = None) -> tuple[str | None, list[Path]]:
    """Where ``$TMPDIR`` goes in the sandbox: (a path to make inside the private /tmp, or None;
    [the folder to bind writable] or []). Nothing when it is unset, missing, or ``/``, the
    home folder, the project or a folder above one of them (that would unconfine them)."""
    tmpdir = os.environ.get("TMPDIR") if tmpdir is None else tmpdir
    real = _real(Path(tmpdir)) if tmpdir and os.path.isabs(tmpdir) else None
    if real is None or not os.path.isdir(real):
        return None, []
    if real == "/tmp" or real.startswith("/tmp/"):
        return (None if real == "/tmp" else real), []
    for kept in (_real(Path(home if home is not None else os.path.expanduser("~"))), _real(root)):
        if kept is not None and (real == kept or kept.startswith(real.rstrip("/") + "/")):
            return None, []
    return None, [Path(real)]


def architect_prefix(ws: Workspace, config: Config, *, binary: str, writable_docs: Sequence[str],
                     home: str | None = None) -> list[str]:
    """The architect's sandbox (SPEC §16): like the worker's, but the whole project stays
    read-only except the folders of the files ``writable_docs`` names (docs/: the plan, the map,
    the notes, so an edit by rename such as ``sed -i`` works; the architect's checks reject any
    other file changed there) and ``.memento/worker/``. A name at the project's root is bound
    alone. ``config`` is the architect's (its preset decides the state paths)."""
    root = Path(ws.root)
    seen: set[tuple[str, str]] = set()
    argv = _outside(binary, root, config, home, seen)
    argv += _binds("--ro-bind", [root], seen)  # a [sandbox] writable entry inside the project loses
    folders = dict.fromkeys(root / rel if "/" not in rel else root / rel.rsplit("/", 1)[0]
                            for rel in writable_docs)
    argv += _binds("--bind", list(folders), seen)
    argv += _binds("--bind", [worker_dir(ws)], seen)
    argv += [*_NAMESPACE_FLAGS, *(() if config.sandbox_network else ("--unshare-net",))]
    argv += ["--setenv", SANDBOX_ENV, "1", "--chdir", _real(root) or str(root), "--"]
    return argv


def worker_dir(ws: Workspace) -> Path:
    """``.memento/worker/``: the one place under .memento the sandboxed worker may write (made here)."""
    path = ws.worker_dir
    if path.is_symlink():
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def inside() -> bool:
    """Whether this process runs in Memento's sandbox (the sandbox sets MEMENTO_SANDBOX=1)."""
    return os.environ.get(SANDBOX_ENV) == "1"
