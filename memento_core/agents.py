"""Running the agent (SPEC §4 step 10, §10).

Two layers:

* ``run_in_group`` runs any command in a process group of its own with its
  output appended to a log file (no pipes) and a timeout. When it returns,
  no process of the group is left: on timeout the whole group gets SIGTERM,
  a grace period, then SIGKILL, and processes the command left running
  after it exited are stopped the same way. The tick uses it for the agent
  and for ``verify``.
* Presets turn memento.toml plus a task into an ``Invocation``: ``command``
  and ``script``, and the real coding CLIs ``claude``, ``codex``, ``aider``,
  ``gemini`` and ``openclaw`` (each command line is documented, flag by flag,
  in the README's "Agents" section).

A process that leaves the group (its own ``setsid``) is out of reach of any
group kill; nothing here pretends otherwise.
"""

from __future__ import annotations

import datetime
import errno
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from .config import PRESET_NAMES, Config, format_duration
from .errors import MementoError
from .workspace import Workspace

DEFAULT_GRACE = 3.0

# Process groups started by run_in_group and not yet gone, by pgid: lets a
# SIGTERM handler stop them (terminate_running). Plain dict operations only,
# because a signal handler may run while the main thread is inside them.
_RUNNING: dict[int, subprocess.Popen[bytes]] = {}
_INTERRUPTED: set[int] = set()


@dataclass(frozen=True)
class ProcResult:
    """How a command ended.

    exit_code is None when it did not end by itself (timed out, interrupted)
    or never started (``error`` says why). duration is in seconds.
    """

    exit_code: int | None
    timed_out: bool
    duration: float
    pgid: int | None
    error: str | None = None
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        """It ran to completion and exited 0."""
        return self.exit_code == 0 and not (self.timed_out or self.interrupted or self.error)


# ------------------------------------------------------------ process groups


