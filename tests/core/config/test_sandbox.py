"""config/sandbox.py: memento.toml's [sandbox] read and refused at its line (mode, network, writable, allow,
readable, env), and the variables never passed to the agent whatever env says (SPEC §13). What the values
do to a confined run is tests/core/sandbox/."""

from __future__ import annotations

import pytest

from memento_core.config.load import config_from_dict, load_config
from memento_core.config.sandbox import ENV_NEVER, env_never
from memento_core.errors import MementoError


def test_config_defaults_and_values(tmp_path):
    cfg = config_from_dict({})
    assert (cfg.sandbox_mode, cfg.sandbox_network, cfg.sandbox_writable) == ("auto", "model", ())
    cfg = config_from_dict({"sandbox": {"mode": "none", "network": False, "writable": ["~/.cache/pip", " x "]}})
    assert (cfg.sandbox_mode, cfg.sandbox_network, cfg.sandbox_writable) == ("none", "none", ("~/.cache/pip", "x"))
    assert config_from_dict({"sandbox": {"network": True}}).sandbox_network == "all"


@pytest.mark.parametrize(("body", "line", "words"), [
    ('mode = "docker"', 3, "unknown mode 'docker'; one of auto, bwrap, none"),
    ('network = "yes"', 3, "unknown network 'yes'; one of model, all, none"),
    ('network = 1', 3, "unknown network 1"),
    ('writable = "~/.cache"', 3, "expected a list of paths"),
    ('writable = [""]', 3, "expected a list of paths"),
    # [sandbox] allow (tests/core/sandbox/test_network.py has the rest of the network's)
    ('allow = "pypi.org"', 3, "expected a list of hosts"),
    ('allow = ["pypi.org",\n  "https://evil.example/x",\n]', 4, "'https://evil.example/x' is not a host or host:port"),
    ('allow = ["pypi.org:99999"]', 3, "'pypi.org:99999' is not a host"),
    ('allow = [3]', 3, "3 is not a host"),
])
def test_config_errors_name_the_key_and_line(tmp_path, body, line, words):
    path = tmp_path / "memento.toml"
    path.write_text(f'[agent]\n[sandbox]\n{body}\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert info.value.line == line and words in str(info.value)
    assert str(info.value).startswith(f"memento.toml:{line}: ")  # named as in the project (issue 38 item 11)


def test_default_memento_toml_documents_the_sandbox_keys():
    from memento_core.config.write import DEFAULT_CONFIG_TOML

    cfg = config_from_dict(__import__("tomllib").loads(DEFAULT_CONFIG_TOML))
    assert (cfg.sandbox_mode, cfg.sandbox_network, cfg.sandbox_writable, cfg.sandbox_allow) == ("auto", "model", (), ())


@pytest.mark.parametrize(("body", "words"), [
    ('readable = ["datasets"]', "expected a list of paths of the home folder"),
    ('readable = [3]', "expected a list of paths of the home folder"),
    ('env = ["NOT A NAME"]', "expected a list of variable names"),
    ('env = ["SSH_AUTH_SOCK"]', "SSH_AUTH_SOCK is never passed"),
    ('env = ["AWS_SECRET_ACCESS_KEY"]', "is never passed"),
])
def test_readable_and_env_errors_name_the_file_and_line(tmp_path, body, words):
    path = tmp_path / "memento.toml"
    path.write_text(f'[agent]\n[sandbox]\n{body}\n')
    with pytest.raises(MementoError) as info:
        load_config(path)
    assert info.value.line == 3 and words in str(info.value) and "memento.toml" in str(info.value.path)


@pytest.mark.parametrize("name", ["SSH_AUTH_SOCK", "GH_TOKEN", "MEMENTO_TICK", "DBUS_SESSION_BUS_ADDRESS",
                                  "AWS_PROFILE", "GITHUB_ACTIONS", "DOCKER_HOST", "VAULT_ADDR", "TWINE_PASSWORD"])
def test_secrets_sockets_and_mementos_own_markers_are_never_passed(name):
    assert env_never(name)


@pytest.mark.parametrize("name", ["PATH", "PYTHONPATH", "HOME", "LANG", "GHOST", "AWSOME", "MY_AWS_KEY", "ssh_auth_sock"])
def test_an_ordinary_variable_may_be_passed(name):
    assert not env_never(name)
    assert config_from_dict({"sandbox": {"env": [name]}}).sandbox_env == (name,)


def test_every_named_never_variable_is_refused_in_env(tmp_path):
    path = tmp_path / "memento.toml"
    for name in sorted(ENV_NEVER):
        path.write_text(f'[sandbox]\nenv = ["PYTHONPATH", "{name}"]\n')
        with pytest.raises(MementoError, match=f"{name} is never passed to the agent"):
            load_config(path)


def test_readable_and_env_read_a_single_value_as_a_list_and_paths_stripped():
    cfg = config_from_dict({"sandbox": {"readable": " ~/datasets ", "env": "PYTHONPATH"}})
    assert (cfg.sandbox_readable, cfg.sandbox_env) == (("~/datasets",), ("PYTHONPATH",))
    cfg = config_from_dict({"sandbox": {"readable": ["~", "/srv/models"], "allow": [" pypi.org "]}})
    assert (cfg.sandbox_readable, cfg.sandbox_allow) == (("~", "/srv/models"), ("pypi.org",))
    assert (cfg.sandbox_env, cfg.sandbox_writable) == ((), ())


@pytest.mark.parametrize("entry", ["~someone/x", "data", "./x", "~/a\nb", "~/a\0b", ""])
def test_a_readable_entry_that_is_no_path_of_the_home_is_refused(entry):
    with pytest.raises(MementoError, match="expected a list of paths of the home folder"):
        config_from_dict({"sandbox": {"readable": [entry]}})
