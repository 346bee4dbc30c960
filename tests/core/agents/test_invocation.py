"""agents/invocation.py: the values every preset shares; an invocation's command line as the log shows
it, and the model flag only when memento.toml names a model."""

from __future__ import annotations

import shlex
from pathlib import Path

from memento_core.agents.invocation import Invocation, model_args
from memento_core.config.model import Config


def test_display_quotes_an_argv_as_a_shell_would_read_it_back():
    argv = ("agent", "--prompt", "/tmp/a dir/the prompt.md", "it's")
    shown = Invocation(argv, False, Path("/tmp/p"), "command").display()
    assert shlex.split(shown) == list(argv)
    assert Invocation("make test && echo ok", True, None, "script").display() == "make test && echo ok"


def test_model_args_only_for_a_model_that_is_set():
    assert model_args("--model", Config(agent_model="  opus \n")) == ["--model", "opus"]
    assert model_args("-m", Config(agent_model="   ")) == []
    assert model_args("--model", Config()) == []
