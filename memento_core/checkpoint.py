"""docs/CURRENT_STATE.md: the continuity checkpoint, overwritten after every tick (SPEC §8).

Short (≤ 40 lines), every section present ("None" rather than omission),
written from the plan, the status log and the tick state so that a stateless
worker, or a person back after a weekend, knows in fifteen seconds what is
going on, where it stopped and what comes next.

Key Decisions come from recent notes and workers' Outputs; those Memento wrote
start with their source (``Note for T-202 (…):``, ``T-102 Outputs (…):``) and
are recomputed each time. Any other item is a person's and is carried over,
never erased. Unsurfaced Results list passed tasks nobody acknowledged yet;
:func:`acknowledge` (``memento ack``, the dashboard's ``a``) clears them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import notes, status_log
from .errors import MementoError
from .lines import decode, read_text_file, strip_eol
from .locks import LockBusy, atomic_write_text, file_lock, locked_edit
from .plan.model import Plan
from .runlog import utc_stamp
from .scheduler import BLOCKED, COMPLETE, EMPTY, INPUT, TASK, WAITING, pick, plan_progress
from .state import TickState, read_claim
from .workspace import Workspace

TITLE = "Current State"
SECTIONS = ("Objective", "Current Step", "Key Decisions", "Next Action", "Blockers", "Unsurfaced Results")
MAX_LINES = 40
MAX_DECISIONS = 3
STAMP_PREFIX = "> Last updated:"
ARCHIVE_DIR = "session_archive"
ACK_FILE = "acknowledged.json"

# Key Decisions written by Memento start with their source; anything else is a person's.
AUTO_DECISION_RE = re.compile(r"^(?:Note for \S+|[A-Z][A-Z0-9]*-\d+ Outputs) \([^)]*\): ")
_COUNTS_RE = re.compile(r"\s*\(\d+/\d+ tasks done\)")
# Objectives that say there is no work in flight (nothing to recover, nothing to archive).
IDLE_OBJECTIVE_RE = re.compile(
    r"nothing has run yet|all \d+ tasks (?:are )?complete|its task is complete|has no tasks|^none\.?$|^idle\b|"
    r"^n/?a$|^tbd$", re.I)
_MORE_RE = re.compile(r"^… and \d+ more")


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint as read back: the stamp line and each section's lines (None: section missing)."""

    title: str
    updated: str | None
    sections: dict[str, list[str]]
    order: tuple[str, ...]
    line_count: int

    def section(self, name: str) -> list[str] | None:
        return self.sections.get(name)

    @property
    def objective(self) -> str:
        return " ".join(self.sections.get("Objective") or [])


def parse_checkpoint(text: str) -> Checkpoint:
    """Read a checkpoint; sections map to their non-blank lines (list items one each).

    The plain shape Memento writes is read line by line (markdown/plain.py); anything else with
    mistune, imported only then: a tick reads its previous checkpoint every time."""
    from .markdown.plain import read_plain

    plain = read_plain(text)
    if plain is not None:
        title, preamble, sections, order = plain
    else:
        from .markdown.prose import parse_document

        doc = parse_document(text)
        title, preamble, order = doc.title, doc.preamble, doc.order
        sections = {name: sec.lines for name, sec in doc.sections.items()}
    updated = None
    for line in preamble:
        if line.startswith("Last updated:"):
            updated = line.split(":", 1)[1].strip()
    lines = text.splitlines()
    return Checkpoint(title, updated, sections, tuple(order), len(lines))


def read_sections(text: str) -> dict[str, list[str]]:
    """The checkpoint's sections by name, each a list of non-blank lines (list items one each)."""
    return parse_checkpoint(text).sections


def is_none(lines: list[str] | None) -> bool:
    """A section that says "None" (or nothing)."""
    values = [ln.strip().rstrip(".").strip() for ln in lines or () if ln.strip()]
    return not values or (len(values) == 1 and values[0].lower() in ("none", "none yet", "-"))


def person_decisions(text: str) -> list[str]:
    """Key Decisions a person wrote into ``text`` (Memento's own are recomputed, not carried)."""
    return _person_decisions(read_sections(text))


def _person_decisions(sections: dict[str, list[str]]) -> list[str]:
    lines = sections.get("Key Decisions") or []
    if is_none(lines):
        return []
    out = []
    for line in lines:
        item = line.strip()
        if not item or item.lower() == "none" or _MORE_RE.match(item) or AUTO_DECISION_RE.match(item):
            continue
        if item.startswith("[") and item.endswith("]"):
            continue  # the seed template's placeholder, not a decision
        out.append(item)
    return out


