"""What the commands share: the workspace a command line names, its plan, the DIR argument."""

from __future__ import annotations

import argparse
import os

from ..errors import MementoError
from ..workspace import Workspace


def with_dir(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give ``parser`` the optional positional DIR most commands take."""
    parser.add_argument("dir", nargs="?", metavar="DIR", help="the workspace (default: the current one)")
    return parser


def workspace_of(args: argparse.Namespace) -> Workspace:
    """``--project DIR`` or the positional DIR or the current directory, searched upwards."""
    start = getattr(args, "project", None) or getattr(args, "dir", None) or os.getcwd()
    return Workspace.find(start)  # a missing one: "DIR: no such directory", as every entry point says


def load_plan(ws: Workspace):
    """The workspace's plan, parsed (errors are in ``plan.errors``)."""
    from ..plan.scan import parse_plan

    return parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))


def person_workspace(args: argparse.Namespace, command: str) -> Workspace:
    """:func:`workspace_of` for a command that acts as the person (skip, reset, pause, note…):
    refused up front, exit 2, when it runs inside the running tick's own process tree, where
    only the agent can be (SPEC §13); with no tick running it costs one failed connect."""
    from ..receipts import PersonRefused, check_person

    ws = workspace_of(args)
    try:
        check_person(ws.root)
    except PersonRefused as exc:
        raise MementoError(f"`memento {command}` {exc}") from None
    return ws
