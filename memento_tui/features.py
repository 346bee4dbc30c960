"""Core functions that other issues are still building (doctor, cron, memory, acknowledge).

The dashboard looks them up when it needs them; a missing module or function
makes the pane say "not available yet" instead of crashing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

NOT_AVAILABLE = "not available yet"


def optional(module: str, name: str) -> Callable[..., Any] | None:
    """``memento_core.<module>.<name>`` if it exists, else None."""
    try:
        mod = importlib.import_module(f"memento_core.{module}")
    except ImportError:
        return None
    found = getattr(mod, name, None)
    return found if callable(found) else None
