"""What a preset is given, for the tests of its argv: a task's request and memento.toml's [agent]."""

from __future__ import annotations

from pathlib import Path

from memento_core.config.model import Config


def request(tmp_path: Path, **kw) -> dict:
    """build_invocation's arguments for task T-1 in ``tmp_path``: the prompt and system prompt as a tick writes them."""
    prompt = tmp_path / ".memento" / "prompts" / "T-1.md"
    prompt.parent.mkdir(parents=True, exist_ok=True)
    prompt.write_text("SYSTEM\n\n---\n\n# Your task: T-1\n", encoding="utf-8")
    system = tmp_path / "scripts" / "tick_worker_system_prompt.md"
    system.parent.mkdir(parents=True, exist_ok=True)
    system.write_text("SYSTEM\n", encoding="utf-8")
    args = dict(task_id="T-1", do_command=None, prompt_file=prompt, system_prompt_file=system,
                workdir=tmp_path)
    args.update(kw)
    return args


def config(preset: str, model: str = "", extra: tuple[str, ...] = ()) -> Config:
    """[agent] for ``preset``, its model and extra arguments, a 20-minute timeout."""
    return Config(agent_preset=preset, agent_model=model, agent_extra_args=extra,
                  agent_timeout=1200.0)


def spaced_request(tmp_path: Path, **kw) -> dict:
    """A request whose prompt, system prompt and folder have spaces (and a non-ASCII line) in them."""
    prompt = tmp_path / "prompt dir" / "the prompt.md"
    prompt.parent.mkdir(parents=True, exist_ok=True)
    prompt.write_text("Do T-1 please.\nSecond line ✓\n", encoding="utf-8")
    system = tmp_path / "system prompt.md"
    system.write_text("You are a worker.\n")
    args = dict(
        task_id="T-1",
        do_command=None,
        prompt_file=prompt,
        system_prompt_file=system,
        workdir=tmp_path,
    )
    args.update(kw)
    return args


def command_config(command: str, **kw) -> Config:
    """[agent] preset = "command" with ``command``."""
    return Config(agent_preset="command", agent_command=command, **kw)
