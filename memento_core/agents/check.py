"""Which agent presets can run here (SPEC §7, §10), what `memento agents` shows.

For every preset: the binary it needs, whether that binary is on PATH, and
what its ``--version`` says (asked with a short timeout, in its own process
group, so a CLI that hangs or spawns helpers leaves nothing behind).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .invocation import AgentSpec

VERSION_TIMEOUT = 5.0


@dataclass(frozen=True)
class AgentProbe:
    """What `memento agents` found out about one preset."""

    preset: str
    binary: str | None
    path: str | None
    version: str | None
    description: str
    selected: bool = False
    note: str = ""

    @property
    def runnable(self) -> bool:
        """The preset needs no binary, or its binary is on PATH."""
        return self.binary is None or self.path is not None


def binary_version(path: str, *, timeout: float = VERSION_TIMEOUT,
                   env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(first line of ``path --version``, problem) — problem is '' when it answered."""
    # The agents module is imported here, not at the top: `memento` builds the parser of
    # `memento agents` (it reads VERSION_TIMEOUT) for every command, `status --json` included.
    from .process import run_in_group

    with tempfile.TemporaryDirectory(prefix="memento-version-") as tmp:
        log = Path(tmp) / "version.log"
        result = run_in_group([path, "--version"], cwd=tmp, log_path=log, timeout=timeout,
                              env=env, grace=0.5)
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("[memento]")]
    first = lines[0][:120] if lines else None
    if result.error:
        return None, result.error
    if result.timed_out:
        return first, f"`--version` did not answer within {timeout:g}s"
    if result.exit_code != 0:
        return first, f"`--version` exited with code {result.exit_code}"
    return first, ""


def probe(spec: AgentSpec, *, selected: bool = False, env: Mapping[str, str] | None = None,
          timeout: float = VERSION_TIMEOUT) -> AgentProbe:
    """Look for ``spec``'s binary on PATH and ask it for its version."""
    if spec.binary is None:
        return AgentProbe(spec.name, None, None, None, spec.description, selected,
                          "built in; needs no binary")
    env = dict(os.environ if env is None else env)
    path = shutil.which(spec.binary, path=env.get("PATH") or os.defpath)
    if path is None:
        return AgentProbe(spec.name, spec.binary, None, None, spec.description, selected,
                          f"'{spec.binary}' not found on PATH")
    version, problem = binary_version(path, timeout=timeout, env=env)
    return AgentProbe(spec.name, spec.binary, path, version, spec.description, selected, problem)


def probe_all(selected: str | None = None, *, env: Mapping[str, str] | None = None,
              timeout: float = VERSION_TIMEOUT) -> list[AgentProbe]:
    """Every preset, in PRESETS order, with the one named ``selected`` marked."""
    from .presets import PRESETS

    return [probe(spec, selected=(name == selected), env=env, timeout=timeout)
            for name, spec in PRESETS.items()]
