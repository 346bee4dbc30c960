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
    try:
        sandbox.worker_dir(ws)
        clear_queue(ws)
        found = sandbox.resolve(ctx.config)
        if not found.confined:
            if found.mode == "bwrap":
                append_log(ctx.log_path, f"[memento] sandbox: {found.reason}\n")
                return (), f"sandbox: {found.reason}"
            append_log(ctx.log_path, f"[memento] sandbox: none, the agent runs unconfined ({found.reason})\n")
            return (), ""
        _ensure_memory_store(ctx)
        wrap = sandbox.bwrap_prefix(ws, ctx.config, binary=found.binary,
                                    guard_paths=[*guard_paths(ctx.root, task.guard_files), *extra_guard],
                                    untracked=others(ctx.root, untracked),
                                    archive_dir=archive_dir or ctx.plan().meta.status_archive_dir,
                                    role=role)
    except (OSError, MementoError) as exc:
        append_log(ctx.log_path, f"[memento] sandbox: could not be set up: {exc}\n")
        return (), f"sandbox: could not be set up: {exc}"
    append_log(ctx.log_path, f"[memento] sandbox: bwrap ({len(wrap)} arguments)\n")
    return tuple(wrap), ""


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
