"""The two ways an agent runs (SPEC §13), for red-team tests that run in both.

``MODES`` parametrises a test over memento.toml's `[sandbox] mode`: "none"
(unconfined: what must hold without a sandbox) and "bwrap" (confined), which
skips with the probe's reason only where bubblewrap cannot run.
"""

from __future__ import annotations

import pytest

from memento_core import sandbox

BWRAP = sandbox.bwrap_binary()
WHY_NOT = sandbox.probe(BWRAP) if BWRAP else "bubblewrap (bwrap) is not installed"
needs_bwrap = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot run here: {WHY_NOT}")

MODES = [pytest.param("none", id="unconfined"), pytest.param("bwrap", id="bwrap", marks=needs_bwrap)]
