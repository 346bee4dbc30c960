"""The plan's three-way merge when a fleet host's commits are rebased onto the remote's
(SPEC §12 "Across machines"): this side's edits re-applied where the remote left them alone.

Per task: its status and retries (what a tick changes), and its definition (title, fields,
what an architect or a person changes) are merged separately against the merge base. A
task added on this side goes in next to its neighbour; one removed here goes when the
remote left it as it was. When both sides changed the same thing the remote's word stands
and the loss is said (``notes``: the caller writes them in the status log), never dropped
silently.
"""

from __future__ import annotations

import re

from ..lines import LineDoc, decode, strip_eol
from ..plan.edits import PlanEditor
from ..plan.model import Plan, Task
from ..plan.scan import parse_plan_doc

PLAN = "docs/MASTER_PLAN.md"
_META_LINE = re.compile(r"^\s*[-*+]\s*(?P<key>[A-Za-z_][\w-]*)\s*:\s*(?P<value>.*?)\s*$")
_RETRIES_FIELD = re.compile(r"^\s*[-*+]\s*retries\s*:.*$", re.M | re.I)
_INLINE_RETRIES = re.compile(r"[ \t]*\[retries:[ \t]*[^\]]*\][ \t]*$")


def merge_plan(base: bytes, upstream: bytes, mine: bytes, notes: list[str]) -> bytes | None:
    """The remote's plan with this side's edits re-applied; None when an added task's place
    cannot be found. What this side loses is appended to ``notes``."""
    docs = [decode(x, PLAN) for x in (base, mine)]
    b, m = (parse_plan_doc(d, PLAN) for d in docs)
    editor = PlanEditor(decode(upstream, PLAN), PLAN)
    u = editor.plan
    metas = [_meta_values(plan, doc) for plan, doc in ((b, docs[0]), (u, editor.doc), (m, docs[1]))]  # before any edit
    for task in m.tasks:
        old, theirs = b.task(task.id), u.task(task.id)
        if old is not None and theirs is not None and _as_it_was(old, task):
            continue  # not changed here: the remote's stands as it is
        if old is None:
            if not _add(editor, docs[1], m, task, theirs, notes):
                return None
        elif theirs is None:
            if _definition(task) != _definition(old):
                notes.append(f"{task.id}: edited here but removed on the remote; the remote's removal stands")
        else:
            _merge_task(editor, docs[1], old, theirs, task, notes)
    for old in b.tasks:
        if m.task(old.id) is None:
            _remove(editor, old, notes)
    _merge_meta(editor, *metas, notes)
    editor.update_counters()
    return editor.doc.encode()


def _as_it_was(old: Task, task: Task) -> bool:
    """Whether this side left ``old`` as it was (the same line and block: status, retries and
    definition alike)."""
    return (task.status, task.retries, task.raw_rest, task.block, task.phase) == \
        (old.status, old.retries, old.raw_rest, old.block, old.phase)


def _merge_task(editor: PlanEditor, mine_doc: LineDoc, old: Task, theirs: Task, task: Task, notes: list[str]) -> None:
    ran_there = (theirs.status, theirs.retries) != (old.status, old.retries)
    mine_def, their_def = _definition(task), _definition(theirs)
    if mine_def != _definition(old) and mine_def != their_def:
        if their_def == _definition(old):
            _put_block(editor, mine_doc, task)
            if task.retries != theirs.retries:
                editor.set_field(task.id, "retries", str(theirs.retries))
        else:
            notes.append(f"{task.id}: its definition was changed here and on the remote; the remote's stands")
    if ran_there:
        return
    if old.status != task.status:
        editor.set_status(task.id, task.status)
    if old.retries != task.retries:
        editor.set_field(task.id, "retries", str(task.retries))


