"""Steering the pipeline: the mode changes a person makes, from the CLI or the dashboard."""

from __future__ import annotations

from .plan import Plan, set_meta
from .state import TickState
from .workspace import Workspace

MODES = ("auto", "paused", "stopped")


def set_mode(ws: Workspace, mode: str) -> Plan:
    """Set ``tick_mode``. Resuming (``auto``) also resets a tripped circuit breaker.

    The breaker pauses the pipeline and remembers why; a person's resume is the
    acknowledgement, so the reason and the failure streak are cleared (else the
    alert would stay TRIGGERED and the breaker could never trip again).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    plan = set_meta(ws.plan_path, "tick_mode", mode)
    if mode == "auto":
        state = TickState.load(ws)
        if state.breaker_reason or state.consecutive_failed_ticks:
            state.breaker_reason = state.breaker_at = ""
            state.consecutive_failed_ticks = 0
            state.save(ws)
    return plan
