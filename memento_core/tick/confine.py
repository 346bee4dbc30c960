"""The sandbox of one attempt (SPEC §13): the argv prefix the agent and verify run under.

``prepare`` makes ``.memento/worker/`` (the worker's scratch, confined or not),
empties the memory write queue, and returns the bubblewrap prefix built from
the task's guard files, the status archive and the paths untracked or ignored
before the agent runs (``others``: git's collapsed folders), or ``()``
when the agent runs unconfined. ``after_agent`` drops a report that is a
symbolic link and applies what a sandboxed worker queued with `memento
memory write` (``apply_memory_queue``), after it exited.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import sandbox
from ..errors import MementoError
from ..git.patterns import matches_any
from ..git.run import git_binary, git_env, run_git
from ..git.status import ignored
from ..plan.model import Task
from . import own
from .context import TickContext, append_log

_GLOB = set("*?[")


def prepare(ctx: TickContext, task: Task, untracked, extra_guard=(), archive_dir: str | None = None,
            role: str = "worker") -> tuple[tuple[str, ...], str]:
    """(the sandbox's argv prefix or (), '' or why the attempt cannot run). ``extra_guard``: more
    read-only paths (the reviewer's: the whole project); ``archive_dir``: the status archive
    (Meta ``status_archive_dir``, read from the plan when not given); ``role``: whose private home."""
    from ..memory.queue import clear_queue

    ws = ctx.ws

    def before() -> None:
        sandbox.worker_dir(ws)
        clear_queue(ws)

    def build(binary: str) -> list[str]:
        _ensure_memory_store(ctx)
        return sandbox.bwrap_prefix(ws, ctx.config, binary=binary,
                                    guard_paths=[*guard_paths(ctx.root, task.guard_files), *extra_guard],
                                    untracked=others(ctx.root, untracked),
                                    archive_dir=archive_dir or ctx.plan().meta.status_archive_dir, role=role)

    return sandboxed(ctx.config, build, log=ctx.log_path, before=before)


def sandboxed(config, build: Callable[[str], Sequence[str]], *, log: Path | None, who: str = "the agent",
              before: Callable[[], None] | None = None, detail: str = "") -> tuple[tuple[str, ...], str]:
    """(the argv prefix ``build(binary)`` makes when ``config``'s sandbox confines, or (); '' or why
    nothing may run): the one way every confined run is set up (the worker and its reviewer here,
    the architect and its red runs in architect/). ``mode = "none"`` runs unconfined, said in
    ``log``; a bwrap that cannot confine, or a ``before`` or ``build`` that fails (OSError,
    MementoError), is the reason nothing runs. ``detail``: said after the arguments' count."""
    try:
        if before is not None:
            before()
        found = sandbox.resolve(config)
        if not found.confined:
            if found.mode == "bwrap":
                _say(log, f"[memento] sandbox: {found.reason}\n")
                return (), f"sandbox: {found.reason}"
            _say(log, f"[memento] sandbox: none, {who} runs unconfined ({found.reason})\n")
            return (), ""
        wrap = tuple(build(found.binary))
    except (OSError, MementoError) as exc:
        _say(log, f"[memento] sandbox: could not be set up: {exc}\n")
        return (), f"sandbox: could not be set up: {exc}"
    _say(log, f"[memento] sandbox: bwrap ({len(wrap)} arguments{detail})\n")
    return wrap, ""


def _say(log: Path | None, text: str) -> None:
    if log is not None:
        append_log(log, text)


def check_network(ctx: TickContext) -> None:
    """A MementoError when the sandbox will run and ``network = "model"`` cannot know a preset's
    model endpoint (network.check): the tick exits 2 and nothing runs, confined or not."""
    config = ctx.config
    if config.sandbox_network != "model" or config.sandbox_allow or not sandbox.resolve(config).confined:
        return  # (network.check says nothing then either; resolve probes bwrap once per process)
    path = ctx.ws.config_path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    from ..sandbox import network

    network.check(config, path=ctx.ws.rel(path), text=text)  # named as in the project: memento.toml:LINE


def _ensure_memory_store(ctx: TickContext) -> None:
    """memory/ exists before a confined run, so it is bound read-only: otherwise the agent could
    make it (and a memory/.git with hooks that Memento's own git would then run)."""
    if not ctx.ws.memory_dir.exists():
        from ..memory import init_store

        init_store(ctx.ws)


def guard_paths(root: Path, patterns) -> list[str]:
    """The files and folders ``guard_files`` names, as paths relative to ``root`` (globs expanded)."""
    plain, globs = [], []
    for raw in patterns:
        pattern = raw.strip().lstrip("/").rstrip("/")
        if pattern:
            (globs if _GLOB & set(pattern) else plain).append(pattern)
    if globs:
        plain += [p for p in _tracked(root) if matches_any(p, globs)]
    return plain


def others(root: Path, untracked=()) -> list[str]:
    """Every path untracked or ignored here now, a folder git shows whole as one entry (a person's
    ``.venv/``: one mount, never a mount per file), plus ``untracked`` (the snapshot's)."""
    proc = run_git(root, ["ls-files", "-z", "--others", "--exclude-standard", "--directory",
                          "--no-empty-directory"], check=False)
    found = proc.stdout.decode("utf-8", "surrogateescape").split("\0") if proc.returncode == 0 else []
    # Ignored paths as ignored sees them: a folder that holds only what verify left
    # (``calc/__pycache__/``) is not the person's folder, its cache is.
    found += sorted(ignored(root))
    folders = tuple(p for p in found if p.endswith("/"))
    extra = [p for p in untracked if not p.startswith(folders)]
    return sorted({p.rstrip("/") for p in [*found, *extra] if p.strip("/")})


def _tracked(root: Path) -> list[str]:
    proc = subprocess.run([git_binary(), "-C", str(root), "ls-files", "-z"], capture_output=True,
                          stdin=subprocess.DEVNULL, env=git_env())
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def after_agent(ctx: TickContext, task: Task) -> str:
    """What the worker left in .memento/worker/: a report that is a link is dropped unread; a FIFO,
    socket or device in Memento's folders is removed unread, the attempt's failure (its reason,
    else ''); then the memory queue."""
    report = ctx.ws.tick_result_path
    if report.is_symlink():
        report.unlink()
        append_log(ctx.log_path, f"[memento] {ctx.ws.rel(report.parent)}/{report.name} was a symbolic link: "
                                 "removed unread\n")
    refused = own.specials_reason(own.remove_specials(ctx.ws))
    if refused:
        append_log(ctx.log_path, f"[memento] {refused}\n")
    apply_memory_queue(ctx, task)
    return refused


def apply_memory_queue(ctx: TickContext, task: Task) -> None:
    """The worker's queued memory writes, through the checks of SPEC §9; each outcome in the tick log."""
    from ..memory.queue import apply_queue
    from ..runlog import cron_log

    try:
        applied = apply_queue(ctx.ws, task.id)
    except Exception as exc:  # noqa: BLE001 - memory is best effort by design (afterwards.best_effort)
        cron_log(ctx.ws, f"memory queue failed: {type(exc).__name__}: {exc}")
        return
    for done in applied:
        said = f"{done.action} memory/{done.path}" + (f" ({done.detail})" if done.detail else "")
        append_log(ctx.log_path, f"[memento] queued memory write {done.name}: {said}\n")
