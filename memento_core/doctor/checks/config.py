"""Checks of memento.toml: it loads, its keys are known, and the agent it selects can run here."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from ...agents import PRESETS
from ...config.lint import key_problems, unknown_key_message, unknown_keys
from ..context import Context
from ..findings import CRITICAL, WARNING, CheckResult, Finding


def check_config(c: Context) -> CheckResult:
    config, exc = c.config_and_error
    rel = c.rel(c.ws.config_path)
    if exc is not None:
        return [Finding(CRITICAL, "config", exc.args[0] if exc.args else str(exc), rel, exc.line or None)]
    if not c.ws.config_path.exists():
        return f"{rel} does not exist; the defaults apply"
    text = c.ws.config_path.read_text(encoding="utf-8", errors="replace")
    unknown = [Finding(WARNING, "config", unknown_key_message(what), rel, line or None)
               for what, line in unknown_keys(config, text)]
    unknown += [Finding(WARNING, "config", what, rel, line or None) for what, line in key_problems(config, text)]
    return unknown or f"{rel} is valid (agent preset {config.agent_preset})"


def check_agent(c: Context) -> CheckResult:
    config, _ = c.config_and_error
    if config is None:
        return None
    name = config.agent_preset
    rel = c.rel(c.ws.config_path)
    spec = PRESETS.get(name)
    if spec is None:
        return [Finding(CRITICAL, "agent-binary",
                        f"the {name!r} agent preset is not available in this version: every task would fail", rel)]
    if name == "command":
        try:
            words = shlex.split(config.agent_command)
        except ValueError as exc:
            return [Finding(CRITICAL, "agent-binary", f"[agent] command cannot be split: {exc}", rel)]
        if not words:
            return [Finding(CRITICAL, "agent-binary", "preset command but [agent] command is empty", rel)]
        binary = words[0]
    else:
        binary = spec.binary
    if not binary:
        return f"agent preset {name}: no binary needed"
    if "{" in binary:
        return f"agent preset {name}: the binary comes from a placeholder ({binary})"
    if "/" in binary:
        candidate = Path(binary) if os.path.isabs(binary) else c.ws.root / binary
        ok = candidate.is_file() and os.access(candidate, os.X_OK)
    else:
        ok = shutil.which(binary) is not None
    if not ok:
        return [Finding(CRITICAL, "agent-binary",
                        f"agent binary '{binary}' not found on PATH (preset {name}): every task would fail", rel)]
    return f"agent preset {name}: '{binary}' found"
