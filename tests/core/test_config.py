"""memento.toml: durations, defaults, validation errors with lines, the interval setter."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memento_core.config import (
    DEFAULT_CONFIG_TOML,
    PRESET_NAMES,
    Config,
    load_config,
    parse_author,
    set_schedule_every,
)
from memento_core.durations import format_duration, parse_duration
from memento_core.errors import MementoError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5min", 300),
        ("5m", 300),
        ("1h", 3600),
        ("1h30m", 5400),
        ("1h 30min", 5400),
        ("2d", 172800),
        ("1.5h", 5400),
        ("45", 45),
        ("0.5", 0.5),
        (" 10 sec ", 10),
        (120, 120),
        (2.5, 2.5),
    ],
)
def test_parse_duration_accepts(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "min", "5 parsecs", "5x", "h1", "1h30", "-5s", "5min!", True, -3]
)
def test_parse_duration_rejects_with_the_value_in_the_message(text):
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (38, "38s"),
        (38.4, "38s"),
        (292, "4m52s"),
        (65, "1m05s"),
        (3720, "1h02m"),
        (86400 + 3 * 3600, "1d03h"),
        (-1, "0s"),
        (0.42, "0.4s"),
        (9.99, "10s"),
    ],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_and_parse_agree_on_whole_units():
    for seconds in (38, 292, 3720, 5400):
        assert parse_duration(format_duration(seconds)) == seconds


def test_missing_file_gives_defaults(tmp_path):
    cfg = load_config(tmp_path / "memento.toml")
    assert cfg == Config()
    assert (cfg.agent_preset, cfg.agent_timeout, cfg.verify_timeout) == ("script", 1800, 600)
    assert (cfg.schedule_every, cfg.schedule_every_text, cfg.workers_max) == (300, "5min", 1)


def test_default_template_parses_to_the_defaults(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    cfg = load_config(path)
    assert cfg.raw == tomllib.loads(DEFAULT_CONFIG_TOML)
    assert Config(raw=cfg.raw) == cfg
    for name in PRESET_NAMES:
        assert name in DEFAULT_CONFIG_TOML


def test_good_file(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(
        """
