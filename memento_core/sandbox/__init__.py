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
* the private home (home.py): a tmpfs over the account's home when ``$HOME`` is
  elsewhere, ``$HOME`` bound to Memento's copy of the preset's state, a private
  ``~/.cache``, read-only ``~/.gitconfig``, the CLIs' install folders and ``readable``;
* ``[sandbox] writable`` entries, writable;
* a parallel worker's main work tree, read-only (its documents, the other
  worktrees: only its own worktree inside it is bound writable);
* the project's work tree, writable;
* each folder inside the work tree that holds one of Memento's own files
  (``docs/``, ``scripts/``, the status archive's parents) or a person's
  untracked or ignored file (``sub/`` of ``sub/.env``; not for scratch such as
  ``__pycache__/``) bound onto itself, writable: a mount point cannot be
  renamed or removed, so ``mv docs docs2; mkdir docs`` cannot swap Memento's
  documents (or a person's ``.env``) for the agent's;
* read-only again inside it: Memento's own files, named one by one, never a
  project folder (``workspace.MEMENTO_FILES``: ``.git/``, ``.memento/``,
  ``logs/``, ``memory/``, ``memento.toml``, the five documents in ``docs/``,
  the prompts in ``scripts/``), the ``.memento_*`` files, the status archive,
  every ``guard_files`` path and every path untracked or ignored before the
  run (a folder git shows collapsed, a ``.venv/``, is one mount) but scratch
  (scratch.py: bytecode, the test runners' and linters' caches, which verify
  rewrites as it would unconfined; kept.py removes what the agent made of it
  before verify). A bound file cannot be replaced (``mv``/``rm``/``ln -sf``
  over it: EBUSY). A missing one can be created: the guards refuse that
  (tick/guards.py);
* inside a person's read-only ``node_modules/``, its ``.cache/`` writable
  again (made empty when missing: a test runner makes it on its first run);
* a parallel worker's shared git folder, read-only (its index and objects for
  staging: private_git.py, in the agent's environment);
* ``.memento/worker/`` writable (the worker's scratch: tick_result.md, the
  memory write queue);
* ``--unshare-pid --die-with-parent --new-session --cap-drop ALL``, the
  network's options (network.py: ``--unshare-net`` unless ``network = "all"``),
  ``MEMENTO_SANDBOX=1`` in the environment. Without ``--cap-drop ALL`` a bwrap run by root keeps every
  capability, and the agent could umount the read-only binds.

A path that does not exist is skipped (bwrap refuses a missing source). Every
path is bound at its real location (symbolic links resolved), so a link can
never aim a writable mount somewhere else. Under ``network = "model"`` the
prefix starts with network.py's filtering proxy, which runs bwrap, and ends
with its forwarder inside, which runs the command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .. import scratch
from ..config.model import Config
from ..workspace import MEMENTO_FILES, OWN_PREFIX, Workspace

if TYPE_CHECKING:
    from .reach import Diagnosis

MODES = ("auto", "bwrap", "none")
SANDBOX_ENV = "MEMENTO_SANDBOX"
PROBE_TIMEOUT = 10.0

# Inside the work tree: read-only even in the sandbox (Memento's own files, by name; SPEC §13).
PROTECTED = tuple(rel.rstrip("/") for rel in MEMENTO_FILES)
ARCHIVE_DIR = "logs/status_archive/"  # the Meta default of status_archive_dir
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
    fix: tuple[str, ...] = ()  # what makes bubblewrap run here (reach.py), line by line

    def as_dict(self) -> dict:
        """`memento status --json`'s "sandbox"; "fix" only when there is one (bubblewrap missing or
        unable to run here)."""
        found = {"mode": self.mode, "confined": self.confined, "reason": self.reason}
        return {**found, "fix": list(self.fix)} if self.fix else found


def bwrap_binary() -> str | None:
    return shutil.which("bwrap")


def probe(binary: str) -> str | None:
    """Run ``bwrap <the layout's base> true``: None when it works, else why not (one line)."""
    found = examine(binary)
    return found.reason if found is not None else None


@lru_cache(maxsize=4)
def examine(binary: str) -> Diagnosis | None:
    """Run ``bwrap <the layout's base> true``: None when it works, else what stops it here and
    the fix (reach.py reads the kernel's files and bwrap's last words)."""
    argv = [binary, *_BASE, *_NAMESPACE_FLAGS, "true"]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        why = f"bwrap: {exc}"
    else:
        if proc.returncode == 0:
            return None  # no diagnosis to make: reach.py (its kernel files, its patterns) stays unread
        why = proc.stderr.decode("utf-8", "replace") or f"exit code {proc.returncode}"
    from . import reach

    return reach.diagnose(why, binary)


def resolve(config: Config) -> Resolution:
    """The sandbox this configuration gets on this machine (the probe runs once per process)."""
    mode = config.sandbox_mode
    if mode == "none":
        return Resolution("none", False, '[sandbox] mode = "none" in memento.toml')
    binary = bwrap_binary()
    if binary:
        found = examine(binary)
    else:
        from . import reach

        found = reach.missing()
    if found is None:
        return Resolution("bwrap", True, None, binary)
    if mode == "bwrap":
        return Resolution("bwrap", False, f'{found.reason}; [sandbox] mode = "bwrap" refuses to run the agent '
                                          "unconfined", fix=found.fix)
    return Resolution("none", False, found.reason, fix=found.fix)


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


def _binds(flag: str, paths: Iterable[Path], seen: dict[str, str], *, keep: str | None = None) -> list[str]:
    """``flag real real`` for each path that exists and is not mounted so already; with ``keep``,
    never a path that is ``keep`` or one of its parents (a person's link to ``.`` must not make the
    whole work tree read-only). ``seen``: each path mounted so far and its flag, a mount's own
    path and every one below it forgotten when it is mounted again (a later mount covers them:
    ``[sandbox] writable = ["docs"]`` is bound before the work tree and must be bound again after)."""
    out: list[str] = []
    for path in paths:
        real = _real(path)
        if real is None or seen.get(real) == flag:
            continue
        if keep is not None and (real == keep or keep.startswith(real.rstrip("/") + "/")):
            continue
        below = real.rstrip("/") + "/"
        for covered in [p for p in seen if p.startswith(below)]:
            del seen[covered]
        seen[real] = flag
        out += [flag, real, real]
    return out


def own_paths(root: Path, archive_dir: str | None = ARCHIVE_DIR) -> list[Path]:
    """Memento's own files and folders in the work tree: PROTECTED, the ``.memento_*`` files
    and the status archive folder (Meta ``status_archive_dir``); missing ones included."""
    paths = [root / rel for rel in PROTECTED]
    try:
        paths += sorted(p for p in root.iterdir() if p.name.startswith(OWN_PREFIX))
    except OSError:
        pass
    archive = (archive_dir or "").strip("/")
    if archive not in ("", "."):
        paths.append(root / archive)
    return paths


def protected_paths(root: Path, guard_paths: Iterable[str] = (), untracked: Iterable[str] = (),
                    archive_dir: str | None = ARCHIVE_DIR) -> list[Path]:
    """What stays read-only inside the work tree: Memento's own files, the ``guard_files`` paths and
    the paths untracked or ignored before the run but scratch (scratch.py: verify rewrites it as
    unconfined), relative to ``root``; missing ones skipped later."""
    paths = own_paths(root, archive_dir)
    paths += [root / rel for rel in guard_paths]
    paths += [root / rel.rstrip("/") for rel in sorted(untracked) if not scratch.is_scratch(root, rel)]
    return paths


def scratch_folders(root: Path, untracked: Iterable[str]) -> list[Path]:
    """The cache folders bound writable inside a person's read-only folder (``node_modules/.cache/``,
    scratch.nested_folders), each made empty when missing, as a tool would on its first run (a
    mount needs a folder to bind)."""
    found = []
    for rel in scratch.nested_folders(root, untracked):
        path = root / rel.rstrip("/")
        try:
            path.mkdir(mode=0o755)
        except FileExistsError:
            pass
        except OSError:
            continue  # pragma: no mutate (listed anyway, it is skipped by _binds: it does not exist)
        found.append(path)
    return found


def pinned_folders(root: Path, paths: Iterable[Path]) -> list[Path]:
    """The folders between ``root`` and each of ``paths`` (not ``root`` itself), shallowest first:
    real folders inside the work tree only (never one reached through a link, which could lead
    out of it). Bound onto themselves they become mount points, which cannot be renamed."""
    paths = list(paths)
    bound = set(paths)  # bound read-only anyway: a mount point already
    found: dict[Path, None] = {}
    for path in paths:
        try:
            rel = path.relative_to(root)
        except ValueError:
            continue
        here = root
        for part in rel.parts[:-1]:
            here = here / part
            if here.is_symlink() or not here.is_dir():  # each step checked: none leads out of the tree
                break
            if here not in bound:
                found[here] = None
    return sorted(found, key=lambda p: len(p.parts))


def _outside(binary: str, ws: Workspace, config: Config, home: str | None, seen: dict[str, str],
             role: str) -> list[str]:
    """The start of every sandbox: the read-only system, a private /tmp (with ``$TMPDIR``), the
    private home (home.py) and ``[sandbox] writable`` writable."""
    from . import home as private_home

    root = Path(ws.root)
    argv = [binary, *_BASE]
    private_tmp, tmp_bind = temp_dir(root, home)
    argv += ["--dir", private_tmp] if private_tmp else []
    argv += private_home.layout(root, Path(ws.project_memento_dir).parent, config, home, role)
    writable = [*(expand(w, root, home) for w in config.sandbox_writable), *tmp_bind]
    return argv + _binds("--bind", writable, seen)


def bwrap_prefix(
    ws: Workspace,
    config: Config,
    *,
    binary: str,
    guard_paths: Sequence[str] = (),
    untracked: Iterable[str] = (),
    archive_dir: str | None = ARCHIVE_DIR,
    home: str | None = None,
    role: str = "worker",
) -> list[str]:
    """The argv prefix running a command in the sandbox (the command follows it, after ``--``).
    ``untracked``: the paths untracked or ignored before the run (folders may end with /);
    ``role``: whose private home (worker, reviewer or architect: the reviewer's is its own)."""
    from . import network  # the confinement's modules: an unconfined tick imports none of them
    from .private_git import shared_git_dir

    root = Path(ws.root)
    seen: dict[str, str] = {}
    argv = _outside(binary, ws, config, home, seen, role)
    main = Path(ws.project_memento_dir).parent  # a parallel worker's main work tree (else root itself)
    if _real(main) != _real(root):
        # Bound read-only before the worktree inside it (a later mount wins): the main work tree,
        # Memento's documents there and the other workers' worktrees stay as they are (SPEC §13).
        argv += _binds("--ro-bind", [main], seen)
    argv += _binds("--bind", [root], seen)
    untracked = list(untracked)
    kept = [root / rel.rstrip("/") for rel in untracked if not scratch.is_scratch(root, rel)]
    argv += _binds("--bind", pinned_folders(root, [*own_paths(root, archive_dir), *kept]), seen)
    # "-try": a person's file may go between this list and bwrap's start (an editor's swap file:
    # vim's .MASTER_PLAN.md.swp); gone, it has nothing to protect, where a plain bind would stop
    # bwrap ("Can't find source path", exit 1) and the attempt with it, taken for the agent's.
    argv += _binds("--ro-bind-try", protected_paths(root, guard_paths, untracked, archive_dir), seen,
                   keep=_real(root))
    argv += _binds("--bind", scratch_folders(root, untracked), seen)  # after the person's folder
    argv += _binds("--ro-bind", shared_git_dir(root), seen)  # a worktree's git, read-only
    worker = worker_dir(ws)
    argv += _binds("--bind", [worker], seen)
    argv += [*_NAMESPACE_FLAGS, *network.bwrap_args(config, root)]
    argv += ["--setenv", SANDBOX_ENV, "1", "--chdir", _real(root) or str(root), "--"]
    return network.wrap(config, argv, network.reach(config, home=home), root)


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
                     home: str | None = None, readonly_docs: Sequence[str] = ()) -> list[str]:
    """The architect's sandbox (SPEC §16): like the worker's, but the whole project stays
    read-only except the folders of the files ``writable_docs`` names (docs/: the plan, the map,
    the notes, so an edit by rename such as ``sed -i`` works; the architect's checks reject any
    other file changed there) and ``.memento/worker/``. A name at the project's root is bound
    alone. ``readonly_docs`` stay read-only inside those folders (the drafter's notes: a change
    to them during its run is then a person's). ``config`` is the architect's (its preset decides
    the state paths)."""
    from . import network

    root = Path(ws.root)
    seen: dict[str, str] = {}
    argv = _outside(binary, ws, config, home, seen, "architect")
    argv += _binds("--ro-bind", [root], seen)  # a [sandbox] writable entry inside the project loses
    folders = dict.fromkeys(root / rel if "/" not in rel else root / rel.rsplit("/", 1)[0]
                            for rel in writable_docs)
    argv += _binds("--bind", list(folders), seen)
    argv += _binds("--ro-bind", [root / rel for rel in readonly_docs], seen)  # files kept read-only in them
    argv += _binds("--bind", [worker_dir(ws)], seen)
    argv += [*_NAMESPACE_FLAGS, *network.bwrap_args(config, root)]
    argv += ["--setenv", SANDBOX_ENV, "1", "--chdir", _real(root) or str(root), "--"]
    return network.wrap(config, argv, network.reach(config, home=home), root)


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


def agent_git_env(ws: Workspace) -> dict[str, str]:
    """The confined agent's own git index and objects (private_git.py), made fresh in ``.memento/worker/git/``."""
    from .private_git import private_git

    return private_git(Path(ws.root), worker_dir(ws) / "git")