def objective_key(objective: str) -> str:
    """The objective minus its progress count: a new phase or a new plan is a new objective."""
    return _COUNTS_RE.sub("", " ".join(objective.split())).strip()


def is_idle_objective(objective: str) -> bool:
    return not objective.strip() or bool(IDLE_OBJECTIVE_RE.search(objective.strip()))


# --------------------------------------------------------------------------- what to say


def _acknowledged(ws: Workspace) -> set[str]:
    try:
        data = json.loads(read_text_file(ws.memento_dir / ACK_FILE))
    except (OSError, ValueError):
        return set()
    return {k for k in data.get("keys", ()) if isinstance(k, str)} if isinstance(data, dict) else set()


def result_key(result: dict) -> str:
    return f"{result.get('task', '')}|{result.get('commit', '')}|{result.get('at', '')}"


def unsurfaced_results(ws: Workspace, state: TickState) -> list[dict]:
    """Passed tasks nobody has acknowledged yet, oldest first."""
    acked = _acknowledged(ws)
    return [u for u in state.unsurfaced if isinstance(u, dict) and result_key(u) not in acked]


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def current_phase(plan: Plan, verdict=None):
    """The phase work is in now: a running task's, the next task's, or the blocked one's."""
    verdict = verdict or pick(plan)
    running = next((t for t in plan.tasks if t.status == "~"), None)
    phase_id = running.phase if running else (verdict.task.phase if verdict.task else verdict.phase)
    return plan.phase(phase_id) if phase_id else None


def objective_for(ws: Workspace, plan: Plan, verdict=None) -> str:
    verdict = verdict or pick(plan)
    title = plan.title or ws.root.name
    progress = plan_progress(plan)
    if verdict.kind == EMPTY:
        return f"{title}: the plan has no tasks yet"
    if verdict.kind == COMPLETE:
        return f"{title}: all {progress.total} tasks complete" if progress.total != 1 else f"{title}: its task is complete"
    phase = current_phase(plan, verdict)
    where = phase.title if phase else "the plan"
    return f"{title}: {where} ({progress.done}/{progress.total} tasks done)"


def _status_entries(ws: Workspace) -> list[status_log.TickEntry]:
    try:
        return status_log.parse_status(ws.status_path)
    except (MementoError, OSError):
        return []


def _current_step(ws: Workspace, plan: Plan, entries, results) -> list[str]:
    out = []
    for task in plan.tasks:
        if task.status == "~":
            claim = read_claim(ws, task.id)
            who = f" (pid {claim.pid} on {claim.host}, since {claim.started})" if claim else ""
            out.append(_one_line(f"{task.id} {task.title} is running now{who}"))
            break
    last = next((e for e in reversed(entries) if e.task_id and not e.is_event), None)
    if last is not None:
        title = plan.task(last.task_id).title if plan.task(last.task_id) else (last.task_title or "")
        status = last.field("Status", "") or last.status
        line = f"Tick #{last.tick}: {last.task_id} {title} — {status}"
        if last.status == "SUCCESS":
            line += f" (commit {last.commit_sha})" if last.commit_sha else ""
        else:
            why = last.field("Reason") or last.error
            line += f": {why}" if why else ""
        out.append(_one_line(_since(line, last, plan.task(last.task_id)), 200))
    elif results:
        r = results[-1]
        out.append(_one_line(f"{r.task_id} " + ("passed" if r.passed else f"failed: {r.reason}"), 200))
    return out or ["None"]


def _since(line: str, last, task) -> str:
    """What a person did to the task after that entry (skipped it, reset it), so the checkpoint
    never calls BLOCKED a task the plan has skipped."""
    if task is None or last.status == "SUCCESS":
        return line
    if task.status == "-":
        return f"{line}; since skipped" + (f": {task.reason}" if task.reason else "")
    if task.status == " " and last.status == "BLOCKED":
        return f"{line}; since reset to [ ]"
    return line