def _definition(task: Task) -> tuple:
    """What a task is, apart from what a tick changes (its status and retries)."""
    head = _INLINE_RETRIES.sub("", task.raw_rest).strip()
    block = "\n".join(line.rstrip() for line in _RETRIES_FIELD.sub("", task.block).splitlines() if line.strip())
    return task.phase, head, block


def _block(doc: LineDoc, task: Task) -> list[str]:
    lines = doc.lines[task.line - 1:task.end_line]
    return [strip_eol(line) for line in lines]


def _put_block(editor: PlanEditor, mine_doc: LineDoc, task: Task) -> None:
    """This side's definition of ``task`` in place of the remote's (the remote's status kept)."""
    editor.replace_task_block(task.id, mine_doc.encode())


def _add(editor: PlanEditor, mine_doc: LineDoc, m: Plan, task: Task, theirs: Task | None, notes: list[str]) -> bool:
    if theirs is not None:
        if _definition(theirs) != _definition(task):
            notes.append(f"{task.id}: added here and on the remote with different definitions; the remote's stands")
        return True
    at = _place(editor.plan, m, task)
    new = _block(mine_doc, task)
    phase = m.phase(task.phase) if task.phase else None
    if at is None and phase is not None and editor.plan.phase(phase.id) is None:
        at = len(editor.doc.lines)  # a phase added here: its heading and the task at the end
        new = [""] + [strip_eol(line) for line in mine_doc.lines[phase.line - 1:task.line - 1]] + new
    if at is None:
        return False
    nl = editor.doc.newline
    lines = editor.doc.lines
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += nl
    lines[at:at] = [line + nl for line in new]
    editor.replace_all(editor.doc.encode())
    return True


def _place(merged: Plan, m: Plan, task: Task) -> int | None:
    """The line after which ``task`` goes in ``merged``: after its predecessor on this side when
    that one is in the same phase there, else after the last task of its phase; None without one."""
    order = [t.id for t in m.tasks]
    for prev_id in reversed(order[:order.index(task.id)]):
        prev = merged.task(prev_id)
        if prev is not None:
            if prev.phase == task.phase:
                return prev.end_line
            break
    same = [t for t in merged.tasks if t.phase == task.phase]
    return same[-1].end_line if same else None


def _remove(editor: PlanEditor, old: Task, notes: list[str]) -> None:
    theirs = editor.plan.task(old.id)
    if theirs is None:
        return
    if (theirs.status, theirs.retries, _definition(theirs)) != (old.status, old.retries, _definition(old)):
        notes.append(f"{old.id}: removed here but changed on the remote; the remote's task stays")
        return
    del editor.doc.lines[theirs.line - 1:theirs.end_line]
    editor.replace_all(editor.doc.encode())


def _merge_meta(editor: PlanEditor, base_meta: dict[str, str], theirs: dict[str, str], mine: dict[str, str],
                notes: list[str]) -> None:
    """This side's Meta edits where the remote left the key as it was; when both changed one
    (to different values) the remote's stands and the loss is said. total_ticks takes the
    larger count; the task counters are recounted."""
    for key, value in mine.items():
        was, there = base_meta.get(key), theirs.get(key)
        if key == "total_ticks":
            best = max(int(v) if v.isdigit() else 0 for v in (value, there or "0"))
            editor.set_meta(key, str(best))
        elif key in ("total_tasks", "completed_tasks") or value == was or value == there:
            continue
        elif there == was:
            editor.set_meta(key, value)
        else:
            notes.append(f"Meta {key}: set to {value!r} here and to {there!r} on the remote; the remote's stands")


def _meta_values(plan: Plan, doc: LineDoc) -> dict[str, str]:
    """The Meta keys of ``plan`` (parsed from ``doc``) and their values as written."""
    lines = doc.lines
    values = {}
    for key, line in plan.meta.lines.items():
        match = _META_LINE.match(strip_eol(lines[line - 1])) if 0 < line <= len(lines) else None
        if match:
            values[key] = match.group("value")
    return values
