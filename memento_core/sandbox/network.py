"""The agent's network in the sandbox (SPEC §13): what it may reach, and the layout that enforces it.

``[sandbox] network``:

* ``all``: the host's network, nothing added;
* ``none``: ``--unshare-net`` (a network namespace with only ``lo``);
* ``model`` (the default): ``--unshare-net`` too, and the agent reaches only its
  preset's model endpoint (``endpoints``) and the ``[sandbox] allow`` hosts. Memento
  runs a filtering proxy **outside** for the run (proxy.py, which starts bwrap as
  its child), reachable inside only through unix sockets in a folder bound into
  the namespace at ``INSIDE``; inside, a forwarder (inner.py) runs the command as
  its child and listens on loopback: an HTTP(S) proxy the command gets in
  ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, and, for a loopback base URL (a
  local model server), a port forward of that same host:port. This is how Claude
  Code's own sandbox runtime (``@anthropic-ai/sandbox-runtime``) does it on Linux.

Under ``model`` and ``none`` (proxy.py runs bwrap there too, without listeners for
``none``) every unix socket under ``/run`` (and ``/var/run``), looked up as each run
starts, is covered with ``/dev/null``: D-Bus, the Docker socket, systemd, a person's
``/run/user/UID/…``. A new network namespace hides abstract sockets (X11's
``@/tmp/.X11-unix``, D-Bus sessions); ``/tmp`` is private already.

``verify`` runs in the same sandbox as the agent, so with the same network: it
runs what the agent wrote and gets nothing the agent did not have.

The endpoint of each preset comes from the base URL it is given (its variable
in Memento's environment, its config file), else its provider's API host, plus
what its login needs (a token refresh). ``command`` and ``script`` have no model
endpoint: they reach only ``allow``. A real CLI whose endpoint cannot be known
(an unknown provider) is a config error naming ``[sandbox] allow`` (``check``),
unless ``allow`` names hosts: then those are what it reaches.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from ..config.model import Config
from ..errors import MementoError
from ..hosts import HostPattern, is_loopback, parse_host

INSIDE = "/tmp/.memento-net"  # the proxy's socket folder, inside the sandbox
INSIDE_INNER = "/tmp/.memento-net-inner.py"  # the inside forwarder
NET_DIR_FD = 3  # proxy.py hands bwrap its socket folder on this descriptor (--ro-bind-fd)
_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Endpoint:
    """One host:port the agent may reach, and why (shown by `memento doctor`)."""

    host: str
    port: int
    why: str

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class Reach:
    """What a preset may reach under ``network = "model"``."""

    preset: str
    endpoints: tuple[Endpoint, ...] = ()
    allow: tuple[HostPattern, ...] = ()
    unknown: str = ""  # why the preset's endpoint cannot be known ('' when it can, or it needs none)
    notes: tuple[str, ...] = field(default=())

    @property
    def forwards(self) -> tuple[Endpoint, ...]:
        """The loopback endpoints and ``allow`` entries with a port: a forward of that host:port inside."""
        allowed = (Endpoint(p.host, p.port, "[sandbox] allow") for p in self.allow if p.port is not None)
        return tuple(dict.fromkeys(e for e in (*self.endpoints, *allowed) if e.loopback))

    def patterns(self) -> list[str]:
        """Every host:port the filtering proxy lets through (endpoints and ``allow``)."""
        return list(dict.fromkeys([*(str(e) for e in self.endpoints), *(str(p) for p in self.allow)]))


# ------------------------------------------------------------------ the endpoints of each preset


def _from_url(url: str, why: str) -> Endpoint | None:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return Endpoint(parts.hostname, port or (443 if parts.scheme == "https" else 80), why)


def _url_or_default(env: Mapping[str, str], names: tuple[str, ...], default: str) -> Endpoint | None:
    for name in names:
        if env.get(name, "").strip():
            return _from_url(env[name], name)
    return _from_url(default, f"the provider's API host ({' / '.join(names)} unset)")


def _json(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # JSON5 (openclaw.json may be): comments and trailing commas
        loose = re.sub(r"(?m)^\s*//[^\n]*$", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
        loose = re.sub(r",(\s*[}\]])", r"\1", loose)
        try:
            data = json.loads(loose)
        except json.JSONDecodeError:
            return {}
    return data if isinstance(data, dict) else {}


def _claude(env: Mapping[str, str], home: Path, config: Config) -> tuple[list[Endpoint | None], str]:
    folder = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    settings = _json(folder / "settings.json").get("env")
    settings = {k: v for k, v in settings.items() if isinstance(v, str)} if isinstance(settings, dict) else {}
    env = {**settings, **env}  # the CLI applies its settings' env
    for flag, var in (("CLAUDE_CODE_USE_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL"),
                      ("CLAUDE_CODE_USE_VERTEX", "ANTHROPIC_VERTEX_BASE_URL"),
                      ("CLAUDE_CODE_USE_FOUNDRY", "ANTHROPIC_FOUNDRY_BASE_URL")):
        if str(env.get(flag, "")).strip() not in ("", "0", "false"):
            if str(env.get(var, "")).strip():
                return [_from_url(str(env[var]), var)], ""
            return [], f"{flag} is set without {var}"
    found = [_url_or_default(env, ("ANTHROPIC_BASE_URL",), "https://api.anthropic.com")]
    if (folder / ".credentials.json").exists():  # a claude.ai login refreshes its token here
        found.append(Endpoint("platform.claude.com", 443, "the claude.ai login's token refresh"))
    return found, ""


def _codex(env: Mapping[str, str], home: Path, config: Config) -> tuple[list[Endpoint | None], str]:
    folder = Path(env.get("CODEX_HOME") or home / ".codex")
    try:
        conf = tomllib.loads((folder / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        conf = {}
    profile = conf.get("profiles", {}).get(conf.get("profile", ""), {}) if isinstance(conf.get("profiles"), dict) else {}
    provider = (profile.get("model_provider") if isinstance(profile, dict) else None) or conf.get("model_provider",
                                                                                                  "openai")
    table = conf.get("model_providers", {}).get(provider) if isinstance(conf.get("model_providers"), dict) else None
    where = f"{folder / 'config.toml'} [model_providers.{provider}] base_url"
    if isinstance(table, dict) and isinstance(table.get("base_url"), str):
        return [_from_url(table["base_url"], where)], ""
    if provider in ("oss", "ollama"):
        if env.get("CODEX_OSS_BASE_URL", "").strip():
            return [_from_url(env["CODEX_OSS_BASE_URL"], "CODEX_OSS_BASE_URL")], ""
        return [Endpoint("localhost", int(env.get("CODEX_OSS_PORT", "") or 11434), "codex's local model")], ""
    if provider != "openai":
        return [], f"codex's model provider {provider!r} has no base_url in {folder / 'config.toml'}"
    found = [_url_or_default(env, ("OPENAI_BASE_URL",), "https://api.openai.com/v1")]
    auth = _json(folder / "auth.json")
    if auth.get("tokens"):  # a ChatGPT login: its backend and the token refresh
        found += [Endpoint("chatgpt.com", 443, "the ChatGPT login's backend"),
                  Endpoint("auth.openai.com", 443, "the ChatGPT login's token refresh")]
    return found, ""


def _truthy(value: str | None) -> bool:
    return str(value or "").strip().lower() in ("1", "true", "yes")


def _gemini(env: Mapping[str, str], home: Path, config: Config) -> tuple[list[Endpoint | None], str]:
    oauth = [Endpoint("oauth2.googleapis.com", 443, "the Google login's token refresh")]
    if _truthy(env.get("GOOGLE_GENAI_USE_VERTEXAI")):
        if env.get("GOOGLE_VERTEX_BASE_URL", "").strip():
            return [_from_url(env["GOOGLE_VERTEX_BASE_URL"], "GOOGLE_VERTEX_BASE_URL"), *oauth], ""
        location = env.get("GOOGLE_CLOUD_LOCATION", "").strip()
        if not location:
            return [], "GOOGLE_GENAI_USE_VERTEXAI is set without GOOGLE_VERTEX_BASE_URL or GOOGLE_CLOUD_LOCATION"
        host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
        return [Endpoint(host, 443, f"Vertex AI in {location}"), *oauth], ""
    found = [_url_or_default(env, ("GOOGLE_GEMINI_BASE_URL",), "https://generativelanguage.googleapis.com")]
    settings = _json(home / ".gemini" / "settings.json")
    auth = settings.get("security", {}).get("auth", {}) if isinstance(settings.get("security"), dict) else {}
    chosen = auth.get("selectedType", "") if isinstance(auth, dict) else ""
    if chosen == "oauth-personal" or (not chosen and (home / ".gemini" / "oauth_creds.json").exists()):
        found += [_url_or_default(env, ("CODE_ASSIST_ENDPOINT",), "https://cloudcode-pa.googleapis.com"), *oauth,
                  Endpoint("www.googleapis.com", 443, "the Google login's user info")]
    return found, ""


# aider's model names (and its aliases) by provider: the base URL variables litellm reads, the default host.
_AIDER = (
    (("openai/", "gpt", "o1", "o3", "o4", "4o", "4", "4-turbo", "3"), ("OPENAI_API_BASE", "OPENAI_BASE_URL"),
     "https://api.openai.com/v1"),
    (("anthropic/", "claude", "sonnet", "opus", "haiku"), ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
     "https://api.anthropic.com"),
    (("gemini/", "gemini", "flash"), ("GEMINI_API_BASE",), "https://generativelanguage.googleapis.com"),
    (("deepseek", "r1"), ("DEEPSEEK_API_BASE",), "https://api.deepseek.com"),
    (("openrouter/",), ("OPENROUTER_API_BASE",), "https://openrouter.ai"),
    (("ollama/", "ollama_chat/"), ("OLLAMA_API_BASE",), "http://localhost:11434"),
    (("groq/",), ("GROQ_API_BASE",), "https://api.groq.com"),
    (("xai/", "grok"), ("XAI_API_BASE",), "https://api.x.ai"),
    (("mistral/",), ("MISTRAL_API_BASE",), "https://api.mistral.ai"),
)


def _aider(env: Mapping[str, str], home: Path, config: Config) -> tuple[list[Endpoint | None], str]:
    model = config.agent_model.strip().lower()
    for prefixes, names, default in _AIDER:
        if any(model == p or model.startswith(p if p.endswith("/") else (p, p + "-")) for p in prefixes):
            return [_url_or_default(env, names, default)], ""
    return [], f"aider's model {config.agent_model!r} names no provider Memento knows"


_OPENCLAW = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com",
             "google": "https://generativelanguage.googleapis.com", "openrouter": "https://openrouter.ai"}


def _openclaw(env: Mapping[str, str], home: Path, config: Config) -> tuple[list[Endpoint | None], str]:
    path = Path(env.get("OPENCLAW_CONFIG_PATH") or Path(env.get("OPENCLAW_STATE_DIR") or home / ".openclaw")
                / "openclaw.json")
    conf = _json(path)
    models = conf.get("models") if isinstance(conf.get("models"), dict) else {}
    providers = models.get("providers") if isinstance(models.get("providers"), dict) else {}
    agents = conf.get("agents") if isinstance(conf.get("agents"), dict) else {}
    default = (agents.get("defaults") or {}).get("model") if isinstance(agents.get("defaults"), dict) else None
    primary = config.agent_model.strip() or (default.get("primary", "") if isinstance(default, dict) else
                                             default if isinstance(default, str) else "")
    provider = primary.split("/", 1)[0] if "/" in primary else ""
    table = providers.get(provider)
    if isinstance(table, dict) and isinstance(table.get("baseUrl"), str):
        return [_from_url(table["baseUrl"], f"{path} models.providers.{provider}.baseUrl")], ""
    if provider in _OPENCLAW:
        return [_from_url(_OPENCLAW[provider], f"openclaw's provider {provider}")], ""
    return [], (f"openclaw's model {primary!r} names no provider with a baseUrl in {path}" if primary
                else f"openclaw has no model set (agents.defaults.model.primary in {path}, or [agent] model)")


_PRESETS = {"claude": _claude, "codex": _codex, "gemini": _gemini, "aider": _aider, "openclaw": _openclaw}


def reach(config: Config, *, env: Mapping[str, str] | None = None, home: str | None = None) -> Reach:
    """What ``config``'s agent preset may reach under ``network = "model"``, read from ``env`` (Memento's
    environment: the agent is given the preset's variables from it) and the preset's files in ``home``."""
    env = os.environ if env is None else env
    allow = tuple(p for p in (parse_host(a) for a in config.sandbox_allow) if p is not None)
    preset = config.agent_preset
    find = _PRESETS.get(preset)
    if find is None:  # command, script: no model endpoint of their own
        return Reach(preset, (), allow, notes=(f"the {preset} preset has no model endpoint: only [sandbox] allow",))
    try:
        found, unknown = find(env, Path(home or os.path.expanduser("~")), config)
    except (AttributeError, TypeError, ValueError) as exc:  # a config file of an unexpected shape
        found, unknown = [], f"its configuration could not be read ({type(exc).__name__}: {exc})"
    endpoints = tuple(dict.fromkeys(e for e in found if e is not None))
    if not endpoints and not unknown:
        unknown = f"the {preset} preset's base URL is not an http(s) URL"
    return Reach(preset, endpoints, allow, unknown)


def check(config: Config, *, path: Path | str = "memento.toml", text: str = "",
          env: Mapping[str, str] | None = None, home: str | None = None) -> None:
    """A MementoError (with the line of ``[sandbox] network``) when a preset this config runs by
    itself (the agent, its fallbacks, the reviewer, the architect with ``auto``) under
    ``network = "model"`` has no endpoint Memento can know and ``allow`` names none."""
    from ..config.validator import key_line

    roles = [config, *(replace(config, agent_preset=p) for p in config.agent_fallback)]
    roles += [config.as_agent(r) for r in (config.review, config.architect if config.architect_auto else None)
              if r is not None]
    for role in roles:
        why = unknown(role, env=env, home=home)
        if why:
            line = key_line(text, "sandbox", "network") or key_line(text, "sandbox", "allow")
            raise MementoError(why, path=Path(path), line=line)


def unknown(config: Config, *, env: Mapping[str, str] | None = None, home: str | None = None,
            found: Reach | None = None) -> str:
    """'' or why ``config``'s preset cannot run under its network (its endpoint unknown, ``allow`` empty)."""
    if config.sandbox_network != "model" or config.sandbox_allow:
        return ""
    found = found or reach(config, env=env, home=home)
    if not found.unknown:
        return ""
    return (f'[sandbox] network = "model": the {found.preset} preset\'s model endpoint cannot be known '
            f'({found.unknown}); name its host in [sandbox] allow (e.g. allow = ["api.example.com:443"]) '
            f'or set network = "all"')