def _next_action(plan: Plan, state: TickState, verdict) -> str:
    if plan.plan_errors:
        return (f"A person: fix docs/MASTER_PLAN.md ({len(plan.plan_errors)} plan error(s), "
                "see `memento lint`); the next tick runs after that")
    if state.breaker_reason:
        return (f"A person: the circuit breaker paused the pipeline ({state.breaker_reason}); "
                "fix the cause, then `memento resume`")
    if state.dirty_signature:
        paths = ", ".join(state.dirty_signature.splitlines()[:3])
        return f"A person: commit, stash or remove the uncommitted changes ({paths}); ticks refuse to run until then"
    if plan.meta.tick_mode != "auto":
        return f"A person: the pipeline is {plan.meta.tick_mode}; `memento resume` to continue"
    if verdict.kind == TASK:
        task = verdict.task
        return f"Next tick runs {task.label} ({task.phase})"
    if verdict.kind == BLOCKED:
        ids = ", ".join(verdict.tasks[:3])
        first = verdict.tasks[0] if verdict.tasks else "ID"
        return (f"A person: {ids} blocked — fix the task or the plan, then `memento reset {first}` "
                f"(or `memento skip {first} --reason …`)")
    if verdict.kind == INPUT:
        first = verdict.tasks[0] if verdict.tasks else "ID"
        return (f"A person: answer the question of {', '.join(verdict.tasks[:3])} "
                f"(`memento answer {first} TEXT`); the task runs again after that")
    if verdict.kind == COMPLETE:
        return "None: all tasks are complete"
    if verdict.kind == WAITING:
        return f"Wait: {verdict.message.removeprefix('waiting: ')}; the next tick continues after it"
    return f"A person: {verdict.message}"


def _blockers(plan: Plan, state: TickState, entries) -> list[str]:
    out = []
    if state.breaker_reason:
        out.append(f"Circuit breaker tripped{' at ' + state.breaker_at if state.breaker_at else ''}: "
                   f"{state.breaker_reason}")
    for e in plan.plan_errors[:2]:
        out.append(f"Plan invalid: {e}")
    if state.dirty_signature:
        out.append("Uncommitted changes outside Memento's files: " + ", ".join(state.dirty_signature.splitlines()[:5]))
    if plan.meta.tick_mode != "auto":
        out.append(f"Pipeline {plan.meta.tick_mode} (tick_mode: {plan.meta.tick_mode})")
    for task in plan.tasks:
        if task.status == "!":
            last = status_log.last_entry_for(entries, task.id)
            why = (last.field("Reason") or last.error) if last is not None else None
            out.append(f"{task.id} {task.title} — blocked after {task.retries} retries" + (f": {why}" if why else ""))
        elif task.status == "?":
            out.append(f"{task.id} {task.title} — waits for a person's answer: {task.question or '(no question recorded)'}")
        elif task.status == " " and not task.valid:
            out.append(f"{task.id} is never picked: {'; '.join(task.problems)}")
    return [_one_line(b, 200) for b in out]


def _auto_decisions(ws: Workspace, entries, limit: int, plan: Plan | None = None) -> list[str]:
    """The newest decisions from notes and workers' Outputs, newest first.

    A note to a task that is done or skipped is no decision: no worker reads it.
    """
    if limit <= 0:
        return []
    found: list[tuple[str, str]] = []  # (sortable stamp, text)
    try:
        all_notes = notes.parse_notes(ws.notes_path)
    except (MementoError, OSError):
        all_notes = []
    finished = {t.id for t in plan.tasks if t.status in ("x", "-")} if plan is not None else set()
    for note in all_notes:
        if note.archived or not note.text.strip():
            continue
        if not note.read and note.target in finished:
            continue
        found.append((note.timestamp, f"Note for {note.target} ({note.timestamp[:10]}): {note.text}"))
    for entry in entries:
        outputs = entry.field("Outputs")
        if outputs and entry.task_id:
            found.append((entry.timestamp.rstrip("Z"), f"{entry.task_id} Outputs (tick #{entry.tick}): {outputs}"))
    found.sort(key=lambda f: f[0], reverse=True)
    return [_one_line(text) for _, text in found[:limit]]


def _bullets(items: list[str], limit: int) -> list[str]:
    if not items:
        return ["None"]
    if len(items) <= limit:
        return [f"- {item}" for item in items]
    shown = [f"- {item}" for item in items[: max(limit - 1, 1)]]
    return shown + [f"- … and {len(items) - len(shown)} more"]


