"""config/load.py: memento.toml read into a Config, the defaults when it is missing, and every
validation error with its file, key and line."""

from __future__ import annotations

import pytest

from memento_core.config.load import load_config
from memento_core.config.model import Config
from memento_core.errors import MementoError


def test_missing_file_gives_defaults(tmp_path):
    cfg = load_config(tmp_path / "memento.toml")
    assert cfg == Config()
    assert (cfg.agent_preset, cfg.agent_timeout, cfg.verify_timeout) == ("script", 1800, 600)
    assert (cfg.schedule_every, cfg.schedule_every_text, cfg.workers_max) == (300, "5min", 1)


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


def test_command_preset_without_a_command_is_an_error(tmp_path):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "command"\ncommand = ""\n')
    with pytest.raises(MementoError, match=r"memento.toml:3: \[agent\] command: preset \"command\" needs a command"):
        load_config(path)


def test_aider_without_a_model_is_refused_naming_the_setting_and_its_line(tmp_path):
    from memento_core.config.load import load_config
    from memento_core.errors import MementoError

    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "aider"\nmodel = ""\n')
    with pytest.raises(MementoError, match=r"\[agent\] model: the aider preset needs \[agent\] model") as info:
        load_config(path)
    assert info.value.line == 3
    path.write_text('[agent]\npreset = "aider"\nmodel = "sonnet"\n')
    assert load_config(path).agent_model == "sonnet"


def test_fallback_output_and_budget_are_validated_with_their_lines(tmp_path):
    from memento_core.config.load import load_config
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
