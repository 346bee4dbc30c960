"""`memento doctor`'s checks: is the workspace's recovery point present, fresh and usable? (SPEC §8)

Reads files only and repairs nothing. :func:`check_workspace` runs every check
and returns :class:`Finding` values; a check that finds nothing wrong reports
one ``OK`` finding, so a healthy workspace prints only ``[OK]`` lines. The
command (``memento_core/cli/commands/doctor.py``) prints ``[CRITICAL] …``,
``[WARNING] …``, ``[INFO] …``, ``[OK] …`` and exits 0 healthy, 1 warnings, 2 critical.

The checks are the eight of the continuity doctor (``checks/continuity.py``:
existence, staleness, template compliance, active-work usability, unsurfaced
results, archive consistency, recovery priority, alignment with the plan) and
Memento's own: the plan (``checks/plan.py``: plan errors, unknown Meta keys,
stale claims, unread notes), ``checks/project_map.py`` (PROJECT_MAP.md paths),
the pipeline (``checks/pipeline.py``: breaker, alert, dirty tree, tick lock),
``checks/config.py`` (memento.toml, agent binary) and ``checks/memory.py``.
``context.py`` reads the files, ``runner.py`` runs the checks in order.
"""

from __future__ import annotations

from .findings import CRITICAL, INFO, OK, WARNING, Finding, exit_code
from .runner import CHECKS, SCHEMA, check_workspace, document, overall_exit, run_workspaces

__all__ = ["CHECKS", "CRITICAL", "INFO", "OK", "SCHEMA", "WARNING", "Finding", "check_workspace", "document",
           "exit_code", "overall_exit", "run_workspaces"]
