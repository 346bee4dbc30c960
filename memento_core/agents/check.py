"""Which agent presets can run here (SPEC §7, §10, §14), what `memento agents` shows.

For every preset: the binary it needs, whether that binary is on PATH, and
what its ``--version`` prints on standard output (asked with a short timeout,
in its own process group, so a CLI that hangs or spawns helpers leaves
nothing behind; warnings on stderr are not the version). For the Node CLIs
(claude, codex, gemini, openclaw): the node their ``#!`` line runs, its
version, and the package's ``engines.node`` when it can be read. And whether
the preset can run unattended with this memento.toml (aider needs a model).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .invocation import AgentSpec

VERSION_TIMEOUT = 5.0
NODE_CLIS = ("claude", "codex", "gemini", "openclaw")


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
    runtime: str = ""  # e.g. "node v20.11.1 (the package needs >=22)"
    runtime_ok: bool = True
    unattended: str = ""  # '' or why it cannot run unattended, with what to do

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
        log, errors = Path(tmp) / "version.log", Path(tmp) / "stderr.log"
        # stderr apart: a CLI's warnings ("WARNING: proceeding, even though …") are not its version
        command = f"exec {shlex.quote(path)} --version 2>{shlex.quote(str(errors))}"
        result = run_in_group(command, cwd=tmp, log_path=log, timeout=timeout, env=env, grace=0.5,
                              shell=True)
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        err = errors.read_text(encoding="utf-8", errors="replace") if errors.exists() else ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("[memento]")]
    lines = lines or [ln.strip() for ln in err.splitlines() if ln.strip()]
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
    runtime, runtime_ok = node_requirement(path, env, timeout) if spec.name in NODE_CLIS else ("", True)
    return AgentProbe(spec.name, spec.binary, path, version, spec.description, selected, problem,
                      runtime, runtime_ok)


def probe_all(selected: str | None = None, *, env: Mapping[str, str] | None = None,
              timeout: float = VERSION_TIMEOUT, model: str = "") -> list[AgentProbe]:
    """Every preset, in PRESETS order, with the one named ``selected`` marked.

    ``model`` is memento.toml's ``[agent] model``: a preset that cannot run
    unattended without one says so.
    """
    from dataclasses import replace

    from .presets import PRESETS

    found = [probe(spec, selected=(name == selected), env=env, timeout=timeout)
             for name, spec in PRESETS.items()]
    return [replace(p, unattended=unattended_problem(p.preset, model)) for p in found]


def unattended_problem(preset: str, model: str) -> str:
    """Why ``preset`` cannot run unattended with this model setting, and what to do; '' if it can."""
    if preset == "aider" and not model.strip():
        return ('needs a model to run unattended: set [agent] model in memento.toml (e.g. '
                '"sonnet" or "openai/gpt-4o"); without one aider starts a browser login and waits')
    return ""


# ---------------------------------------------------------------- Node CLIs


def node_requirement(path: str, env: Mapping[str, str] | None, timeout: float) -> tuple[str, bool]:
    """("node v22.3.0 (the package needs >=22)", satisfied) for a Node CLI; ("", True) if unknown."""
    node = _shebang_node(path, env)
    if node is None:
        return "", True
    version, _ = binary_version(node, timeout=timeout, env=env)
    wanted = _engines_node(path)
    if version is None:
        return f"node not found ({node}); the package needs {wanted or 'Node'}", False
    text = f"node {version}" + (f" (the package needs {wanted})" if wanted else "")
    ok = _satisfies(version, wanted) if wanted else True
    return text + ("" if ok else " — install a newer Node"), ok


def _shebang_node(path: str, env: Mapping[str, str] | None) -> str | None:
    """The node a script's ``#!`` line runs (``env node`` looked up on PATH); None if not Node."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(300).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!") or "node" not in first:
        return None
    words = first[2:].split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        name = words[0] if words else "node"
        return shutil.which(name, path=(env or os.environ).get("PATH") or os.defpath) or name
    return words[0] if words else None


def _engines_node(path: str) -> str:
    """``engines.node`` of the package.json above the CLI's real file ('' when none is found)."""
    here = Path(os.path.realpath(path)).parent
    for folder in (here, *here.parents)[:6]:
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                engines = json.loads(manifest.read_text(encoding="utf-8")).get("engines") or {}
            except (OSError, ValueError, AttributeError):
                return ""
            return str(engines.get("node") or "") if isinstance(engines, dict) else ""
    return ""


def _satisfies(version: str, wanted: str) -> bool:
    """``v20.11.1`` against ``>=22`` or ``>=22.0.0`` (other ranges are taken as satisfied)."""
    have = re.search(r"(\d+)\.(\d+)\.(\d+)", version)
    need = re.fullmatch(r"\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*", wanted)
    if not have or not need:
        return True
    return tuple(int(x) for x in have.groups()) >= tuple(int(x or 0) for x in need.groups())
