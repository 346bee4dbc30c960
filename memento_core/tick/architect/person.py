"""A person's plan changes made while the architect runs (SPEC §16): kept, never the architect's.

`memento skip`, `memento reset`, `memento answer` and a mode change (control.py) append what they did to
``.memento/records/ARCHITECT.person`` while a run's record exists. When the agent has
finished, :func:`with_person_edits` replays them on the snapshot's plan: the checks then
compare that plan (the person's changes in it) with the architect's, a rollback restores
it, and :func:`replay` applies them once more on the plan that is kept (so an agent that
wrote a stale copy over the person's change does not lose it).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ...errors import MementoError
from ...locks import atomic_write_bytes
from ...plan import edits as plan_edits
from ...workspace import Workspace
from . import ARCHITECT_ID


def person_path(ws: Workspace) -> Path:
    return ws.memento_dir / "records" / f"{ARCHITECT_ID}.person"


def person_ops(ws: Workspace) -> list[dict]:
    """The person's changes recorded during the run; while the run listens (tick/receipts.py),
    only those a receipt covers: the agent can append to the file, not make a receipt."""
    from ..receipts import held, is_listening

    try:
        lines = person_path(ws).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    ops = []
    for line in lines:
        try:
            op = json.loads(line)
        except ValueError:
            continue
        if isinstance(op, dict):
            ops.append(op)
    if not is_listening(ws):  # the stale recovery of a killed run: the file is all there is
        return ops
    persons = held(ws)
    return [op for op in ops if _covered(op, persons)]


def _covered(op: dict, persons) -> bool:
    kind = op.get("op")
    if kind == "mode":
        return str(op.get("mode", "")) in persons.modes
    if kind == "reset":
        return str(op.get("task", "")) in persons.resets
    if kind == "answer":  # a person answered a question: [?] back to [ ] (SPEC §18)
        return str(op.get("task", "")) in persons.answers
    if kind == "skip":
        return persons.status(str(op.get("task", "")), "-", str(op.get("reason", "")))
    return False


def persons_notes(ws: Workspace) -> frozenset[str]:
    """The keys of the notes people added during the run: the receipts while it listens, else
    (a killed run's recovery) `.memento/notes_added`."""
    from ... import notes
    from ..receipts import held, is_listening

    return held(ws).notes if is_listening(ws) else notes.added_keys(ws.notes_added_path)


def replay(path: Path, ops: list[dict]) -> list[str]:
    """Apply ``ops`` to the plan at ``path``; what was applied ("skip T-5", …)."""
    done = []
    for op in ops:
        try:
            if op.get("op") == "skip":
                plan_edits.skip_task(path, str(op["task"]), str(op.get("reason", "")))
            elif op.get("op") == "reset":
                plan_edits.reset_task(path, str(op["task"]))
            elif op.get("op") == "mode":
                plan_edits.set_meta(path, "tick_mode", str(op["mode"]))
            elif op.get("op") == "answer":
                plan_edits.set_status(path, str(op["task"]), " ", expect="?")
            else:
                continue
        except (MementoError, KeyError, OSError):
            continue
        done.append(f"{op['op']} {op.get('task') or op.get('mode')}")
    return done


def with_person_edits(ws: Workspace, snap, plan_rel: str):
    """``snap`` (run.ArchitectSnapshot) with the person's changes replayed on its plan."""
    ops = person_ops(ws)
    if not ops or snap.snap.plan is None:
        return snap
    scratch = ws.memento_dir / "records" / f"{ARCHITECT_ID}.replay.md"
    try:
        atomic_write_bytes(scratch, snap.snap.plan)
        if not replay(scratch, ops):
            return snap
        data = scratch.read_bytes()
    finally:
        scratch.unlink(missing_ok=True)
    return replace(snap, snap=replace(snap.snap, plan=data), docs={**snap.docs, plan_rel: data})
