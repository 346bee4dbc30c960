"""The tick of SPEC §4, one module per concern.

``__main__``: the lock and the paused fast path (``python -m memento_core.tick``,
and ``run_tick`` for the CLI and the dashboard). ``run``: the tick itself, one
function per step. This file stays empty so that a paused tick imports nothing
it does not need.
"""
