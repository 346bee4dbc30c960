"""The sandbox check (SPEC §13): does the agent run confined here, and if not, why and the fix?"""

from __future__ import annotations

from ... import sandbox
from ...errors import MementoError
from ..context import Context
from ..findings import CRITICAL, INFO, WARNING, CheckResult, Finding


def check_sandbox(c: Context) -> CheckResult:
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    found = sandbox.resolve(config)
    if found.confined:
        return _reach(c, config, f"the agent and verify run in the bubblewrap sandbox ({found.binary})")
    rel = c.rel(c.ws.config_path)
    # Why bubblewrap cannot run here and the exact fix (sandbox/reach.py), one INFO line each.
    fix = [Finding(INFO, "sandbox", f"sandbox: {line}") for line in found.fix]
    if found.mode == "bwrap":
        return [Finding(CRITICAL, "sandbox", f"sandbox: {found.reason}: every task would fail", rel), *fix]
    return [Finding(WARNING, "sandbox", f"sandbox: the agent runs unconfined ({found.reason})"), *fix]


def _reach(c: Context, config, said: str) -> CheckResult:
    """What the agent may reach (SPEC §13); a preset whose endpoint cannot be known is an error."""
    from ...sandbox import network

    lines = network.describe(config)
    try:
        text = c.ws.config_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    try:
        network.check(config, path=c.ws.config_path, text=text)
    except MementoError as exc:
        return [Finding(CRITICAL, "sandbox", f"sandbox: {exc.args[0]}", c.rel(c.ws.config_path), exc.line or None)]
    return f"{said}; the agent may reach: " + "; ".join(lines)
