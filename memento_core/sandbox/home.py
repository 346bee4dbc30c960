"""The confined agent's private home (SPEC §13).

Inside bubblewrap the person's home folder is hidden: ``$HOME`` is a folder of
Memento's own, ``<state>/memento/homes/<digest>/<preset>/`` (``<state>`` is
``$XDG_STATE_HOME`` when it is an absolute path outside the project, else
``~/.local/state``; ``<digest>`` names the project's main work tree; the
reviewer, the architect and each parallel worktree have their own folder,
private_name). When the account's own
home (passwd) is not ``$HOME``, a tmpfs hides it too. On top of it:

* the preset's state (``PRESET_STATE``: ``~/.claude`` and ``~/.claude.json``,
  ``~/.codex`` or ``$CODEX_HOME``, ``~/.gemini``, ``~/.aider*``, ``~/.openclaw``)
  lives in that folder as a copy of the person's: :func:`sync_state` empties the
  folder but ``.cache`` (nothing a run left reaches a later one) and copies the
  person's state again, JSON settings filtered (:func:`_filtered`), and never
  writes to the person's files. Session
  histories (other projects' conversations) and files over 5 MB are not copied;
* ``~/.cache``: ``<state>/memento/homes/<digest>/cache/``, the project's own;
* read-only: ``~/.gitconfig``, the install folders of the preset's CLI, of
  ``node`` and ``python3`` when they live under a home folder (a ``node_modules``
  folder's parent, a virtualenv, else the tool's own folder), the folders of
  ``PATH`` under a home folder, and ``[sandbox] readable``; then a tmpfs hides
  Memento's folder of private homes (other projects' and roles' copies).

``[sandbox] writable`` entries under the home are the person's explicit choice:
they stay bound to the person's real folders, writable. Unconfined, the agent's
``HOME`` is the person's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import stat
import sys
import threading
from pathlib import Path

from ..config.model import Config
from ..config.sandbox import env_never
from ..errors import MementoError

# Each preset's own state (logins, sessions, settings), relative to the home.
PRESET_STATE: dict[str, tuple[str, ...]] = {
    "claude": (".claude/", ".claude.json"),
    "codex": (".codex/",),
    "gemini": (".gemini/",),
    "aider": (".aider*",),
    "openclaw": (".openclaw/",),
}
# Never copied from the person's state: session histories, logs and caches (they hold other
# projects' conversations and can be large); the CLI makes its own in the private copy.
HISTORY = frozenset({
    "projects", "todos", "shell-snapshots", "statsig", "file-history", "session-env", "debug", "ide",  # claude
    "sessions", "archived_sessions", "log", "history.jsonl",  # codex
    "tmp", "history",  # gemini
    "logs",  # openclaw (its agents/<id>/sessions: "sessions")
    "local", "node_modules", ".git",  # an install (claude's ~/.claude/local is bound read-only instead)
})
MAX_COPY_BYTES = 5 * 1024 * 1024
# Copied filtered (_filtered): what the CLI would hand the agent of the person's secrets.
FILTERED = frozenset({".claude.json", "settings.json", "settings.local.json"})
_SYNCING = threading.Lock()
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def person_home(home: str | None = None) -> str:
    return home if home is not None else os.path.expanduser("~")


def passwd_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir or None
    except KeyError:
        return None


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _real(path: str | Path) -> str | None:
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, RuntimeError):
        return None


def homes_dir(root: Path, home: str | None = None) -> Path:
    """``<state>/memento/homes``: $XDG_STATE_HOME when absolute and outside the project, else ~/.local/state."""
    state = os.environ.get("XDG_STATE_HOME", "")
    real_root = os.path.realpath(root)
    if not os.path.isabs(state) or _under(os.path.realpath(state), real_root):
        state = os.path.join(person_home(home), ".local", "state")
    return Path(state) / "memento" / "homes"


def project_dir(root: Path, main: Path | None, home: str | None = None) -> Path:
    """This project's folder of private homes (``main``: the main work tree of a worktree)."""
    project = os.path.realpath(main or root)
    digest = hashlib.sha256(project.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return homes_dir(root, home) / digest


def codex_home(home: str) -> str:
    """The person's codex state: $CODEX_HOME when set, else ~/.codex."""
    value = os.environ.get("CODEX_HOME", "")
    return value if os.path.isabs(value) else os.path.join(home, ".codex")


def _sources(preset: str, home: str) -> list[tuple[str, str]]:
    """(the person's path, its name in the private home) for each state entry of ``preset``."""
    found = []
    for entry in PRESET_STATE.get(preset, ()):
        name = entry.rstrip("/")
        if "*" in name:
            prefix = name.rstrip("*")
            try:
                names = sorted(n for n in os.listdir(home) if n.startswith(prefix))
            except OSError:
                names = []
            found += [(os.path.join(home, n), n) for n in names]
        elif preset == "codex":
            found.append((codex_home(home), name))
        else:
            found.append((os.path.join(home, name), name))
    return found


def _walk(source: str, name: str) -> list[str]:
    """The person's files under ``source``, relative to the private home (``name/…``); links,
    history folders and big files left out."""
    try:
        st = os.lstat(source)
    except OSError:
        return []
    if stat.S_ISREG(st.st_mode):
        return [name] if st.st_size <= MAX_COPY_BYTES else []
    if not stat.S_ISDIR(st.st_mode):
        return []
    files = []
    for folder, dirs, names in os.walk(source):
        dirs[:] = [d for d in dirs if d not in HISTORY]  # a link to a folder is never walked into
        rel = os.path.relpath(folder, source)
        for n in names:
            if n in HISTORY:
                continue
            try:
                st = os.lstat(os.path.join(folder, n))
            except OSError:  # gone, or in a folder without its x bit: the copy's open could not reach it either
                continue  # pragma: no mutate (without it the file is listed, and its open fails: left out all the same)
            if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_COPY_BYTES:
                files.append(os.path.normpath(os.path.join(name, rel, n)))
    return files


def _open_parent(top: int, rel: str) -> int:
    """A descriptor of ``rel``'s folder below ``top``, made where missing, never through a link
    (the home was emptied just before, by _clear: a link or file in a folder's place would refuse
    the open, and the file is left out)."""
    fd = os.dup(top)
    for part in Path(rel).parent.parts:
        try:
            os.mkdir(part, 0o700, dir_fd=fd)
        except FileExistsError:
            pass
        try:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def _filtered(name: str, data: bytes) -> bytes | None:
    """A JSON state file (``FILTERED``) without what the CLI would hand the agent of the person's:
    ``.claude.json``'s ``mcpServers`` and ``projects`` (other projects' history), the ``env``
    entries the never-list refuses (config/sandbox.env_never), every MCP server's ``env`` values. None
    when it does not parse (it is not copied); another file as it is."""
    if name not in FILTERED:
        return data
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    if name == ".claude.json":
        doc.pop("mcpServers", None)
        doc.pop("projects", None)
    if isinstance(doc.get("env"), dict):
        doc["env"] = {k: v for k, v in doc["env"].items() if not env_never(str(k))}
    servers = doc.get("mcpServers")
    for server in (servers.values() if isinstance(servers, dict) else ()):
        if isinstance(server, dict) and isinstance(server.get("env"), dict):
            server["env"] = {k: "" for k in server["env"]}
    return json.dumps(doc, indent=2).encode()


def _copy_in(top: int, rel: str, source: str) -> None:
    """Copy the person's file ``source`` (filtered: _filtered) to ``rel`` below ``top`` (a new file
    renamed into place: whatever the agent put at ``rel``, a link included, is replaced, never
    written through). ValueError when a JSON file to filter does not parse."""
    parent = _open_parent(top, rel)
    name = os.path.basename(rel)
    tmp = f".memento-copy-{os.getpid()}-{name}"
    try:
        src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            chunks = []
            while chunk := os.read(src, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(src)
        data = _filtered(name, b"".join(chunks))
        if data is None:
            raise ValueError(f"{source}: not JSON, not copied")
        dst = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600, dir_fd=parent)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(dst, view):]
        finally:
            os.close(dst)
        os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    finally:
        try:
            os.unlink(tmp, dir_fd=parent)
        except OSError:
            pass
        os.close(parent)


