"""memento.toml's [sandbox] validated, and the variables never passed to the agent (SPEC §13).

``mode``, ``network``, ``writable``, ``allow``, ``readable`` and ``env``; the
never-list (:data:`ENV_NEVER`, :func:`env_never`) is also what
sandbox/environment.py and sandbox/home.py hold the agent's environment to.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import MementoError
from .validator import Validator, entry_line

SANDBOX_MODES = ("auto", "bwrap", "none")

# Never passed to the agent, whatever [sandbox] env says (SPEC §13; sandbox/environment.py).
ENV_NEVER = frozenset({
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "TMUX", "TMUX_PANE", "STY", "DISPLAY",
    "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN",
    "NPM_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "CARGO_REGISTRY_TOKEN", "KUBECONFIG",
    "HCLOUD_TOKEN", "DIGITALOCEAN_TOKEN", "MEMENTO_SANDBOX", "MEMENTO_TICK",
})
ENV_NEVER_PREFIXES = ("DBUS_", "AWS_", "AZURE_", "GITHUB_", "GH_", "GITLAB_", "CLOUDSDK_", "CLOUDFLARE_",
                      "TWINE_", "PYPI_", "VAULT_", "DOCKER_")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_never(name: str) -> bool:
    """A variable the agent is never given, whatever ``[sandbox] env`` says."""
    return name in ENV_NEVER or name.startswith(ENV_NEVER_PREFIXES)


def sandbox_section(v: Validator) -> dict[str, Any]:
    """[sandbox] mode, network, writable, allow (SPEC §13), validated."""
    from ..hosts import NETWORK_MODES, parse_host

    mode = v.string("sandbox", "mode", "auto")
    if mode not in SANDBOX_MODES:
        raise v.fail("sandbox", "mode", f"unknown mode {mode!r}; one of {', '.join(SANDBOX_MODES)}")
    network = v.table("sandbox").get("network", "model")
    network = {True: "all", False: "none"}.get(network, network) if isinstance(network, bool) else network
    if network not in NETWORK_MODES:
        raise v.fail("sandbox", "network", f"unknown network {network!r}; one of {', '.join(NETWORK_MODES)} "
                     "(true and false are all and none)")
    writable = v.table("sandbox").get("writable", [])
    if not isinstance(writable, list) or not all(isinstance(w, str) and w.strip() for w in writable):
        raise v.fail("sandbox", "writable", f'expected a list of paths such as "~/.cache/pip", got {writable!r}')
    allow = v.table("sandbox").get("allow", [])
    if not isinstance(allow, list):
        raise v.fail("sandbox", "allow", f'expected a list of hosts such as ["pypi.org", "example.com:8443"], '
                     f"got {allow!r}")
    for entry in allow:
        if not isinstance(entry, str) or parse_host(entry) is None:
            raise MementoError(f'[sandbox] allow: {entry!r} is not a host or host:port (e.g. "pypi.org", '
                               '"*.example.com", "10.0.0.5:5432", "[::1]:8080")', path=v.path,
                               line=entry_line(v.text, "sandbox", "allow", entry))
    return {"sandbox_mode": mode, "sandbox_network": network,
            "sandbox_writable": tuple(w.strip() for w in writable),
            "sandbox_allow": tuple(entry.strip() for entry in allow), **_sandbox_home(v)}


def _sandbox_home(v: Validator) -> dict[str, Any]:
    """[sandbox] readable (paths of the home folder) and env (variable names), SPEC §13."""
    table = v.table("sandbox")
    readable = table.get("readable", [])
    if not isinstance(readable, list):
        readable = [readable]
    for entry in readable:
        path = entry.strip() if isinstance(entry, str) else ""
        if not (path == "~" or path.startswith(("~/", "/"))) or any(c in path for c in "\0\n"):
            raise v.fail("sandbox", "readable", f'expected a list of paths of the home folder such as '
                         f'"~/datasets", got {entry!r}')
    names = table.get("env", [])
    if not isinstance(names, list):
        names = [names]
    for name in names:
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise v.fail("sandbox", "env", f'expected a list of variable names such as "PYTHONPATH", got {name!r}')
        if env_never(name):
            raise v.fail("sandbox", "env", f"{name} is never passed to the agent (no agent sockets, "
                         "terminals, display, cloud or forge tokens reach it; see docs/confinement.md)")
    return {"sandbox_readable": tuple(r.strip() for r in readable), "sandbox_env": tuple(names)}