def _group_members_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is alive (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg succeeds while only zombies remain (a parent that never reaps,
    # or a PID 1 that does not): look closer where /proc exists.
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        return True
    for entry in os.scandir(proc_dir):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # Fields after the parenthesised command: state ppid pgrp ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pgid: int) -> None:
    """Collect the group leader if it is our child, so it does not linger as a zombie."""
    proc = _RUNNING.get(pgid)
    if proc is not None:
        proc.poll()
        return
    try:
        os.waitpid(pgid, os.WNOHANG)
    except ChildProcessError:
        pass
    except OSError as exc:
        if exc.errno != errno.ECHILD:
            raise


def _wait_gone(pgid: int, deadline: float) -> bool:
    delay = 0.005
    while True:
        _reap(pgid)
        if not _group_members_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _stop_group(pgid: int, grace: float, wait_limit: float) -> bool:
    if pgid <= 1 or pgid == os.getpgrp():
        raise ValueError(f"refusing to kill process group {pgid}: it is not an agent's group")
    _signal_group(pgid, signal.SIGTERM)
    _signal_group(pgid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
    if _wait_gone(pgid, time.monotonic() + grace):
        return True
    _signal_group(pgid, signal.SIGKILL)
    return _wait_gone(pgid, time.monotonic() + wait_limit)


def kill_group(pgid: int, grace: float = DEFAULT_GRACE, *, wait_limit: float = 10.0) -> bool:
    """Stop every process of group ``pgid``: SIGTERM, ``grace`` seconds, SIGKILL.

    Returns once the group is gone (True), or False if some member outlived
    ``wait_limit`` seconds after SIGKILL (for example stuck in the kernel or
    owned by another user). Safe from a signal handler. A run_in_group call
    waiting on this group returns with ``interrupted=True``.
    """
    if pgid in _RUNNING:
        _INTERRUPTED.add(pgid)
    return _stop_group(pgid, grace, wait_limit)


def terminate_running(grace: float = DEFAULT_GRACE) -> list[int]:
    """Stop every process group run_in_group is waiting on (for the tick's SIGTERM handler)."""
    stopped = []
    for pgid in list(_RUNNING):
        kill_group(pgid, grace)
        stopped.append(pgid)
    return stopped


def _resolve_binary(name: str, env: Mapping[str, str], cwd: Path) -> str | None:
    if "/" in name:
        candidate = Path(name) if os.path.isabs(name) else Path(cwd) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.absolute())
        return None
    return shutil.which(name, path=env.get("PATH") or os.defpath)


def _not_found(name: str, preset: str | None) -> str:
    if preset:
        return f"agent binary '{name}' not found on PATH (preset {preset})"
    return f"'{name}' not found on PATH"


def _note(log_path: Path, text: str) -> None:
    with open(log_path, "ab") as fh:
        fh.write(text.encode("utf-8", "replace"))


def run_in_group(
    argv: Sequence[str] | str,
    *,
    cwd: Path | str,
    log_path: Path,
    timeout: float,
    stdin_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    shell: bool = False,
    on_start: Callable[[int], None] | None = None,
    preset: str | None = None,
    grace: float = DEFAULT_GRACE,
) -> ProcResult:
    """Run ``argv`` in a new session, output appended to ``log_path``, killed after ``timeout`` s.

    ``shell=True`` runs a string with /bin/sh. stdin is ``stdin_path`` or
    /dev/null. ``on_start(pgid)`` is called as soon as the process exists.
    Whatever happens, no process of the group is left when this returns.
    A command that cannot start is a ProcResult with ``error`` set (naming
    the binary and ``preset``), never an exception.
    """
    cwd = Path(cwd)
    log_path = Path(log_path)
    env = dict(os.environ if env is None else env)
    started = time.monotonic()

    def failed(message: str) -> ProcResult:
        _note(log_path, f"[memento] {message}\n")
        return ProcResult(None, False, time.monotonic() - started, None, error=message)

    log_path.parent.mkdir(parents=True, exist_ok=True)
    if shell:
        command = argv if isinstance(argv, str) else shlex.join(argv)
        args = ["/bin/sh", "-c", command]
        executable = "/bin/sh"
    else:
        args = shlex.split(argv) if isinstance(argv, str) else list(argv)
        if not args:
            return failed("empty command line")
        executable = _resolve_binary(args[0], env, cwd)
        if executable is None:
            return failed(_not_found(args[0], preset))
    if not cwd.is_dir():
        return failed(f"working directory {cwd} does not exist")

    with ExitStack() as stack:
        log = stack.enter_context(open(log_path, "ab"))
        if stdin_path is not None:
            try:
                stdin = stack.enter_context(open(stdin_path, "rb"))
            except OSError as exc:
                return failed(f"cannot open {stdin_path} for standard input: {exc.strerror}")
        else:
            stdin = subprocess.DEVNULL
        try:
            proc = subprocess.Popen(
                args,
                executable=executable,
                cwd=cwd,
                stdin=stdin,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except FileNotFoundError:
            return failed(_not_found(args[0], preset))
        except OSError as exc:
            return failed(f"cannot run {args[0]!r}: {exc.strerror or exc}")

    pgid = proc.pid  # start_new_session: the child leads its own group
    _RUNNING[pgid] = proc
    timed_out = False
    try:
        if on_start is not None:
            on_start(pgid)
        remaining = max(0.0, timeout - (time.monotonic() - started))
        try:
            proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = pgid not in _INTERRUPTED
            if timed_out:
                _note(
                    log_path,
                    f"\n[memento] timed out after {format_duration(timeout)}; "
                    f"stopping process group {pgid}\n",
                )
    finally:
        try:
            if _group_members_alive(pgid):
                if not timed_out and proc.poll() is not None and pgid not in _INTERRUPTED:
                    _note(
                        log_path,
                        f"\n[memento] stopping processes left running in group {pgid}\n",
                    )
                _stop_group(pgid, grace, wait_limit=10.0)
            proc.wait()
        finally:
            _RUNNING.pop(pgid, None)
    interrupted = pgid in _INTERRUPTED
    _INTERRUPTED.discard(pgid)
    duration = time.monotonic() - started
    exit_code = None if (timed_out or interrupted) else proc.returncode
    return ProcResult(exit_code, timed_out, duration, pgid, interrupted=interrupted)


# ------------------------------------------------------------------- presets


@dataclass(frozen=True)
class AgentRequest:
    """What a preset needs to know about one task's run."""

    task_id: str
    do_command: str | None
    prompt_file: Path
    system_prompt_file: Path
    workdir: Path
    # The task's context_files; None: not given (a preset that needs them reads the plan).
    context_files: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Invocation:
    """A ready-to-run agent command: an argv tuple, or a shell string when ``shell``."""

    argv: tuple[str, ...] | str
    shell: bool
    stdin_path: Path | None
    preset: str

    def display(self) -> str:
        """The command line as one string, for logs."""
        return self.argv if isinstance(self.argv, str) else shlex.join(self.argv)


@dataclass(frozen=True)
class AgentSpec:
    """One preset: its name, the binary it needs (None: none), and how to build its command."""

    name: str
    binary: str | None
    description: str
    build: Callable[[Config, AgentRequest], Invocation]
    # The CLI takes the system prompt through its own flag, so the prompt file
    # must not carry it a second time.
    separate_system_prompt: bool = False


_PLACEHOLDERS = ("prompt_file", "system_prompt_file", "task_id", "workdir", "model")


def _build_command(config: Config, req: AgentRequest) -> Invocation:
    template = config.agent_command.strip()
    if not template:
        raise MementoError(
            'memento.toml: [agent] preset = "command" needs a command, e.g. '
            'command = "python3 tools/my_agent.py {prompt_file}"'
        )
    try:
        tokens = shlex.split(template)
    except ValueError as exc:
        raise MementoError(f"memento.toml: [agent] command cannot be split: {exc}") from None
    values = {
        "prompt_file": str(req.prompt_file),
        "system_prompt_file": str(req.system_prompt_file),
        "task_id": req.task_id,
        "workdir": str(req.workdir),
        "model": config.agent_model,
    }
    argv = []
    for token in tokens:
        for key in _PLACEHOLDERS:
            token = token.replace("{" + key + "}", values[key])
        argv.append(token)
    argv.extend(config.agent_extra_args)
    return Invocation(tuple(argv), False, Path(req.prompt_file), "command")


def _build_script(config: Config, req: AgentRequest) -> Invocation:
    do = (req.do_command or "").strip()
    if not do:
        raise MementoError(f"task {req.task_id} has no `do:` command; the script preset needs one")
    return Invocation(do, True, None, "script")


# ----------------------------------------------------------- real CLI presets
#
# Each builder returns the CLI's documented non-interactive invocation; the
# README ("Agents") explains every flag and where the documentation is thin.
# `[agent] model` is passed with the CLI's model flag when set; `[agent]
# extra_args` come after Memento's flags (before a trailing prompt argument).

# Gemini CLI appends its --prompt text to what it reads on stdin (the prompt file).
GEMINI_PROMPT_SUFFIX = "Do the task described above, following every rule in it, then stop."


def _model_args(flag: str, config: Config) -> list[str]:
    model = config.agent_model.strip()
    return [flag, model] if model else []


def _build_claude(config: Config, req: AgentRequest) -> Invocation:
    argv = ["claude", "-p", "--permission-mode", "acceptEdits", "--output-format", "text"]
    # The prompt on stdin starts with the system prompt too; a missing file must
    # not make claude refuse to start.
    if Path(req.system_prompt_file).is_file():
        argv += ["--append-system-prompt-file", str(req.system_prompt_file)]
    argv += _model_args("--model", config)
    argv += config.agent_extra_args
    return Invocation(tuple(argv), False, Path(req.prompt_file), "claude")


def _build_codex(config: Config, req: AgentRequest) -> Invocation:
    argv = ["codex", "exec", "--sandbox", "workspace-write", "--cd", str(req.workdir),
            "--color", "never"]
    argv += _model_args("--model", config)
    argv += config.agent_extra_args
    argv.append("-")  # the prompt is read from stdin
    return Invocation(tuple(argv), False, Path(req.prompt_file), "codex")


def _build_gemini(config: Config, req: AgentRequest) -> Invocation:
    argv = ["gemini", "--approval-mode", "auto_edit"]
    argv += _model_args("--model", config)
    argv += config.agent_extra_args
    argv += ["--prompt", GEMINI_PROMPT_SUFFIX]
    return Invocation(tuple(argv), False, Path(req.prompt_file), "gemini")


_GLOB_CHARS = set("*?[")


def _task_context_files(req: AgentRequest) -> tuple[str, ...]:
    """The task's context_files: given by the caller, else read from the plan (best effort)."""
    if req.context_files is not None:
        return tuple(req.context_files)
    from .plan import parse_plan  # only the aider preset needs the plan here

    try:
        task = parse_plan(Path(req.workdir) / "docs" / "MASTER_PLAN.md").task(req.task_id)
    except (MementoError, OSError):
        return ()
    return tuple(task.context_files) if task is not None else ()


def _aider_files(req: AgentRequest) -> list[str]:
    """context_files aider can open for editing: plain paths, not folders or patterns."""
    files = []
    for entry in _task_context_files(req):
        entry = entry.strip()
        if (not entry or entry.startswith("-") or entry.endswith("/")
                or _GLOB_CHARS & set(entry) or (Path(req.workdir) / entry).is_dir()):
            continue
        files.append(entry)
    return files


def _build_aider(config: Config, req: AgentRequest) -> Invocation:
    state = Path(req.workdir) / ".memento"
    argv = ["aider", "--message-file", str(req.prompt_file)]
    if Path(req.system_prompt_file).is_file():
        argv += ["--read", str(req.system_prompt_file)]
    argv += [
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-suggest-shell-commands",
        "--no-detect-urls",
        "--no-pretty",
        "--no-stream",
        "--no-fancy-input",
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
    ]
    argv += _model_args("--model", config)
    argv += config.agent_extra_args
    argv += _aider_files(req)
    return Invocation(tuple(argv), False, None, "aider")


def _prompt_digest(path: Path) -> str:
    """A short digest of the prompt, so each attempt gets its own openclaw session."""
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    except OSError:
        return "noprompt"


def openclaw_message(req: AgentRequest) -> str:
    """The --message openclaw gets: where the prompt is and where to work."""
    return (
        f"Memento task {req.task_id}. Your full instructions (system prompt, then the task) "
        f"are in the file {req.prompt_file}: read it first and follow it. Work only in the "
        f"project at {req.workdir} (use absolute paths there), change only the files the "
        f"task allows, and do not commit."
    )


def _build_openclaw(config: Config, req: AgentRequest) -> Invocation:
    argv = [
        "openclaw", "agent", "--local",
        "--session-id", f"memento-{req.task_id}-{_prompt_digest(req.prompt_file)}",
        "--timeout", str(max(1, int(config.agent_timeout))),
    ]
    argv += config.agent_extra_args
    argv += ["--message", openclaw_message(req)]
    return Invocation(tuple(argv), False, None, "openclaw")


PRESETS: dict[str, AgentSpec] = {
    "claude": AgentSpec(
        "claude",
        "claude",
        "Claude Code in print mode; prompt on stdin, edits auto-accepted",
        _build_claude,
        separate_system_prompt=True,
    ),
    "codex": AgentSpec(
        "codex",
        "codex",
        "OpenAI Codex CLI `codex exec`; prompt on stdin, workspace-write sandbox",
        _build_codex,
    ),
    "aider": AgentSpec(
        "aider",
        "aider",
        "aider with --message-file; the task's context_files opened for editing",
        _build_aider,
        separate_system_prompt=True,
    ),
    "gemini": AgentSpec(
        "gemini",
        "gemini",
        "Gemini CLI headless mode; prompt on stdin, edits auto-approved",
        _build_gemini,
    ),
    "openclaw": AgentSpec(
        "openclaw",
        "openclaw",
        "OpenClaw `agent --local`; told to read the prompt file",
        _build_openclaw,
    ),
    "command": AgentSpec(
        "command",
        None,
        "memento.toml's [agent] command, placeholders replaced; prompt on stdin",
        _build_command,
    ),
    "script": AgentSpec(
        "script",
        None,
        "the task's `do:` shell command in the project root; no model",
        _build_script,
    ),
}


def build_invocation(
    config: Config,
    *,
    task_id: str,
    do_command: str | None,
    prompt_file: Path,
    system_prompt_file: Path,
    workdir: Path,
    context_files: Sequence[str] | None = None,
) -> Invocation:
    """The command that runs ``config``'s agent on one task; MementoError if it cannot be built.

    ``context_files`` (the task's) is used by presets that open files
    themselves (aider); when None they read it from the plan.
    """
    name = config.agent_preset
    spec = PRESETS.get(name)
    if spec is None:
        available = ", ".join(sorted(PRESETS))
        if name in PRESET_NAMES:
            raise MementoError(
                f"the {name!r} agent preset is not available in this version yet; "
                f"available: {available}"
            )
        raise MementoError(
            f"unknown agent preset {name!r}; one of {', '.join(PRESET_NAMES)} "
            f"(available now: {available})"
        )
    request = AgentRequest(
        task_id, do_command, Path(prompt_file), Path(system_prompt_file), Path(workdir),
        tuple(context_files) if context_files is not None else None,
    )
    return spec.build(config, request)


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_agent(
    invocation: Invocation,
    *,
    cwd: Path | str,
    log_path: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    on_start: Callable[[int], None] | None = None,
    grace: float = DEFAULT_GRACE,
) -> ProcResult:
    """Run an Invocation through run_in_group, with a header and a footer line in the log."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    _note(
        log_path,
        f"[memento] {_utc_now()} agent ({invocation.preset}) in {cwd}: {invocation.display()}\n",
    )
    result = run_in_group(
        invocation.argv,
        cwd=cwd,
        log_path=log_path,
        timeout=timeout,
        stdin_path=invocation.stdin_path,
        env=env,
        shell=invocation.shell,
        on_start=on_start,
        preset=invocation.preset,
        grace=grace,
    )
    took = format_duration(result.duration)
    if result.error:
        footer = f"agent did not start: {result.error}"
    elif result.timed_out:
        footer = f"agent timed out after {took}"
    elif result.interrupted:
        footer = f"agent interrupted after {took}"
    else:
        footer = f"agent exited with code {result.exit_code} after {took}"
    _note(log_path, f"\n[memento] {_utc_now()} {footer}\n")
    return result


def agent_env(
    workspace: Workspace,
    *,
    task_id: str | None = None,
    prompt_file: Path | None = None,
    system_prompt_file: Path | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The agent's environment: ours, plus MEMENTO_* facts about the project and task.

    PATH is kept (os.defpath if unset); git never prompts; variables that
    would aim git at another repository are dropped.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE") and not k.startswith("MEMENTO_")
    }
    if not env.get("PATH"):
        env["PATH"] = os.defpath
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("PYTHONUNBUFFERED", "1")  # so the log can be followed live
    env["MEMENTO_PROJECT"] = str(workspace.root)
    env["MEMENTO_PLAN"] = str(workspace.plan_path)
    env["MEMENTO_PROJECT_MAP"] = str(workspace.map_path)
    env["MEMENTO_TICK_RESULT"] = str(workspace.tick_result_path)
    if task_id:
        env["MEMENTO_TASK_ID"] = task_id
    if prompt_file is not None:
        env["MEMENTO_PROMPT_FILE"] = str(prompt_file)
    if system_prompt_file is not None:
        env["MEMENTO_SYSTEM_PROMPT_FILE"] = str(system_prompt_file)
    if extra:
        env.update(extra)
    return env