def render(ws: Workspace, plan: Plan, state: TickState, results=(), now: datetime | None = None,
           decisions: list[str] | None = None, previous: str = "") -> str:
    """The checkpoint text for the plan, the status log and the tick state as they are now.

    ``decisions`` are a person's Key Decisions to carry over; by default they
    are read from ``previous`` (the file being replaced).
    """
    now = now or datetime.now(UTC)
    verdict = pick(plan)
    entries = _status_entries(ws)
    kept = person_decisions(previous) if decisions is None else list(decisions)
    decided = kept + _auto_decisions(ws, entries, MAX_DECISIONS - len(kept), plan)
    blockers = _blockers(plan, state, entries)
    results_left = unsurfaced_results(ws, state)
    unsurfaced = [_one_line(f"{u.get('task', '?')} {u.get('title', '')} — ✅ passed"
                            + (f", commit {u['commit']}" if u.get("commit") else "")
                            + (f" ({u['at']})" if u.get("at") else ""), 200) for u in results_left]
    fixed = {
        "Objective": [objective_for(ws, plan, verdict)],
        "Current Step": _current_step(ws, plan, entries, results),
        "Key Decisions": [f"- {d}" for d in decided] or ["None"],
        "Next Action": [_one_line(_next_action(plan, state, verdict), 240)],
    }
    # 2 header lines + 1 blank + a heading and a blank line per section, minus the final blank.
    budget = MAX_LINES - (2 + 2 * len(SECTIONS)) - sum(len(v) for v in fixed.values())
    blocker_limit = max(2, min(6, budget // 2))
    unsurfaced_limit = max(2, min(7, budget - min(len(blockers), blocker_limit) if blockers else budget))
    body = {**fixed, "Blockers": _bullets(blockers, blocker_limit),
            "Unsurfaced Results": _bullets(unsurfaced, unsurfaced_limit)}
    out = [f"# {TITLE}", f"{STAMP_PREFIX} {utc_stamp(now)}", ""]
    for name in SECTIONS:
        out += [f"## {name}", *body[name], ""]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- writing


def _without_stamp(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith(STAMP_PREFIX))


def archive_path(ws: Workspace, now: datetime) -> Path:
    """A new file in memory/session_archive/ named by the time (never overwrites one)."""
    folder = ws.memory_dir / ARCHIVE_DIR
    base = now.strftime("%Y-%m-%dT%H%M%SZ")
    candidate = folder / f"{base}.md"
    n = 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{base}-{n}.md"
    return candidate


def write_checkpoint(ws: Workspace, plan: Plan, state: TickState, results=(), *,
                     now: datetime | None = None) -> bool:
    """Overwrite CURRENT_STATE.md; True when it changed.

    A rewrite that would change only the time writes nothing (an idle tick
    must not dirty the tree every few minutes). Before an overwrite that
    changes the Objective, the previous file is frozen into
    memory/session_archive/<stamp>.md.
    """
    now = now or datetime.now(UTC)

    def transform(data: bytes) -> bytes | None:
        old = data.decode("utf-8", errors="replace")
        previous = parse_checkpoint(old)  # once: the decisions carried over and the objective compared
        text = render(ws, plan, state, results, now=now, decisions=_person_decisions(previous.sections))
        if _without_stamp(text) == _without_stamp(old):
            return None
        old_objective = previous.objective if old.strip() else ""
        new_objective = parse_checkpoint(text).objective
        if (old.strip() and not is_idle_objective(old_objective)
                and objective_key(old_objective) != objective_key(new_objective)):
            atomic_write_text(archive_path(ws, now), old)
        return text.encode("utf-8")

    return locked_edit(ws.checkpoint_path, transform) is not None


def _set_section_none(data: bytes, name: str) -> bytes | None:
    """The file with section ``name``'s body replaced by "None" (a line edit; the rest byte for byte)."""
    doc = decode(data, "CURRENT_STATE.md")
    lines = doc.lines
    nl = doc.newline
    heading = re.compile(rf"^##[ \t]+{re.escape(name)}[ \t]*$")
    any_heading = re.compile(r"^ {0,3}#{1,2}[ \t]")
    fence = None
    start = None
    for i, raw in enumerate(lines):
        s = strip_eol(raw)
        if fence:
            if s.strip().startswith(fence):
                fence = None
            continue
        if s.lstrip().startswith(("```", "~~~")):
            fence = s.strip()[:3]
            continue
        if start is None and heading.match(s):
            start = i
        elif start is not None and any_heading.match(s):
            end = i
            break
    else:
        end = len(lines)
    if start is None:
        return None
    if is_none([strip_eol(b) for b in lines[start + 1:end]]):
        return None
    lines[start + 1:end] = [f"None{nl}", *([nl] if end < len(lines) else [])]
    return doc.encode()


def acknowledge(ws: Workspace) -> int:
    """Mark every unsurfaced result as seen; returns how many there were.

    They leave state.json (when no tick is running; otherwise they are
    recorded in .memento/acknowledged.json, which the checkpoint honours until
    they can be cleared) and the checkpoint's Unsurfaced Results become None.
    """
    state = TickState.load(ws)
    pending = unsurfaced_results(ws, state)
    ack_file = ws.memento_dir / ACK_FILE
    try:
        with file_lock(ws.tick_lock_path, blocking=False):
            state = TickState.load(ws)  # re-read: nothing else writes it while we hold the lock
            if state.unsurfaced or state.stale_tick:
                state.unsurfaced, state.stale_tick = [], ""  # the stopped tick's alert is seen too
                state.save(ws)
            if ack_file.exists():
                ack_file.unlink()
    except LockBusy:
        # A tick is running and will save the state it loaded: remember what was seen instead.
        keys = sorted({result_key(u) for u in state.unsurfaced})
        atomic_write_text(ack_file, json.dumps({"keys": keys}, ensure_ascii=False) + "\n")
    if ws.checkpoint_path.exists():
        locked_edit(ws.checkpoint_path, lambda data: _set_section_none(data, "Unsurfaced Results"))
    return len(pending)


# --------------------------------------------------------------------------- .memento_alert


def write_alert(ws: Workspace, plan: Plan, state: TickState, extra: str = "") -> None:
    """Write `.memento_alert` while the pipeline needs attention (blocked tasks, the breaker, a
    ``problem:``); remove it when it does not. The tick calls it after its work, and a person's
    skip, reset or resume too, so an alert never outlives what it was about."""
    blocked = [t.id for t in plan.tasks if t.status == "!"]
    asking = [t.id for t in plan.tasks if t.status == "?"]  # a question waits for a person (SPEC §18)
    breaker = state.breaker_reason
    forge = forge_problems(ws)
    if not blocked and not asking and not breaker and not extra and not state.stale_tick and not forge:
        try:
            ws.alert_path.unlink()
        except FileNotFoundError:
            pass
        return
    from .state_word import word_for

    word, why = word_for(ws, plan, state)  # the word `memento status` and the dashboard say
    lines = [
        f"timestamp: {utc_stamp()}",
        f"state: {word}" + (f" — {why}" if why else ""),
        f"blocked_tasks: {len(blocked)}",
        f"blocked: {', '.join(blocked)}",
        *([f"questions: {', '.join(asking)}"] if asking else []),
        f"circuit_breaker: {_breaker_line(state) if breaker else 'OK'}",
    ]
    if extra:
        lines.append(f"problem: {extra}")
    if state.stale_tick:  # tick/lock.py, until `memento ack`
        lines.append(f"problem: {state.stale_tick}")
    lines += [f"problem: {p}" for p in forge]
    if asking:
        lines.append(f"answer: `memento answer {asking[0]} TEXT` (or --choice N)")
    lines.append("message: the pipeline needs attention; see docs/TICK_STATUS.md")
    text = "\n".join(lines) + "\n"
    try:
        current = ws.alert_path.read_bytes()
    except OSError:
        current = None
    if current != text.encode():
        atomic_write_text(ws.alert_path, text)


def forge_problems(ws: Workspace) -> list[str]:
    """What GitHub says that needs a person (SPEC §19): a refused token, a failing required check."""
    from .forge import pulls, trouble

    out = []
    refused = trouble.current(ws)
    if refused:
        out.append(f"GitHub refuses the token from {refused['source']} ({refused['doing']})")
    for record in pulls.load(ws).values():
        if record.checks == "failing" and record.state in ("open", "merged"):
            names = ", ".join(f"{c.name}" + (f" ({c.url})" if c.url else "") for c in record.failing) or "a check"
            out.append(f"{record.phase}: pull request #{record.number}: failing {names}")
    return out


def _breaker_line(state: TickState) -> str:
    """"TRIGGERED at <time> — <reason>": when it tripped, so a reason about then (1 of 1 tasks
    were blocked) is not read as now."""
    when = f" at {state.breaker_at}" if state.breaker_at else ""
    return f"TRIGGERED{when} — {state.breaker_reason}"
