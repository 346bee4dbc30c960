"""config/sections.py: another role's agent ([review], [architect]) takes [agent]'s keys unless it
sets its own, and never inherits the `script` preset when it runs by itself (SPEC §16)."""

from __future__ import annotations

import pytest

from memento_core.config.load import load_config
from memento_core.errors import MementoError


def test_architect_takes_the_agents_settings_unless_it_sets_its_own():
    from memento_core.config.load import config_from_dict

    agent = {"preset": "command", "command": "run-agent {prompt_file}", "model": "m1", "extra_args": ["-v"],
             "timeout": "5min"}
    same = config_from_dict({"agent": agent})
    assert (same.architect.preset, same.architect.command, same.architect.model, same.architect.extra_args,
            same.architect.timeout) == ("command", "run-agent {prompt_file}", "m1", ("-v",), 300.0)
    assert same.architect_auto is False and same.architect_max_runs_per_day == 3
    own = config_from_dict({"agent": agent, "architect": {"preset": "claude", "model": "opus", "auto": True,
                                                          "max_runs_per_day": 1, "timeout": "1h"}})
    # Another preset does not inherit the agent's command, model or arguments.
    assert (own.architect.preset, own.architect.command, own.architect.model, own.architect.extra_args,
            own.architect.timeout) == ("claude", "", "opus", (), 3600.0)
    assert own.architect_auto is True and own.architect_max_runs_per_day == 1


def test_architect_values_are_validated_with_their_line():
    import pytest as _pytest

    from memento_core.config.load import config_from_dict
    from memento_core.errors import MementoError

    for table, said in (({"preset": "nope"}, "[architect] preset: unknown preset"),
                        ({"preset": "command"}, "[architect] command: preset \"command\" needs a command"),
                        ({"auto": "yes"}, "[architect] auto: expected true or false"),
                        ({"max_runs_per_day": -1}, "[architect] max_runs_per_day: expected a whole number"),
                        ({"timeout": "soon"}, "[architect] timeout:")):
        with _pytest.raises(MementoError) as caught:
            config_from_dict({"architect": table})
        assert said in str(caught.value), str(caught.value)


def test_review_inheriting_the_script_preset_is_an_error_with_its_line(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "script"\n\n[review]\nmax_rounds = 2\n')
    with pytest.raises(MementoError) as caught:
        load_config(path)
    assert caught.value.line == 4 and "set a preset in [review]" in str(caught.value)


def test_architect_inheriting_script_is_an_error_only_when_it_runs_by_itself(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "script"\n\n[architect]\nauto = false\n')
    assert load_config(path).architect.preset == "script"  # the default memento.toml: fine
    path.write_text('[agent]\npreset = "script"\n\n[architect]\nauto = true\n')
    with pytest.raises(MementoError) as caught:
        load_config(path)
    assert caught.value.line == 4 and "set a preset in [architect]" in str(caught.value)
    path.write_text('[agent]\npreset = "script"\n\n[architect]\nauto = true\npreset = "command"\ncommand = "x"\n')
    assert load_config(path).architect.preset == "command"
