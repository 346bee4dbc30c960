"""`memento answer ID TEXT… | - | --choice N [DIR]`: a person answers a worker's question (SPEC §18).

The task must be waiting ``[?]``. The words after the id are the answer (no quotes needed);
``-`` reads it from standard input; ``--choice N`` answers with the question's N-th choice.
The last word is the workspace only when it is a directory holding docs/MASTER_PLAN.md (as
for `memento note`). Anything wrong (not ``[?]``, N out of range, an empty answer) is exit 2
and changes nothing.
"""

from __future__ import annotations

import argparse
import sys

from ...errors import MementoError
from ..context import person_workspace
from ..output import EXIT_OK, ok, safe_text, warn
from .note import split_words


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("answer", parents=[common], help="answer a worker's question (a task waiting [?])",
                       description="Answer the question a worker asked on a task waiting [?]. The answer goes to "
                                   "HUMAN_NOTES.md as an [ANSWER] note and the task is picked again.")
    p.add_argument("task_id", metavar="ID", help="the task waiting [?]")
    p.add_argument("words", nargs="*", metavar="TEXT",
                   help="the answer (the rest of the line; - reads it from stdin; a last word naming a "
                        "workspace is the DIR)")
    p.add_argument("--choice", type=int, metavar="N", help="answer with the question's choice N (1 is the first)")
    p.set_defaults(func=cmd_answer, dir=None)  # `answer T-1 --choice 2 DIR`: the DIR comes as an extra


def cmd_answer(args: argparse.Namespace) -> int:
    from ...control import answer_task, still_not_running, wait_for_senders
    from ...state import TickState

    if args.dir is None:
        text, args.dir = split_words(args.words)
    else:
        text = " ".join(args.words)
    ws = person_workspace(args, "answer")
    if text == "-":
        text = sys.stdin.read()
    if args.choice is None and not text.strip():
        raise MementoError("no answer given: `memento answer ID TEXT`, `- ` for standard input, or --choice N; "
                           "nothing changed")
    answer, plan = answer_task(ws, args.task_id, text or None, choice=args.choice, source="cli")
    ok(f"{args.task_id} answered ({safe_text(' '.join(answer.split())[:120])}); it goes back to [ ] and the next "
       "attempt gets the question and your answer")
    still = still_not_running(plan, TickState.load(ws))
    if still:
        warn(still)
    wait_for_senders()
    return EXIT_OK
