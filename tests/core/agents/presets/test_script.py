"""agents/presets/script.py: the task's `do:` line, run by /bin/sh in the project root; no `do:`, no run."""

from __future__ import annotations

import pytest

from memento_core.agents import build_invocation
from memento_core.config.model import Config
from memento_core.errors import MementoError
from tests.core.agents.presets.requests_of import spaced_request as command_request


def test_script_preset_without_do_refuses_to_build(tmp_path):
    with pytest.raises(
        MementoError, match=r"task T-1 has no `do:` command; the script preset needs one"
    ):
        build_invocation(Config(agent_preset="script"), **command_request(tmp_path))
    with pytest.raises(MementoError, match="has no `do:` command"):
        build_invocation(Config(agent_preset="script"), **command_request(tmp_path, do_command="  \n"))