# ------------------------------------------------------------------ the layout


def python_binary() -> str:
    """The interpreter proxy.py and inner.py run with: Memento's own, its links resolved."""
    return os.path.realpath(sys.executable)


def bwrap_args(config: Config, root: Path) -> list[str]:
    """What ``network`` adds to bwrap's options (before ``--``): nothing for ``all``."""
    if config.sandbox_network == "all":
        return []
    # proxy.py adds the /dev/null over each unix socket under /run right after --unshare-net, when it
    # starts bwrap: a socket that went away between the agent and verify must not fail verify.
    argv = ["--unshare-net", "--ro-bind-fd", str(NET_DIR_FD), INSIDE, "--ro-bind", str(_HERE / "inner.py"),
            INSIDE_INNER]
    prefix = os.path.realpath(sys.base_prefix)  # the interpreter's own files, under a private home too
    real_root = os.path.realpath(root)
    if prefix != "/" and not (real_root + "/").startswith(prefix.rstrip("/") + "/"):
        argv += ["--ro-bind", prefix, prefix]
    return argv


def folder_tag(root: Path | str) -> str:
    """What names the proxy folders of ``root``'s runs: ``/tmp/memento-net-TAG-…``."""
    import hashlib

    return hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:8]


def wrap(config: Config, bwrap_argv: list[str], found: Reach, root: Path) -> list[str]:
    """The whole prefix: under ``model`` and ``none``, proxy.py outside starts ``bwrap_argv`` (which ends
    in ``--``), and inner.py runs the command inside; under ``all`` ``bwrap_argv`` as it is."""
    if config.sandbox_network == "all":
        return bwrap_argv
    if config.sandbox_network == "none":  # no listeners: proxy.py only covers the sockets
        python = python_binary()
        return [python, "-I", "-S", str(_HERE / "proxy.py"), "--tag", folder_tag(root), "--", *bwrap_argv,
                python, "-I", "-S", INSIDE_INNER, "--"]
    why = unknown(config, found=found)
    if why:  # the tick checks it first (check); a run started otherwise fails with it, never unconfined
        raise MementoError(why)
    python = python_binary()
    outer = [python, "-I", "-S", str(_HERE / "proxy.py"), "--tag", folder_tag(root)]
    inner = [python, "-I", "-S", INSIDE_INNER]
    for number, endpoint in enumerate(found.forwards):
        outer += ["--forward", str(endpoint)]
        inner += ["--forward", f"{endpoint}={INSIDE}/fwd-{number}.sock"]
    for pattern in found.patterns():
        outer += ["--allow", pattern]
    inner += ["--proxy", f"{INSIDE}/proxy.sock"]
    return [*outer, "--", *bwrap_argv, *inner, "--"]


def describe(config: Config, *, env: Mapping[str, str] | None = None, home: str | None = None) -> list[str]:
    """What the agent may reach, one line each (for `memento doctor`)."""
    if config.sandbox_network == "all":
        return ['network = "all": the host\'s whole network']
    if config.sandbox_network == "none":
        return ['network = "none": loopback only']
    found = reach(config, env=env, home=home)
    lines = [f"{e} ({e.why})" for e in found.endpoints]
    lines += [f"{p} ([sandbox] allow)" for p in found.allow]
    lines += list(found.notes)
    if found.unknown:
        lines.append(f"the {found.preset} preset's model endpoint cannot be known: {found.unknown}")
    return lines or ["nothing but loopback"]
