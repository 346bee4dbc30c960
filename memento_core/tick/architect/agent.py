"""The architect's agent (SPEC §16, step 3 of run.py): its prompts written, confined, run.

:func:`run_architect_agent` writes the system prompt (the project's, else Memento's) and
the prompt under `.memento/prompts/`, confines the agent like a worker (SPEC §13) with
only the files its job may write (:func:`confine`; the plan, the map and the notes for
the architect, the draft for the plan drafter: an :class:`AgentRole`), runs it and
says why it failed, reading a streaming CLI's last words into the log (SPEC §20).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ... import agents
from ...config.model import Config
from ...durations import format_duration
from ...errors import MementoError
from ...locks import atomic_write_text
from ..context import TickContext, append_log
from . import ARCHITECT_ID
from .judge import WRITABLE
from .prompt import build_architect_prompt, system_prompt


@dataclass(frozen=True)
class AgentRole:
    """What one of the architect's jobs gives its agent: the system prompt's file (and its text when
    the project has none), the prompt (``prompt(inline)``: with the system prompt in it), the files
    it may write, the name of its prompt file."""

    system_file: Path
    prompt: Callable[[bool], str]
    system_text: Callable[[], str]
    writable: tuple[str, ...] = WRITABLE
    readonly: tuple[str, ...] = ()  # files of those folders the agent may not write, even confined
    name: str = ARCHITECT_ID
    who: str = "the architect"  # in the reasons: "the architect timed out after 30m"



def run_architect_agent(ctx: TickContext, config: Config, *, role: AgentRole | None = None) -> str:
    """Write the prompt and run the architect (confined when the sandbox works): '' or why it failed.
    ``role``: another job of the architect's (the plan drafter, draft.py), with its own prompts and files."""
    ws = ctx.ws
    role = role or AgentRole(ws.architect_prompt_path, lambda inline: build_architect_prompt(
        ws, ctx.plan(), include_system=inline), lambda: system_prompt(ws))
    if config.agent_preset == "script":
        return ('the architect needs an agent: set [architect] preset (or [agent] preset) in memento.toml; '
                '"script" runs only a task\'s `do:`')
    spec = agents.PRESETS.get(config.agent_preset)
    separate = spec is not None and spec.separate_system_prompt
    prompts = ws.memento_dir / "prompts"
    system_file = role.system_file
    if not system_file.is_file():
        system_file = prompts / system_file.name
        atomic_write_text(system_file, role.system_text() + "\n")
    prompt_file = prompts / f"{role.name}.md"
    text = role.prompt(not separate)
    atomic_write_text(prompt_file, text)
    append_log(ctx.log_path, f"[memento] prompt {ws.rel(prompt_file)} ({text.count(chr(10))} lines)\n")
    wrap, refused = confine(ctx, config, writable=role.writable, readonly=role.readonly)
    if refused:
        return refused
    try:
        invocation = agents.build_invocation(config, task_id=ARCHITECT_ID, do_command=None, prompt_file=prompt_file,
                                             system_prompt_file=system_file, workdir=ws.root, context_files=(),
                                             confined=bool(wrap))
    except MementoError as exc:
        append_log(ctx.log_path, f"[memento] architect: {exc}\n")
        return str(exc)
    env = agents.agent_env(ws, task_id=ARCHITECT_ID, prompt_file=prompt_file, system_prompt_file=system_file,
                           extra={**invocation.env, "MEMENTO_ARCHITECT": "1"}, config=config)
    with agents.capture(ctx.log_path) as printed:
        result = agents.run_agent(invocation, cwd=ws.root, log_path=ctx.log_path, timeout=config.agent_timeout,
                                  env=env, wrap=wrap)
    who = role.who
    # A CLI that streams events (SPEC §20) leaves only its tool calls in the log: its answer too.
    spec = agents.PRESETS.get(config.agent_output or config.agent_preset)
    said = spec.readable(printed.text()) if spec is not None and spec.readable is not None else None
    if said:
        append_log(ctx.log_path, f"[memento] {who} said:\n{said.rstrip()}\n")
    if result.error:
        return f"{who} did not start: {result.error}"
    if result.interrupted:
        return f"{who} was interrupted"
    if result.timed_out:
        return f"{who} timed out after {format_duration(config.agent_timeout)} (its process group was killed)"
    if result.exit_code != 0:
        return f"{who} exited with code {result.exit_code}"
    return ""


def confine(ctx: TickContext, config: Config, *, writable: tuple[str, ...] = WRITABLE,
            readonly: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str]:
    """(the sandbox's argv prefix or (), '' or why it cannot run): the worker's rules (tick/confine.py),
    with the project read-only but ``writable`` (the plan, the map and the notes)."""
    from ... import sandbox
    from ..confine import sandboxed

    return sandboxed(config, lambda binary: sandbox.architect_prefix(ctx.ws, config, binary=binary,
                                                                     writable_docs=writable, readonly_docs=readonly),
                     log=ctx.log_path, who="the architect", before=lambda: sandbox.worker_dir(ctx.ws),
                     detail=f"; writable: {', '.join(writable)}")
