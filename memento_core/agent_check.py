"""`memento agents`: which agent presets can run here (SPEC §7, §10).

For every preset: the binary it needs, whether that binary is on PATH, and
what its ``--version`` says (asked with a short timeout, in its own process
group, so a CLI that hangs or spawns helpers leaves nothing behind). The
preset memento.toml selects is marked.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from .agents import PRESETS, AgentSpec, run_in_group
from .errors import MementoError

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
    return [probe(spec, selected=(name == selected), env=env, timeout=timeout)
            for name, spec in PRESETS.items()]


def _selected_preset(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(preset memento.toml selects, the workspace root) — (None, None) outside a workspace."""
    from .config import load_config
    from .workspace import Workspace

    start = getattr(args, "project", None) or getattr(args, "dir", None)
    try:
        ws = Workspace.find(start or os.getcwd())
    except MementoError:
        if start:
            raise
        return None, None
    return load_config(ws.config_path).agent_preset, str(ws.root)


def cmd_agents(args: argparse.Namespace) -> int:
    selected, root = _selected_preset(args)
    probes = probe_all(selected, timeout=args.timeout)
    if args.json:
        doc = {"root": root, "selected": selected,
               "presets": [{**asdict(p), "runnable": p.runnable} for p in probes]}
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        width = max(len(p.preset) for p in probes)
        for p in probes:
            mark = "  <- memento.toml" if p.selected else ""
            if p.binary is None:
                line = f"[ok] {p.preset:<{width}}  (built in) {p.description}"
            elif p.path is None:
                line = f"[warn] {p.preset:<{width}}  {p.note}"
            else:
                version = p.version or "version unknown"
                extra = f" ({p.note})" if p.note else ""
                line = f"[ok] {p.preset:<{width}}  {p.path}  {version}{extra}"
            print(line + mark)
        if root is None:
            print("No workspace here: run inside a project (or pass --project DIR) to see "
                  "which preset memento.toml selects.")
    chosen = next((p for p in probes if p.selected), None)
    return 1 if chosen is not None and not chosen.runnable else 0


def register(sub, common, with_dir) -> None:
    """Add `memento agents` to the command line."""
    p = with_dir(sub.add_parser(
        "agents", parents=[common],
        help="list agent presets, whether each CLI is installed, and its version"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--timeout", type=float, default=VERSION_TIMEOUT, metavar="SECONDS",
                   help=f"how long each `--version` may take (default {VERSION_TIMEOUT:g})")
    p.set_defaults(func=cmd_agents)
