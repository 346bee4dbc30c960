"""What the tick's own tests share (imported by full name, `from tests.core.tick.ticks import …`)."""

from __future__ import annotations

from memento_core.config.load import load_config
from memento_core.tick.context import TickContext


def tick_context(ws, number: int | None = 1) -> TickContext:
    """``ws``'s TickContext with its memento.toml read, as step 2 (run.load_config_and_plan) leaves it."""
    ctx = TickContext(ws, number=number)
    ctx.config = load_config(ws.config_path)
    return ctx
