"""Running the agent (SPEC §4 step 10, §10).

* ``process.py``: process groups. ``run_in_group`` runs a command in a group
  of its own, output to a log file, with a timeout; nothing of the group is
  left when it returns. The tick uses it for the agent and for ``verify``.
* ``presets/<name>.py``: one module per preset, turning memento.toml plus a
  task into an ``Invocation`` (``invocation.py`` holds the shared values);
  ``presets/__init__.py`` registers them in ``PRESETS`` and has
  ``build_invocation``.
* ``logpipe.py``: the pipe a command's output goes through into the log, and
  ``capture`` (what it printed, for the usage and rate-limit parsers), ``LineTap``
  (its usage lines as they come, for the budget watch).
* ``stream.py``: a CLI's JSON event stream made readable on its way to the log.
* ``run.py``: ``run_agent`` (an Invocation through run_in_group, with its
  lines in the tick log) and ``agent_env`` (the agent's environment).

Callers use ``from memento_core import agents`` then ``agents.<name>``.
Importing the package loads the standard library and the small config,
errors and workspace modules (with what they import) only: nothing of the
tick, git or the plan (the aider preset reads the plan lazily).
"""

from __future__ import annotations

from .invocation import AgentRequest, AgentSpec, Invocation
from .logpipe import LineTap, capture, listening
from .presets import PRESETS, build_invocation
from .process import DEFAULT_GRACE, ProcResult, kill_group, run_in_group, terminate_running
from .run import agent_env, run_agent

__all__ = [
    "DEFAULT_GRACE",
    "PRESETS",
    "AgentRequest",
    "AgentSpec",
    "Invocation",
    "LineTap",
    "ProcResult",
    "agent_env",
    "build_invocation",
    "capture",
    "kill_group",
    "listening",
    "run_agent",
    "run_in_group",
    "terminate_running",
]