def sync_state(preset: str, private: Path, home: str) -> None:
    """Bring the person's state of ``preset`` into ``private`` (see the module's docstring). A file
    that cannot be read is left out (and tried again next time). Parallel workers' threads take turns."""
    with _SYNCING:
        _sync_state(preset, private, home)


def _sync_state(preset: str, private: Path, home: str) -> None:
    wanted: list[str] = []
    for source, name in _sources(preset, home):
        wanted += _walk(source, name)
    sources = dict((name, source) for source, name in _sources(preset, home))
    _clear(private)
    top = os.open(private, _DIR_FLAGS)
    try:
        for folder in (n.rstrip("/") for n in PRESET_STATE.get(preset, ()) if n.endswith("/")):
            os.close(_open_parent(top, os.path.join(folder, "x")))  # the CLI's folder exists
        for rel in sorted(wanted):
            first, _, rest = rel.partition("/")
            try:
                _copy_in(top, rel, os.path.join(sources[first], rest) if rest else sources[first])
            except (OSError, ValueError):  # gone, unreadable or not JSON: left out, tried again next time
                pass
    finally:
        os.close(top)


def _clear(private: Path) -> None:
    """Empty the private home but ``.cache`` (the mount point of the project's cache): what an
    earlier run left there (a ``.pth`` under ~/.local, a CLAUDE.md, an edited setting) never
    reaches a later one; links are removed, never followed. A MementoError naming what is left
    when something cannot be removed (an immutable file: ``chattr +i``): the agent does not run
    with it."""
    reopened: set[str] = set()

    def unlock(func, path, _exc):  # a folder the agent made unwritable or unreadable: opened again, once
        try:
            os.chmod(os.path.dirname(path), 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                if path in reopened:  # opened already and still not removed: it cannot be
                    return
                reopened.add(path)
                os.chmod(path, 0o700)
                shutil.rmtree(path, onerror=unlock)
            else:
                os.unlink(path)
        except OSError:
            pass

    os.chmod(private, 0o700)
    for entry in os.scandir(private):
        if entry.name == ".cache" and entry.is_dir(follow_symlinks=False):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, onerror=unlock)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
    left = sorted(e.name for e in os.scandir(private) if e.name != ".cache" or not e.is_dir(follow_symlinks=False))
    if left:
        raise MementoError(f"the private home {private} could not be emptied: {', '.join(left[:5])} "
                           f"{'is' if len(left) == 1 else 'are'} still there (an immutable file? `lsattr -R`); "
                           "remove it by hand")