[agent]
preset = "command"
command = "python3 tools/agent.py {prompt_file}"
timeout = "1h30m"
model = "big-model"
extra_args = ["--fast", "--quiet"]
[verify]
timeout = 90
[schedule]
every = "15min"
[git]
author = "Ada Lovelace <ada@example.org>"
[workers]
max = 3
[keys]
pause = "f7"
[future]
something = 1
"""
    )
    cfg = load_config(path)
    assert cfg.agent_preset == "command"
    assert cfg.agent_command == "python3 tools/agent.py {prompt_file}"
    assert cfg.agent_timeout == 5400
    assert cfg.agent_model == "big-model"
    assert cfg.agent_extra_args == ("--fast", "--quiet")
    assert cfg.verify_timeout == 90
    assert (cfg.schedule_every, cfg.schedule_every_text) == (900, "15min")
    assert cfg.git_author == "Ada Lovelace <ada@example.org>"
    assert cfg.author == ("Ada Lovelace", "ada@example.org")  # as git's commits take it
    assert cfg.workers_max == 3
    assert cfg.keys == {"pause": "f7"}
    assert cfg.raw["future"] == {"something": 1}


def test_syntax_error_names_path_and_line(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "script"\n\ntimeout = 30min\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    err = info.value
    assert err.line == 4
    assert err.path == "memento.toml"  # as a person finds it in the project
    assert str(err).startswith("memento.toml:4: invalid TOML")
    assert "(at line" not in str(err)


def test_unterminated_file_reports_a_line(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\ncommand = "unterminated\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert info.value.line == 2


def test_unknown_preset_names_key_line_and_choices(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('# comment\n[agent]\ncommand = ""\npreset = "robot"\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    msg = str(info.value)
    assert msg.startswith("memento.toml:4: [agent] preset: unknown preset 'robot'")
    assert "claude" in msg and "command" in msg


def test_bad_duration_names_key_and_line(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\ntimeout = "30min"\n[verify]\ntimeout = "10 fortnights"\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert info.value.line == 4
    assert "[verify] timeout" in str(info.value)
    assert "fortnights" in str(info.value)


def test_dotted_key_line_is_found(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('title = "x"\nschedule.every = "0s"\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert info.value.line == 2
    assert "longer than zero" in str(info.value)


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('[agent]\nextra_args = "--fast"\n', "[agent] extra_args"),
        ("[agent]\nmodel = 3\n", "[agent] model"),
        ("[workers]\nmax = 0\n", "[workers] max"),
        ("[workers]\nmax = true\n", "[workers] max"),
        ('[git]\nauthor = "no email here"\n', "[git] author"),
        ("[keys]\npause = 5\n", "[keys] pause"),
        ("agent = 5\n", "[agent] must be a table"),
    ],
)
def test_wrong_types_name_the_key(tmp_path, body, key):
    path = tmp_path / "memento.toml"
    path.write_text(body)
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert key in str(info.value)
    assert info.value.line >= 1


def test_invalid_utf8_is_an_error_not_a_traceback(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_bytes(b'[agent]\nmodel = "\xff"\n')
    with pytest.raises(MementoError, match="UTF-8"):
        load_config(path)


def test_parse_author():
    assert parse_author("Ada Lovelace <ada@example.org>") == ("Ada Lovelace", "ada@example.org")
    assert parse_author("<ada@example.org>") is None
    assert parse_author("Ada") is None


def test_set_schedule_every_edits_one_line_and_keeps_comments(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    cfg = set_schedule_every(path, "15min")
    assert (cfg.schedule_every, cfg.schedule_every_text) == (900, "15min")
    assert load_config(path) == cfg
    old_lines = DEFAULT_CONFIG_TOML.splitlines()
    new_lines = path.read_text().splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert len(changed) == 1
    assert changed[0][1].startswith('every = "15min"')
    assert "# cron interval" in changed[0][1]


def test_set_schedule_every_creates_missing_file_and_section(tmp_path):
    missing = tmp_path / "new" / "memento.toml"
    assert set_schedule_every(missing, "1h").schedule_every == 3600
    assert load_config(missing).schedule_every_text == "1h"

    no_section = tmp_path / "memento.toml"
    no_section.write_text('[agent]\npreset = "script"  # keep me\n')
    cfg = set_schedule_every(no_section, "10m")
    assert cfg.schedule_every == 600
    assert cfg.agent_preset == "script"
    # tomli-w rewrote the file: the data survives, comments do not.
    assert tomllib.loads(no_section.read_text()) == {
        "agent": {"preset": "script"},
        "schedule": {"every": "10m"},
    }


def test_set_schedule_every_rejects_bad_values_and_leaves_file_alone(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    for bad in ("soon", "0s"):
        with pytest.raises(MementoError, match="every"):
            set_schedule_every(path, bad)
    assert path.read_text() == DEFAULT_CONFIG_TOML


def test_set_schedule_every_refuses_to_clobber_broken_toml(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text("[schedule\nevery = 1\n")
    with pytest.raises(MementoError) as info:
        set_schedule_every(path, "5min")
    assert info.value.line == 1
    assert path.read_text() == "[schedule\nevery = 1\n"


def test_set_schedule_every_uses_the_lock_file_outside_docs(tmp_path):
    (tmp_path / ".memento").mkdir()
    path = tmp_path / "memento.toml"
    set_schedule_every(path, "2min")
    assert (tmp_path / ".memento" / "locks" / "memento.toml.lock").exists()
    assert Path(path).exists()


def test_unknown_sections_and_keys_are_named_with_their_line(tmp_path):
    from memento_core.config import unknown_keys

    path = tmp_path / "memento.toml"
    text = '[agnet]\npreset = "codex"\n\n[agent]\npresett = "codex"\n\n[keys]\npause = "f6"\n'
    path.write_text(text)
    assert unknown_keys(load_config(path), text) == [("[agnet]", 1), ("[agent] presett", 5)]


def test_command_preset_without_a_command_is_an_error(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "command"\ncommand = ""\n')
    with pytest.raises(MementoError, match=r"memento.toml:3: \[agent\] command: preset \"command\" needs a command"):
        load_config(path)


def test_aider_without_a_model_is_refused_naming_the_setting_and_its_line(tmp_path):
    from memento_core.config import load_config
    from memento_core.errors import MementoError

    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "aider"\nmodel = ""\n')
    with pytest.raises(MementoError, match=r"\[agent\] model: the aider preset needs \[agent\] model") as info:
        load_config(path)
    assert info.value.line == 3
    path.write_text('[agent]\npreset = "aider"\nmodel = "sonnet"\n')
    assert load_config(path).agent_model == "sonnet"


def test_fallback_output_and_budget_are_validated_with_their_lines(tmp_path):
    from memento_core.config import load_config
    from memento_core.errors import MementoError

    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "claude"\nfallback = ["codex", "gemini"]\noutput = "claude"\n'
                    '[budget]\ndaily_usd = 5\ntask_usd = 0.5\n')
    config = load_config(path)
    assert config.agent_fallback == ("codex", "gemini") and config.agent_output == "claude"
    assert (config.budget_daily_usd, config.budget_task_usd) == (5.0, 0.5)
    for text, line, wanted in [
        ('[agent]\nfallback = ["cladue"]\n', 2, "unknown preset 'cladue'"),
        ('[agent]\nfallback = "codex"\n', 2, "expected a list of preset names"),
        ('[agent]\noutput = "gpt"\n', 2, "unknown preset 'gpt'"),
        ('[budget]\ndaily_usd = -1\n', 2, "expected an amount in US dollars"),
        ('[agent]\npreset = "claude"\nfallback = ["aider"]\n', 3, "the aider preset needs \\[agent\\] model"),
        ('[budget]\ntask_usd = "5"\n', 2, "expected an amount in US dollars"),
    ]:
        path.write_text(text)
        with pytest.raises(MementoError, match=wanted) as info:
            load_config(path)
        assert info.value.line == line, text


# --------------------------------------------------------------------------- [architect] (SPEC §16)


def test_architect_takes_the_agents_settings_unless_it_sets_its_own():
    from memento_core.config import config_from_dict

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

    from memento_core.config import config_from_dict
    from memento_core.errors import MementoError

    for table, said in (({"preset": "nope"}, "[architect] preset: unknown preset"),
                        ({"preset": "command"}, "[architect] command: preset \"command\" needs a command"),
                        ({"auto": "yes"}, "[architect] auto: expected true or false"),
                        ({"max_runs_per_day": -1}, "[architect] max_runs_per_day: expected a whole number"),
                        ({"timeout": "soon"}, "[architect] timeout:")):
        with _pytest.raises(MementoError) as caught:
            config_from_dict({"architect": table})
        assert said in str(caught.value), str(caught.value)


# ------------------------------------------- a role inheriting the agent's `script` preset


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
