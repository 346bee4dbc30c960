"""sandbox/environment.py (SPEC §13): the agent's environment is an allowlist — the base and the
locale, the proxies, the preset's own variables (codex's too where its config.toml names them) and
[sandbox] env; never an agent socket, a forge or cloud token, whatever the config says. The whole
tick's view of it is judged in test_home.py."""

from __future__ import annotations

from memento_core.sandbox.environment import allowed_env, codex_env_keys

PERSON = {
    "PATH": "/usr/bin", "HOME": "/home/p", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "GIT_AUTHOR_NAME": "P",
    "HTTPS_PROXY": "http://proxy:3128", "no_proxy": "localhost", "SSL_CERT_FILE": "/etc/ca.pem",
    "ANTHROPIC_API_KEY": "a", "CLAUDE_CODE_USE_BEDROCK": "1", "OPENAI_API_KEY": "o", "GEMINI_API_KEY": "g",
    "SSH_AUTH_SOCK": "/run/agent", "TMUX": "/tmp/tmux", "DBUS_SESSION_BUS_ADDRESS": "unix:x",
    "GITHUB_TOKEN": "ghp", "AWS_SECRET_ACCESS_KEY": "s", "MEMENTO_TICK": "1", "MY_SETTING": "m",
    "XDG_STATE_HOME": "/home/p/.local/state",
}
BASE = {"PATH", "HOME", "LANG", "LC_ALL", "GIT_AUTHOR_NAME", "HTTPS_PROXY", "no_proxy", "SSL_CERT_FILE"}


def test_each_preset_gets_the_base_the_proxies_and_only_its_own_variables():
    assert set(allowed_env(PERSON, preset="claude")) == BASE | {"ANTHROPIC_API_KEY", "CLAUDE_CODE_USE_BEDROCK"}
    assert set(allowed_env(PERSON, preset="gemini")) == BASE | {"GEMINI_API_KEY"}
    assert set(allowed_env(PERSON, preset="aider")) == BASE | {"ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                                               "GEMINI_API_KEY"}
    assert set(allowed_env(PERSON, preset=None)) == BASE  # verify: no preset's keys
    assert set(allowed_env(PERSON, preset="command")) == BASE
    assert allowed_env(PERSON, preset="claude")["HTTPS_PROXY"] == "http://proxy:3128"


def test_sandbox_env_adds_names_but_never_one_the_agent_must_not_have():
    env = allowed_env(PERSON, preset=None, extra_names=("MY_SETTING", "SSH_AUTH_SOCK", "GITHUB_TOKEN",
                                                        "AWS_SECRET_ACCESS_KEY", "MISSING"))
    assert set(env) == BASE | {"MY_SETTING"}


def test_a_presets_prefix_takes_its_variables_and_sandbox_env_cannot_name_a_never_one():
    person = {**PERSON, "GH_TOKEN": "x", "GOOGLE_APPLICATION_CREDENTIALS": "/k.json", "DOCKER_HOST": "tcp://d"}
    env = allowed_env(person, preset="gemini", extra_names=("DOCKER_HOST",))
    assert "GOOGLE_APPLICATION_CREDENTIALS" in env and "GH_TOKEN" not in env and "DOCKER_HOST" not in env


def test_codex_gets_each_env_key_its_config_names_and_no_never_one(tmp_path):
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text('[model_providers.mine]\nenv_key = "MY_MODEL_KEY"\n'
                                      '[model_providers.odd]\nenv_key = "not a name"\n'
                                      '[model_providers.bad]\nenv_key = "GITHUB_TOKEN"\n'
                                      '[model_providers.none]\nname = "x"\n')
    person = {**PERSON, "CODEX_HOME": str(home), "MY_MODEL_KEY": "k", "OTHER_KEY": "o"}
    assert codex_env_keys(person) == {"MY_MODEL_KEY"}
    env = allowed_env(person, preset="codex")
    assert env["MY_MODEL_KEY"] == "k" and "OTHER_KEY" not in env and "GITHUB_TOKEN" not in env
    assert "OPENAI_API_KEY" in env and "CODEX_HOME" in env
    assert "MY_MODEL_KEY" not in allowed_env(person, preset="claude")  # codex's keys are codex's


def test_codex_without_a_readable_config_names_nothing(tmp_path):
    assert codex_env_keys({"HOME": str(tmp_path)}) == set()  # ~/.codex/config.toml missing
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("model_providers = [\n")
    assert codex_env_keys({"HOME": str(tmp_path)}) == set()
    (tmp_path / ".codex" / "config.toml").write_text('model_providers = "x"\n')
    assert codex_env_keys({"HOME": str(tmp_path)}) == set()
    (tmp_path / ".codex" / "config.toml").write_text('[model_providers.m]\nenv_key = "HOME_KEY"\n')
    assert codex_env_keys({"HOME": str(tmp_path)}) == {"HOME_KEY"}
