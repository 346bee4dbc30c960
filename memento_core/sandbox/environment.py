"""The agent's environment is an allowlist (SPEC §13), confined or not.

Passed from the environment Memento runs in: ``BASE`` (the system's and the
locale's, the git identity), the proxy and certificate variables, the preset's
own variables (``PRESET_PREFIXES``: its API key and base URL; for codex also
each ``env_key`` its ``config.toml`` names), and ``[sandbox] env``. Nothing
else: ``SSH_AUTH_SOCK``, ``TMUX``, D-Bus and display variables, cloud and forge
tokens and the person's own ``MEMENTO_*`` never reach the agent (``NEVER``: a
``[sandbox] env`` entry naming one is a config error). Verify gets the same
without the preset's variables. Memento adds its own per-run facts afterwards
(agents/run.py: ``MEMENTO_TASK_ID``, ``MEMENTO_PROMPT_FILE``, …).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping

from ..config.sandbox import ENV_NAME as NAME
from ..config.sandbox import env_never as never

BASE = frozenset({
    "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "USER", "LOGNAME", "TZ", "TMPDIR", "NO_COLOR",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
})
BASE_PREFIXES = ("LC_",)
PROXY = frozenset(
    {f"{n}_proxy" for n in ("http", "https", "no", "all", "ftp")}
    | {f"{n}_PROXY" for n in ("HTTP", "HTTPS", "NO", "ALL", "FTP")}
    | {"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"}
)
_MODELS = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "OPENROUTER_", "DEEPSEEK_", "GROQ_", "MISTRAL_", "XAI_",
           "OLLAMA_", "COHERE_", "FIREWORKS_", "TOGETHERAI_")
PRESET_PREFIXES: dict[str, tuple[str, ...]] = {
    "claude": ("ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_"),
    "codex": ("OPENAI_", "CODEX_"),
    "gemini": ("GEMINI_", "GOOGLE_"),
    "aider": ("AIDER_", "LITELLM_", *_MODELS),
    "openclaw": ("OPENCLAW_", *_MODELS),
}
def codex_env_keys(environ: Mapping[str, str]) -> set[str]:
    """The ``env_key`` of each model provider in codex's config.toml (where its API key is read)."""
    home = environ.get("CODEX_HOME") or os.path.join(environ.get("HOME", ""), ".codex")
    try:
        with open(os.path.join(home, "config.toml"), "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return set()
    providers = data.get("model_providers")
    if not isinstance(providers, dict):
        return set()
    keys = {p.get("env_key") for p in providers.values() if isinstance(p, dict)}
    return {k for k in keys if isinstance(k, str) and NAME.fullmatch(k) and not never(k)}


def allowed_env(environ: Mapping[str, str], *, preset: str | None, extra_names=()) -> dict[str, str]:
    """``environ`` cut to the allowlist: the base, proxies, ``preset``'s own variables (None: no
    preset's, as verify gets it) and ``extra_names`` (``[sandbox] env``)."""
    names = set(BASE) | set(PROXY) | {n for n in extra_names if not never(n)}
    prefixes = (*BASE_PREFIXES, *PRESET_PREFIXES.get(preset or "", ()))
    if preset == "codex":
        names |= codex_env_keys(environ)
    return {k: v for k, v in environ.items()
            if (k in names or k.startswith(prefixes)) and (k in names or not never(k))}
