"""The sandbox check (SPEC §13): does the agent run confined here?"""

from __future__ import annotations

from ... import sandbox
from ..context import Context
from ..findings import CRITICAL, WARNING, CheckResult, Finding


def check_sandbox(c: Context) -> CheckResult:
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    found = sandbox.resolve(config)
    if found.confined:
        return f"the agent and verify run in the bubblewrap sandbox ({found.binary})"
    rel = c.rel(c.ws.config_path)
    if found.mode == "bwrap":
        return [Finding(CRITICAL, "sandbox", f"sandbox: {found.reason}: every task would fail", rel)]
    return [Finding(WARNING, "sandbox", f"sandbox: the agent runs unconfined ({found.reason})")]
