"""`memento agents [DIR] [--json] [--timeout SECONDS]`: which agent presets can run here.

For every preset: the binary it needs, whether it is on PATH and what its
``--version`` says; the preset memento.toml selects is marked. Exit 1 when that
preset cannot run.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict

from ...agents.check import VERSION_TIMEOUT
from ...errors import MementoError
from ..context import with_dir
from ..output import safe_json, safe_text


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser(
        "agents", parents=[common],
        help="list agent presets, whether each CLI is installed, and its version"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--timeout", type=float, default=VERSION_TIMEOUT, metavar="SECONDS",
                   help=f"how long each `--version` may take (default {VERSION_TIMEOUT:g})")
    p.set_defaults(func=cmd_agents)


def selected_preset(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(preset memento.toml selects, the workspace root) — (None, None) outside a workspace."""
    from ...config import load_config
    from ...workspace import Workspace

    start = getattr(args, "project", None) or getattr(args, "dir", None)
    try:
        ws = Workspace.find(start or os.getcwd())
    except MementoError:
        if start:
            raise
        return None, None
    return load_config(ws.config_path).agent_preset, str(ws.root)


def cmd_agents(args: argparse.Namespace) -> int:
    from ...agents.check import probe_all

    selected, root = selected_preset(args)
    probes = probe_all(selected, timeout=args.timeout)
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
    return 1 if chosen is not None and not chosen.runnable else 0


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
        print(safe_text(line) + mark)
