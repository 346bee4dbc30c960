"""A review that requests changes (SPEC §19 "Checks and review"): notes to the tasks it is about,
and those tasks back to pending.

Each review of a phase's pull request in state CHANGES_REQUESTED that Memento has not applied
yet (``PullRecord.reviews_seen``) becomes notes, one for its body and one for each inline
comment of it. A note goes to the tasks of the phase the text names by id; else, for an inline
comment, to the tasks whose ``context_files`` hold the commented path; else to every task of
the phase. Those tasks go back to ``[ ]`` with their retries as they were (the plan editor,
under the plan's lock): the worker's next attempt reads the note, and its commit updates the
same pull request. The review's id is recorded after its notes are written, so a review is
never applied twice (a note already there with the same text is not written again, should the
tick stop between the two).

What a reviewer wrote reaches the notes defused (escape sequences, control, bidi and format
characters gone; brackets and angle brackets their look-alikes, as the importer does for issue
titles) and fenced with a fence longer than any backtick run inside: a comment holding a fake
``### [ANSWER]`` heading or a ``- [x] T-1`` line is text in a note, never structure the notes
file or the plan would read.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import replace

from .. import notes as notes_file
from ..lines import clipped, message_text
from ..plan.edits import edit_plan
from ..plan.model import TASK_ID, Plan
from ..workspace import Workspace
from .issue_block import one_line
from .pulls import PullRecord

MAX_TEXT = 4000
BACK = (" ", "x", "!")  # the states a change request sends back to pending; [~] [?] [-] are left alone
_DEFUSE = str.maketrans({"[": "(", "]": ")", "<": "‹", ">": "›"})
_ID_RE = re.compile(rf"(?<![A-Za-z0-9_-])({TASK_ID})(?![A-Za-z0-9_])")


def review_state(reviews: list[dict]) -> str:
    """The pull request's review state from its reviews: each reviewer's last word counts (a
    comment after an approval leaves the approval); changes requested by anyone wins."""
    last: dict[str, str] = {}
    commented = False
    for review in reviews:
        state = review.get("state")
        who = str((review.get("user") or {}).get("login") or review.get("id"))
        if state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            last[who] = state
        elif state == "COMMENTED":
            commented = True
    if "CHANGES_REQUESTED" in last.values():
        return "changes_requested"
    if "APPROVED" in last.values():
        return "approved"
    return "commented" if commented else "none"


def defused(text: str) -> str:
    """A person's words as note text: nothing a terminal, the notes file or the plan would act on."""
    return clipped(message_text(str(text or "")).translate(_DEFUSE), MAX_TEXT)


def fence(text: str) -> str:
    """``text`` in a fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    mark = "`" * max(3, longest + 1)
    return f"{mark}text\n{text}\n{mark}"


def apply_new(ws: Workspace, plan: Plan, record: PullRecord, reviews: list[dict], comments_of) -> PullRecord:
    """Apply each change request not applied yet; the record with their ids in ``reviews_seen``.
    ``comments_of(review_id)`` lists a review's inline comments (GitHub)."""
    seen = list(record.reviews_seen)
    for review in reviews:
        rid = review.get("id")
        if review.get("state") != "CHANGES_REQUESTED" or not isinstance(rid, int) or rid in seen:
            continue
        apply_one(ws, plan, record, review, comments_of(rid))
        seen.append(rid)
    return replace(record, reviews_seen=tuple(seen))


def apply_one(ws: Workspace, plan: Plan, record: PullRecord, review: dict, comments: list[dict]) -> list[str]:
    """One change request's notes and tasks; the ids of the tasks sent back."""
    phase = plan.phase(record.phase)
    tasks = [plan.task(t) for t in (phase.task_ids if phase else ())]
    tasks = [t for t in tasks if t is not None]
    if not tasks:
        return []
    who = one_line(str((review.get("user") or {}).get("login") or "a reviewer"), 100).translate(_DEFUSE)
    head = f"Changes requested on pull request #{record.number} by {who} (review {review.get('id')})"
    pieces: list[tuple[str, str, str]] = []  # (where, text, path)
    body = str(review.get("body") or "").strip()
    if body:
        pieces.append(("", body, ""))
    for c in comments:
        if not isinstance(c, dict) or not str(c.get("body") or "").strip():
            continue
        path = str(c.get("path") or "")
        line = c.get("line") or c.get("original_line")
        where = f" on {one_line(path, 300).translate(_DEFUSE)}" + (f" line {int(line)}" if isinstance(line, int) else "")
        pieces.append((where + f" (comment {c.get('id')})", str(c["body"]), path))
    if not pieces:
        pieces.append(("", "(the review has no text)", ""))
    notes_for: dict[str, list[str]] = {}
    for where, text, path in pieces:
        targets = _targets(tasks, text, path)
        note = (f"{head}{where}. The reviewer wrote:\n\n{fence(defused(text))}\n\n"
                "Memento set this task back to pending for it; its next commit updates the same pull request.")
        for task_id in targets:
            notes_for.setdefault(task_id, []).append(note)
    existing = {(n.target, n.text) for n in notes_file.parse_notes(ws.notes_path)}
    for task_id, texts in notes_for.items():
        for text in texts:
            if (task_id, notes_file.clean_note_text(text)) not in existing:
                notes_file.add_note(ws.notes_path, text, target=task_id)
    back = [t for t in notes_for if (plan.task(t) and plan.task(t).status in BACK)]

    def reset(e) -> None:
        for task_id in back:
            current = e.plan.task(task_id)
            if current is not None and current.status in BACK:
                e.set_status(task_id, " ")
        e.update_counters()

    if back:
        edit_plan(ws.plan_path, reset)
    return back


def _targets(tasks: list, text: str, path: str) -> list[str]:
    """The tasks a piece of review text is for (see the module docstring)."""
    ids = {t.id for t in tasks}
    named = [m for m in dict.fromkeys(_ID_RE.findall(text)) if m in ids]
    if named:
        return named
    if path:
        holding = [t.id for t in tasks if any(_holds(cf, path) for cf in t.context_files)]
        if holding:
            return holding
    return [t.id for t in tasks]


def _holds(pattern: str, path: str) -> bool:
    pattern, path = pattern.strip().removeprefix("./"), path.strip().removeprefix("./")
    if not pattern:
        return False
    if pattern == path or path.startswith(pattern.rstrip("/") + "/"):
        return True
    return fnmatch.fnmatchcase(path, pattern)
