"""The architect (SPEC §16): an agent that turns blocked tasks and notes into plan changes.

* ``changes.py``: pure. What changed between two plans and two notes files, and
  which of those changes break the architect's rules (``compare_plans``,
  ``compare_notes``).
* ``prompt.py``: the architect's prompt (blocked tasks with every failed
  attempt, unread notes, PROJECT_MAP.md, the plan).
* ``run.py``: one run under the tick lock: snapshot, the agent confined like
  the worker (only the plan, the map and the notes writable), the checks, then
  the commit and the ``🏗 ARCHITECT`` entry, or a rollback of everything.
* ``auto.py``: ``[architect] auto``: a tick that finds the pipeline BLOCKED runs
  it once per blocked state, at most ``max_runs_per_day`` times a UTC day.
"""

from __future__ import annotations

ARCHITECT_ID = "ARCHITECT"
EVENT = "🏗 ARCHITECT"