def install_prefix(path: str) -> str:
    """The folder a CLI is installed in: above its ``node_modules``, a virtualenv's root, else
    its own folder (a plain ``bin`` folder alone: ``~/.local/bin``'s parent holds keyrings and
    Memento's homes)."""
    parts = Path(path).parts
    if "node_modules" in parts:
        return str(Path(*parts[: parts.index("node_modules")]))
    folder = Path(path).parent
    for up in (folder, *folder.parents):
        if (up / "pyvenv.cfg").is_file():
            return str(up)
    return str(folder)


def venv_base(prefix: str) -> str | None:
    """The install folder of the Python a virtualenv at ``prefix`` was made from (the folder above
    its pyvenv.cfg's ``home`` ``bin``, where its standard library is; never ``~/.local``)."""
    try:
        text = Path(prefix, "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and os.path.isabs(value.strip()):
            found = Path(os.path.realpath(value.strip()))
            return str(found.parent if found.name == "bin" and found.parent.name != ".local" else found)
    return None


def runtime_root(folder: str) -> str | None:
    """The install a folder of PATH belongs to, when the folder alone is not enough to run what is
    in it: a version manager's ``shims`` (pyenv, rbenv, nodenv, asdf: a shim runs the manager, which
    picks an interpreter under its ``versions``) gives the manager's root; an interpreter's ``bin``
    gives its prefix, where the standard library is (``<prefix>/lib/python3.X/os.py``). Never a
    plain ``~/.local`` (its ``lib/python3.X`` is a user site, not a standard library)."""
    path = Path(folder)
    if path.name == "shims":
        return str(path.parent)
    if path.name == "bin" and any(path.parent.glob("lib/python3*/os.py")):
        return str(path.parent)
    return None


def _tools(config: Config, path: str) -> list[str]:
    """The preset's CLI, ``node`` and ``python3`` as found on ``path`` (each CLI is named as its preset)."""
    names = [config.agent_preset] if config.agent_preset in PRESET_STATE else []
    return [hit for name in (*names, "node", "python3") if (hit := shutil.which(name, path=path))]


def read_only_paths(config: Config, root: Path, homes: list[str], path: str | None = None) -> list[str]:
    """What stays readable under a home folder: ~/.gitconfig, the CLIs' install folders, the
    folders of PATH there, and ``[sandbox] readable`` (never a home itself or a folder above one)."""
    path = os.environ.get("PATH", os.defpath) if path is None else path
    home = homes[0]
    wanted = [os.path.join(home, ".gitconfig")]
    prefixes = [install_prefix(os.path.realpath(tool)) for tool in _tools(config, path)]
    prefixes += [str(root / name) for name in (".venv", "venv")]  # the project's virtualenv's Python
    wanted += prefixes + [base for p in prefixes if (base := venv_base(p))]
    folders = [p for p in path.split(os.pathsep) if os.path.isabs(p)]
    # A PATH folder's install (a pyenv's root behind its shims, an interpreter's prefix behind its
    # bin/), and Memento's own interpreter: what verify's `python -m pytest` runs on, in every network.
    wanted += folders + [owner for p in folders if (owner := runtime_root(p))] + [sys.base_prefix]
    for entry in config.sandbox_readable:
        wanted.append(home + entry[1:] if entry == "~" or entry.startswith("~/") else entry)
    found: list[str] = []
    for want in wanted:
        real = _real(want)
        if real is None or real in found:
            continue
        if not any(_under(real, h) for h in homes) or any(_under(h, real) for h in homes):
            continue  # outside every home it is readable anyway; a home itself would undo the hiding
        found.append(real)
    # One mount a folder: a path inside another one bound here comes with it.
    return [p for p in found if not any(q != p and _under(p, q) for q in found)]


def private_name(root: Path, main: Path | None, preset: str, role: str = "worker") -> str:
    """The private home's folder in project_dir: one per role (worker, reviewer, architect) and, for a parallel
    worker's worktree, per worktree (each is emptied before its run: never under a living agent)."""
    name = preset if role == "worker" else f"{role}.{preset}"
    real_root = os.path.realpath(root)
    if main is not None and os.path.realpath(main) != real_root:
        name += "." + hashlib.sha256(real_root.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return name


def layout(root: Path, main: Path | None, config: Config, home: str | None = None,
           role: str = "worker") -> list[str]:
    """The bubblewrap arguments of the private home of ``role`` (after the read-only system,
    before every other bind); the preset's state copied in first."""
    home = person_home(home)
    real_home = _real(home)
    real_root = os.path.realpath(root)
    if real_home is None or real_home == "/" or _under(real_home, real_root):
        return []  # no home folder to hide, or the project is the home: the work tree stays as it is
    account = passwd_home()
    real_account = _real(account) if account else None
    if real_account and _under(real_account, real_home):
        real_account = None  # hidden with $HOME already
    hidden = [real_home, *([real_account] if real_account else [])]
    base = project_dir(root, main, home)
    name = private_name(root, main, config.agent_preset, role)
    private = base / name
    cache = base / "cache"
    for folder in (private, cache):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    sync_state(config.agent_preset, private, home)
    argv: list[str] = []
    if real_account:
        argv += ["--tmpfs", real_account]  # before $HOME: a later mount wins
    argv += ["--bind", str(private), real_home, "--bind", str(cache), os.path.join(real_home, ".cache")]
    for path in read_only_paths(config, root, hidden):
        argv += ["--ro-bind", path, path]
    # Memento's folder of private homes (other projects' and roles' copies) is hidden wherever
    # it is (outside the home with $XDG_STATE_HOME, or inside a read-only folder bound above):
    # this run's own home and cache are bound at $HOME and ~/.cache already.
    argv += ["--tmpfs", os.path.realpath(homes_dir(root, home))]  # made above: where it really is
    if config.agent_preset == "codex":
        argv += ["--setenv", "CODEX_HOME", os.path.join(real_home, ".codex")]
    return argv

