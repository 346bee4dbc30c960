"""agents/presets/command.py: memento.toml's [agent] command split as a shell would, its placeholders
filled in, and what it refuses."""

from __future__ import annotations

import pytest

from memento_core.agents import Invocation, build_invocation
from memento_core.errors import MementoError
from tests.core.agents.presets.requests_of import command_config
from tests.core.agents.presets.requests_of import spaced_request as command_request


def test_command_preset_argv_with_spaces_in_paths(tmp_path):
    req = command_request(tmp_path)
    cfg = command_config(
        "python3 tools/agent.py --prompt={prompt_file} {system_prompt_file} "
        "'task {task_id}' {workdir} --model {model} '{unknown}'",
        agent_model="m-1",
        agent_extra_args=("--yes",),
    )
    inv = build_invocation(cfg, **req)
    assert inv == Invocation(
        (
            "python3",
            "tools/agent.py",
            f"--prompt={req['prompt_file']}",
            str(req["system_prompt_file"]),
            "task T-1",
            str(tmp_path),
            "--model",
            "m-1",
            "{unknown}",
            "--yes",
        ),
        False,
        req["prompt_file"],
        "command",
    )
    assert " " in str(req["prompt_file"])


def test_command_preset_errors(tmp_path):
    with pytest.raises(MementoError, match="needs a command"):
        build_invocation(command_config("   "), **command_request(tmp_path))
    with pytest.raises(MementoError, match="cannot be split"):
        build_invocation(command_config("agent 'unclosed"), **command_request(tmp_path))
