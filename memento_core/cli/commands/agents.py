"""`memento agents [DIR] [--json] [--timeout SECONDS]`: which agent presets can run here.

For every preset: the binary it needs, whether it is on PATH and what its
``--version`` says; the preset memento.toml selects is marked. Exit 1 when that
preset cannot run.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict

from ...errors import MementoError
from ..context import with_dir
from ..output import safe_json, safe_text


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser(
        "agents", parents=[common],
        help="list agent presets, whether each CLI is installed, and its version"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    # The default, agents.check.VERSION_TIMEOUT, is applied by cmd_agents: reading it here would
    # import the agents package for every command, `status --json` included (SPEC §11);
    # tests/core/test_import_hygiene.py holds that this help still says its value.
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="how long each `--version` may take (default 5)")
    p.set_defaults(func=cmd_agents)


def selected_preset(args: argparse.Namespace) -> tuple[str | None, str | None, str]:
    """(preset memento.toml selects, the workspace root, its model) — (None, None, '') outside one."""
    from ...config.load import load_config
    from ...workspace import Workspace

    start = getattr(args, "project", None) or getattr(args, "dir", None)
    try:
        ws = Workspace.find(start or os.getcwd())
    except MementoError:
        if start:
            raise
        return None, None, ""
    try:
        config = load_config(ws.config_path)
    except MementoError as exc:
        # A memento.toml the tick would refuse (aider without a model): say why, still list.
        print(safe_text(f"[error] {exc}"), file=sys.stderr)
        return _raw_preset(ws.config_path), str(ws.root), ""
    return config.agent_preset, str(ws.root), config.agent_model


def _raw_preset(path) -> str | None:
    import tomllib

    try:
        preset = tomllib.loads(path.read_text(encoding="utf-8")).get("agent", {}).get("preset")
    except (OSError, ValueError, AttributeError):
        return None
    return preset if isinstance(preset, str) else None


def cmd_agents(args: argparse.Namespace) -> int:
    from ...agents.check import VERSION_TIMEOUT, probe_all

    selected, root, model = selected_preset(args)
    timeout = VERSION_TIMEOUT if args.timeout is None else args.timeout
    probes = probe_all(selected, timeout=timeout, model=model)
    if args.json:
        doc = {"root": root, "selected": selected,
               "presets": [{**asdict(p), "runnable": p.runnable} for p in probes]}
        print(safe_json(doc, indent=2))
    else:
        _print_probes(probes)
        if root is None:
            print("No workspace here: run inside a project (or pass --project DIR) to see "
                  "which preset memento.toml selects.")
    chosen = next((p for p in probes if p.selected), None)
    ready = chosen is None or (chosen.runnable and chosen.runtime_ok and not chosen.unattended)
    return 0 if ready else 1


def _print_probes(probes) -> None:
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
            if p.runtime:
                line += f"; {p.runtime}"
            if not p.runtime_ok:
                line = "[warn]" + line[len("[ok]"):]
        print(safe_text(line + mark))
        if p.unattended and (p.path is not None or p.selected):
            print(safe_text(f"[warn] {p.preset:<{width}}  {p.unattended}"))
