"""The `memento` command line (SPEC §7): the parser, the dispatch and the one error boundary.

Each subcommand lives in ``commands/<name>.py`` with its ``register`` and its
function; this module only wires them together. Human output lines start with
``[ok]``, ``[warn]`` or ``[error]``; ``--json`` prints one JSON document. Errors
go to stderr as one clear sentence with exit code 2, never a traceback (set
MEMENTO_DEBUG=1 to see one).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..errors import MementoError
from .commands import (
    ack,
    agents,
    answer,
    architect,
    chat,
    cron,
    demo,
    doctor,
    init,
    lint,
    memory,
    mode,
    note,
    notify,
    plan,
    report,
    reset,
    skip,
    status,
    tasks,
    tick,
)
from .output import EXIT_ERROR, EXIT_OK, error, safe_text

# In the order `memento --help` lists them.
COMMANDS = (init, status, report, tasks, lint, mode, reset, skip, note, answer, tick, architect, plan, demo, agents, cron, notify, chat,
            memory, doctor, ack)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (each command module imports its heavy parts when run)."""
    from .. import __version__

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--project", metavar="DIR", help="the workspace (default: search upwards from here)")
    parser = argparse.ArgumentParser(
        prog="memento",
        description="Run a long software project with coding agents, one verified task per tick.",
    )
    parser.add_argument("--version", action="version", version=f"memento {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(sub, common)
    return parser


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; argparse stops filling positionals at the first option, so the DIR
    of `memento skip T-1 --reason x DIR` arrives as an extra: take it."""
    args, extra = parser.parse_known_args(argv)
    if len(extra) == 1 and not extra[0].startswith("-") and getattr(args, "dir", "") is None:
        args.dir = extra[0]
    elif extra:
        parser.error("unrecognized arguments: " + " ".join(extra))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `memento` command line; the exit code (0 ok, 1 needs attention, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(build_parser(), argv)
    try:
        return int(args.func(args) or 0)
    except MementoError as exc:
        error(safe_text(str(exc)))
        return EXIT_ERROR
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except BrokenPipeError:
        # `memento … | head`: the reader has seen enough; that is not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        if os.environ.get("MEMENTO_DEBUG"):
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        error(f"{where}{exc.strerror or exc}")
        return EXIT_ERROR
    except Exception as exc:  # a bug: still one line, with a way to see more
        if os.environ.get("MEMENTO_DEBUG"):
            raise
        error(f"internal error: {type(exc).__name__}: {safe_text(str(exc))} (MEMENTO_DEBUG=1 shows the traceback)")
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
