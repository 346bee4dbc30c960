"""`memento doctor`: is the workspace's recovery point present, fresh and usable? (SPEC §8)

Reads files only and repairs nothing. :func:`check_workspace` runs every check
and returns :class:`Finding` values; a check that finds nothing wrong reports
one ``OK`` finding, so a healthy workspace prints only ``[OK]`` lines. The
command prints ``[CRITICAL] …``, ``[WARNING] …``, ``[INFO] …``, ``[OK] …`` and
exits 0 healthy, 1 warnings, 2 critical.

The checks are the eight of the continuity doctor (existence, staleness,
template compliance, active-work usability, unsurfaced results, archive
consistency, recovery priority, alignment with the plan) and Memento's own
(plan errors, unknown Meta keys, stale claims, unread notes, PROJECT_MAP.md
paths, breaker, alert, dirty tree, tick lock, memento.toml, agent binary).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path

from . import checkpoint as cp
from .config import Config, format_duration, load_config
from .errors import MementoError
from .plan import FINISHED, Plan, parse_plan
from .state import TickState, claim_is_stale, pid_alive, read_claim
from .workspace import Workspace

CRITICAL, WARNING, INFO, OK = "CRITICAL", "WARNING", "INFO", "OK"
EXIT_CODES = {CRITICAL: 2, WARNING: 1, INFO: 0, OK: 0}
SCHEMA = "memento-doctor/1"
NOTE_AGE = timedelta(days=1)
FRESH_SLACK = 1.0  # seconds: stamps are whole seconds and the checkpoint is written last
MAX_PATH_FINDINGS = 10
_PLACEHOLDER_RE = re.compile(r"^\[[^\]]+\]$|\{(?:project|now|date)\}|^(?:TODO|TBD|FIXME|XXX)\b|^\.\.\.$|^…$", re.I)
_GREETING_RE = re.compile(r"^\W*(?:hi|hello|hey|greetings|good (?:morning|afternoon|evening)|how can i help)\b", re.I)
_TASK_ID_RE = re.compile(r"\b[A-Z][A-Z0-9]*-\d+\b")
_FILE_EXT = ("py", "md", "toml", "json", "yaml", "yml", "txt", "cfg", "ini", "js", "mjs", "ts", "tsx", "jsx",
             "go", "rs", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "sh", "sql", "html", "css",
             "tcss", "lock", "conf", "xml", "csv", "rst", "tf", "proto", "swift", "lua", "pl", "r", "ipynb")
_PATHISH_RE = re.compile(r"^(?:\./)?[\w.@+-]+(?:/[\w.@+-]+)*/?$")
_MAP_PATH_KEYS = ("entry", "entries", "path", "paths", "file", "files", "location")


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found; ``path``/``line`` locate it when a file and line are known."""

    severity: str  # "CRITICAL" | "WARNING" | "INFO" | "OK"
    check: str
    message: str
    path: str | None = None
    line: int | None = None

    @property
    def text(self) -> str:
        """The message, prefixed with ``path:line:`` when a line is known."""
        if self.path and self.line:
            return f"{self.path}:{self.line}: {self.message}"
        if self.path and self.path not in self.message:
            return f"{self.path}: {self.message}"
        return self.message

    def __str__(self) -> str:
        return f"[{self.severity}] {self.text}"

    def to_dict(self) -> dict:
        return asdict(self)


def exit_code(findings: Iterable[Finding]) -> int:
    """0 healthy (OK and INFO only), 1 warnings, 2 critical."""
    return max((EXIT_CODES.get(f.severity, 0) for f in findings), default=0)


# --------------------------------------------------------------------------- what the checks read


def _stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_stamp(text: str | None) -> float | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class _Context:
    """The workspace's files, each read at most once and only when a check asks."""

    def __init__(self, ws: Workspace, now: datetime):
        self.ws = ws
        self.now = now

    def rel(self, path: Path) -> str:
        return self.ws.rel(path)

    @cached_property
    def plan_problem(self) -> MementoError | None:
        return self._plan_and_problem[1]

    @cached_property
    def plan(self) -> Plan | None:
        return self._plan_and_problem[0]

    @cached_property
    def _plan_and_problem(self) -> tuple[Plan | None, MementoError | None]:
        if not self.ws.plan_path.exists():
            return None, MementoError(f"{self.rel(self.ws.plan_path)} does not exist")
        try:
            return parse_plan(self.ws.plan_path, display=self.rel(self.ws.plan_path)), None
        except (MementoError, OSError) as exc:
            return None, exc if isinstance(exc, MementoError) else MementoError(str(exc))

    @cached_property
    def usable_plan(self) -> Plan | None:
        """The plan when it can run (no plan-level errors)."""
        plan = self.plan
        return plan if plan is not None and not plan.plan_errors else None

    @cached_property
    def state(self) -> TickState:
        return TickState.load(self.ws)

    @cached_property
    def _config(self) -> tuple[Config | None, MementoError | None]:
        try:
            return load_config(self.ws.config_path), None
        except MementoError as exc:
            return None, exc

    @cached_property
    def checkpoint_text(self) -> str | None:
        try:
            return self.ws.checkpoint_path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @cached_property
    def checkpoint(self) -> cp.Checkpoint | None:
        text = self.checkpoint_text
        return cp.parse_checkpoint(text) if text is not None else None

    @cached_property
    def entries(self):
        from . import status_log

        try:
            return status_log.parse_status(self.ws.status_path)
        except (MementoError, OSError):
            return []

    @cached_property
    def last_task_entry(self):
        return next((e for e in reversed(self.entries) if e.task_id and not e.is_event), None)

    @cached_property
    def newest_log(self) -> tuple[Path, float] | None:
        newest = None
        try:
            logs = list(self.ws.logs_dir.glob("tick_*.log"))
        except OSError:
            logs = []
        for log in logs:
            m = _mtime(log)
            if m is not None and (newest is None or m > newest[1]):
                newest = (log, m)
        return newest

    def line_of(self, path: Path, needle: str) -> int | None:
        """The first line of ``path`` containing ``needle`` (for messages only)."""
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    if needle in line:
                        return number
        except OSError:
            pass
        return None


# --------------------------------------------------------------------------- the checks
# Each returns a list of findings (problems), a string (all is well: one OK line with
# that text) or None (nothing to say, e.g. the checkpoint is missing and another check said so).

CheckResult = list[Finding] | str | None


def check_exists(c: _Context) -> CheckResult:
    rel = c.rel(c.ws.checkpoint_path)
    if not c.ws.checkpoint_path.exists():
        return [Finding(CRITICAL, "checkpoint-exists",
                        f"{rel} does not exist: no deterministic recovery point (the next tick writes it)", rel)]
    if c.checkpoint_text is None:
        return [Finding(CRITICAL, "checkpoint-exists", f"{rel} cannot be read as UTF-8 text", rel)]
    return f"{rel} exists"


def check_fresh(c: _Context) -> CheckResult:
    written = _mtime(c.ws.checkpoint_path)
    if written is None or c.checkpoint is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    references = []
    finished = _parse_stamp(c.state.last_tick_finished)
    if finished is not None:
        references.append((finished, f"the last tick (#{c.state.last_tick}) finished"))
    if c.newest_log is not None:
        log, when = c.newest_log
        references.append((when, f"the newest tick log {c.rel(log)} was written"))
    if not references:
        return f"{rel}: no tick has run yet, nothing to be stale against"
    when, what = max(references)
    if written + FRESH_SLACK < when:
        return [Finding(WARNING, "checkpoint-fresh",
                        f"{rel} is stale: written {_stamp(written)}, {format_duration(when - written)} before "
                        f"{what} ({_stamp(when)})", rel)]
    return f"{rel} is fresh: written after the last tick"


def check_template(c: _Context) -> CheckResult:
    doc, text = c.checkpoint, c.checkpoint_text
    if doc is None or text is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    path = c.ws.checkpoint_path
    found = []
    if doc.title != cp.TITLE:
        found.append(Finding(WARNING, "checkpoint-template", f"the title is not `# {cp.TITLE}`", rel, 1 if text else None))
    if doc.updated is None:
        found.append(Finding(WARNING, "checkpoint-template", f"no `{cp.STAMP_PREFIX} …` line", rel))
    for name in cp.SECTIONS:
        lines = doc.section(name)
        if lines is None:
            found.append(Finding(WARNING, "checkpoint-template",
                                 f"the `## {name}` section is missing (every section is mandatory; write None)", rel))
        elif not lines:
            found.append(Finding(WARNING, "checkpoint-template",
                                 f"the `## {name}` section is empty (write None rather than leave it blank)", rel,
                                 c.line_of(path, f"## {name}")))
        else:
            for line in lines:
                item = line.strip()
                if _PLACEHOLDER_RE.search(item):
                    severity = WARNING if name in ("Objective", "Next Action") else INFO
                    found.append(Finding(severity, "checkpoint-template",
                                         f"the `## {name}` section still shows placeholder text: {item[:80]}", rel,
                                         c.line_of(path, item[:40])))
    if doc.line_count > cp.MAX_LINES:
        found.append(Finding(WARNING, "checkpoint-template",
                             f"{rel} has {doc.line_count} lines (more than {cp.MAX_LINES}): a checkpoint, not a journal",
                             rel))
    return found or "template compliance: all sections present, no placeholder text"


def _open_tasks(plan: Plan | None) -> int:
    return sum(1 for t in plan.tasks if t.status not in FINISHED) if plan is not None else 0


def _unusable(lines: list[str] | None) -> bool:
    return cp.is_none(lines) or any(_PLACEHOLDER_RE.search(ln.strip()) for ln in lines or ())


def check_active_work(c: _Context) -> CheckResult:
    doc = c.checkpoint
    if doc is None or c.plan is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    open_tasks = _open_tasks(c.plan)
    objective = doc.section("Objective")
    found = []
    if not open_tasks:
        return "no active work: every task is done or skipped, nothing to recover"
    if _unusable(objective):
        found.append(Finding(WARNING, "active-work",
                             f"{open_tasks} task(s) are open but the Objective is empty or placeholder text", rel,
                             c.line_of(c.ws.checkpoint_path, "## Objective")))
    elif cp.is_idle_objective(doc.objective) and c.plan.meta.tick_mode != "auto" and not c.plan.meta.total_ticks:
        return [Finding(INFO, "active-work", f"{open_tasks} task(s) wait for `memento resume`: "
                        "the pipeline has not started, there is nothing to recover yet", rel)]
    elif cp.is_idle_objective(doc.objective):
        found.append(Finding(WARNING, "active-work",
                             f"{open_tasks} task(s) are open but the Objective says there is no work in flight: "
                             f"{doc.objective[:80]}", rel, c.line_of(c.ws.checkpoint_path, doc.objective[:40])))
    if _unusable(doc.section("Next Action")):
        found.append(Finding(WARNING, "active-work",
                             "recovery state exists but Next Action is empty, None or placeholder text", rel,
                             c.line_of(c.ws.checkpoint_path, "## Next Action")))
    return found or "active work: the Objective and Next Action give a usable recovery point"


def check_unsurfaced(c: _Context) -> CheckResult:
    doc = c.checkpoint
    if doc is None:
        return None
    lines = doc.section("Unsurfaced Results")
    if lines is None or cp.is_none(lines):
        return "no unsurfaced results"
    ids = [m.group(0) for ln in lines for m in [_TASK_ID_RE.search(ln)] if m]
    shown = f" ({', '.join(ids[:5])}{', …' if len(ids) > 5 else ''})" if ids else ""
    rel = c.rel(c.ws.checkpoint_path)
    return [Finding(WARNING, "unsurfaced-results",
                    f"Unsurfaced Results lists {len(lines)} result(s) nobody acknowledged{shown}: "
                    "review them, then `memento ack`", rel, c.line_of(c.ws.checkpoint_path, "## Unsurfaced Results"))]


def _archive_stamp(path: Path) -> float | None:
    m = re.match(r"^(\d{4}-\d{2}-\d{2}T\d{6}Z)", path.name)
    if not m:
        return None
    try:
        return datetime.strptime(m.group(1), "%Y-%m-%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _phase_index(plan: Plan, objective: str) -> int | None:
    """The position of the phase an objective names (its title, else its id), or None."""
    best = None
    for i, phase in enumerate(plan.phases):
        if phase.title and phase.title in objective:
            return i
        if best is None and re.search(rf"\b{re.escape(phase.id)}\b", objective):
            best = i
    return best


def check_archive(c: _Context) -> CheckResult:
    doc = c.checkpoint
    if doc is None:
        return None
    folder = c.ws.memory_dir / cp.ARCHIVE_DIR
    try:
        archives = sorted(p for p in folder.glob("*.md") if p.is_file())
    except OSError:
        archives = []
    if not archives:
        return f"no session archives yet in {c.rel(folder)}/"
    newest = archives[-1]
    rel = c.rel(newest)
    try:
        old = cp.parse_checkpoint(newest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return [Finding(INFO, "archive-consistency", f"the newest archive {rel} cannot be read", rel)]
    if old.section("Objective") is None:
        return [Finding(INFO, "archive-consistency", f"the newest archive {rel} has no Objective section", rel)]
    found = []
    archived_at = _archive_stamp(newest)
    updated = _parse_stamp(doc.updated)
    if archived_at is not None and updated is not None and archived_at > updated + FRESH_SLACK:
        found.append(Finding(INFO, "archive-consistency",
                             f"the newest archive {rel} is newer than the checkpoint (last updated {doc.updated}): "
                             "was an old checkpoint restored?", rel))
    old_key, new_key = cp.objective_key(old.objective), cp.objective_key(doc.objective)
    if old_key != new_key and not cp.is_idle_objective(old.objective):
        plan = c.plan
        explained = False
        if plan is not None:
            before, now_at = _phase_index(plan, old.objective), _phase_index(plan, doc.objective)
            same_plan = bool(plan.title) and old.objective.startswith(plan.title)
            complete = cp.is_idle_objective(doc.objective)
            explained = same_plan and before is not None and (complete or (now_at is not None and before <= now_at))
        if not explained:
            found.append(Finding(INFO, "archive-consistency",
                                 f"archive objective differs from current objective (task switch?): {rel} says "
                                 f"\"{old.objective[:70]}\", the checkpoint says \"{doc.objective[:70]}\"", rel))
    return found or f"archive consistency: {rel} is the objective before the current one"


def _system_prompt_has_rule(text: str) -> bool:
    low = text.lower()
    return "current_state" in low and "recover" in low


def check_recovery_priority(c: _Context) -> CheckResult:
    found = []
    sp = c.ws.system_prompt_path
    sp_rel = c.rel(sp)
    try:
        system = sp.read_text(encoding="utf-8", errors="replace")
    except OSError:
        system = None
    if system is None:
        found.append(Finding(WARNING, "recovery-priority",
                             f"{sp_rel} does not exist: the worker gets no rule to surface recovered state first",
                             sp_rel))
    elif not _system_prompt_has_rule(system):
        found.append(Finding(WARNING, "recovery-priority",
                             f"{sp_rel} does not tell the worker to surface the recovered state of "
                             "CURRENT_STATE.md first", sp_rel))
    entry = c.last_task_entry
    if entry is None:
        return found or "recovery priority: the system prompt carries the rule; no worker has run yet"
    task = entry.task_id
    prompt = c.ws.memento_dir / "prompts" / f"{task}.md"
    prompt_rel = c.rel(prompt)
    try:
        text = prompt.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return found + [Finding(INFO, "recovery-priority",
                                f"cannot tell whether the worker of {task} (tick #{entry.tick}) was given the "
                                f"checkpoint: {prompt_rel} is gone", prompt_rel)]
    section = text.split("## docs/CURRENT_STATE.md", 1)
    if len(section) < 2:
        found.append(Finding(WARNING, "recovery-priority",
                             f"the worker of {task} (tick #{entry.tick}) was not given the checkpoint: "
                             f"{prompt_rel} has no docs/CURRENT_STATE.md section", prompt_rel))
    else:
        body = section[1].split("\n## ", 1)[0]
        lines = [ln for ln in body.splitlines()[1:] if ln.strip()]
        if not lines or lines[0].strip() == "(missing)":
            found.append(Finding(WARNING, "recovery-priority",
                                 f"the worker of {task} (tick #{entry.tick}) was given no checkpoint: "
                                 "docs/CURRENT_STATE.md was missing when its prompt was built", prompt_rel,
                                 c.line_of(prompt, "## docs/CURRENT_STATE.md")))
    found += _greeting(c, entry)
    return found or (f"recovery priority: the last worker ({task}, tick #{entry.tick}) was given the checkpoint "
                     "and the rule to surface recovered state first")


def _greeting(c: _Context, entry) -> list[Finding]:
    """The worker's first words in its log: a greeting instead of the work is a continuity failure."""
    log = entry.log_path
    if not log:
        return []
    path = c.ws.root / log
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                if number > 200:
                    break
                if not line.strip() or line.startswith("[memento]"):
                    continue
                if _GREETING_RE.match(line):
                    return [Finding(WARNING, "recovery-priority",
                                    f"the worker of {entry.task_id} opened with a greeting instead of the "
                                    f"recovered state: {line.strip()[:60]}", c.rel(path), number)]
                return []
    except OSError:
        return []
    return []


def check_alignment(c: _Context) -> CheckResult:
    from .checkpoint import current_phase
    from .scheduler import COMPLETE, TASK, pick

    doc, plan = c.checkpoint, c.usable_plan
    if doc is None or plan is None:
        return None
    rel = c.rel(c.ws.checkpoint_path)
    verdict = pick(plan)
    found = []
    if verdict.kind == COMPLETE:
        if not cp.is_idle_objective(doc.objective):
            found.append(Finding(INFO, "plan-alignment",
                                 "every task is complete but the Objective still describes work in flight", rel))
        return found or "the checkpoint matches the plan: all tasks complete"
    phase = current_phase(plan, verdict)
    if phase is not None and phase.title not in doc.objective and not re.search(
            rf"\b{re.escape(phase.id)}\b", doc.objective):
        found.append(Finding(INFO, "plan-alignment",
                             f"the Objective does not name the active phase ({phase.title})", rel,
                             c.line_of(c.ws.checkpoint_path, "## Objective")))
    running = next((t for t in plan.tasks if t.status == "~"), None)
    expected = running or (verdict.task if verdict.kind == TASK else None)
    can_run = plan.meta.tick_mode == "auto" and not c.state.breaker_reason
    if expected is not None and can_run:
        action = " ".join(doc.section("Next Action") or [])
        named = _TASK_ID_RE.findall(action)
        if expected.id not in named:
            what = f"names {', '.join(named)}" if named else "names no task"
            found.append(Finding(INFO, "plan-alignment",
                                 f"Next Action {what}, but the next task is {expected.id} ({expected.title})", rel,
                                 c.line_of(c.ws.checkpoint_path, "## Next Action")))
    where = f"{phase.title}" if phase else "the plan"
    nxt = f", next {expected.id}" if expected is not None else ""
    return found or f"the checkpoint matches the plan: {where}{nxt}"


def check_plan(c: _Context) -> CheckResult:
    rel = c.rel(c.ws.plan_path)
    if c.plan is None:
        exc = c.plan_problem
        line = getattr(exc, "line", 0) or None
        message = exc.args[0] if exc and exc.args else str(exc)
        return [Finding(CRITICAL, "plan-valid", message, rel, line)]
    found = []
    for e in c.plan.errors:
        if e.severity == "error":
            severity = CRITICAL if e.scope == "plan" else WARNING
        else:
            severity = INFO
        who = f"{e.task_id} " if e.task_id else ""
        found.append(Finding(severity, "plan-valid", f"{who}{e.message}", e.path, e.line or None))
    n = len(c.plan.tasks)
    return found or f"{rel}: {n} tasks in {len(c.plan.phases)} phases, no problems"


def check_meta_keys(c: _Context) -> CheckResult:
    plan = c.plan
    if plan is None:
        return None
    found = [Finding(WARNING, "meta-keys", f"unknown Meta key `{key}` (kept as written; Memento does not use it)",
                     plan.path, plan.meta.lines.get(key) or None) for key in plan.meta.extra]
    return found or "Meta: every key is known"


def check_claims(c: _Context) -> CheckResult:
    plan = c.plan
    if plan is None:
        return None
    found = []
    live = 0
    for task in plan.tasks:
        if task.status != "~":
            continue
        why = claim_is_stale(read_claim(c.ws, task.id), plan.meta.stale_lock_timeout, now=c.now.timestamp())
        if why is None:
            live += 1
            continue
        found.append(Finding(WARNING, "stale-claims",
                             f"{task.id} is [~] but its worker is gone ({why}); the next tick resets it to [ ]",
                             plan.path, task.line))
    if found:
        return found
    return f"{live} task(s) in progress with a live worker" if live else "no stale [~] claims"


def check_notes(c: _Context) -> CheckResult:
    from .notes import parse_notes, unread_older_than

    rel = c.rel(c.ws.notes_path)
    try:
        notes = parse_notes(c.ws.notes_path)
    except MementoError as exc:
        return [Finding(WARNING, "unread-notes", f"cannot read the notes: {exc.args[0]}", rel)]
    plan = c.plan
    found = []
    for note in unread_older_than(notes, NOTE_AGE, c.now):
        if note.is_global:
            severity, why = WARNING, "no worker has taken it"
        else:
            task = plan.task(note.target) if plan is not None else None
            if task is None:
                severity, why = WARNING, f"{note.target} is not a task of the plan, so no worker will read it"
            elif task.status in ("x", "-", "!"):
                state = {"x": "done", "-": "skipped", "!": "blocked"}[task.status]
                severity, why = WARNING, f"{note.target} is {state}, so no worker will read it"
            else:
                severity, why = INFO, f"{note.target} has not run yet"
        found.append(Finding(severity, "unread-notes",
                             f"note for {note.target} from {note.timestamp} is unread after more than a day ({why})",
                             rel, note.line))
    return found or "no unread note older than a day"


def _pathish(text: str) -> str | None:
    text = text.strip().strip("`'\"").rstrip(".,;:)").lstrip("(")
    if not text or "://" in text or any(ch in text for ch in "*?[]{}<>$~") or text.startswith(("-", "/")):
        return None
    if not _PATHISH_RE.match(text) or ".." in text.split("/"):
        return None
    if "/" in text.rstrip("/"):
        return text
    if text.endswith("/"):
        return text
    ext = text.rsplit(".", 1)[-1].lower() if "." in text.strip(".") else ""
    return text if ext in _FILE_EXT else None


def map_paths(text: str) -> list[str]:
    """Paths PROJECT_MAP.md names: code spans, `Entry:`-style list items, and drawn file trees."""
    from .markdown.prose import block_lines, tokens, tree_paths, walk

    found: list[str] = []
    blocks = tokens(text)
    for token in walk(blocks):
        kind = token.get("type")
        if kind == "codespan":
            found.append(token.get("raw", ""))
        elif kind in ("paragraph", "block_code"):
            lines = block_lines(token) if kind == "block_code" else _raw_lines(token)
            if any(g in ln for ln in lines for g in ("├", "└", "│")) or (
                    kind == "block_code" and any(ln.rstrip().endswith("/") for ln in lines)):
                found += tree_paths(lines)
        elif kind == "list_item":
            for line in block_lines({"type": "list", "children": [token]}):
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() in _MAP_PATH_KEYS:
                    found += [v for v in re.split(r"[,\s]+", value.replace("`", " ")) if v]
    out, seen = [], set()
    for raw in found:
        path = _pathish(raw)
        if path and path not in seen:
            seen.add(path)
            out.append(path)
    return out


def _raw_lines(paragraph: dict) -> list[str]:
    """A paragraph's lines as typed (soft breaks split them)."""
    lines, current = [], []
    for child in paragraph.get("children", ()):
        if child.get("type") in ("softbreak", "linebreak"):
            lines.append("".join(current))
            current = []
        elif child.get("type") == "codespan":
            current.append(child.get("raw", ""))
        else:
            current.append(child.get("raw", ""))
    lines.append("".join(current))
    return lines


def check_project_map(c: _Context) -> CheckResult:
    from .gitops import matches_any

    path = c.ws.map_path
    rel = c.rel(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [Finding(INFO, "project-map-paths", f"{rel} does not exist: the worker has no map of the code", rel)]
    except OSError as exc:
        return [Finding(WARNING, "project-map-paths", f"{rel} cannot be read: {exc.strerror or exc}", rel)]
    plan = c.plan
    open_contexts = [t.context_files for t in plan.tasks if t.status not in FINISHED] if plan is not None else []
    missing = []
    paths = map_paths(text)
    for p in paths:
        if (c.ws.root / p).exists():
            continue
        if any(matches_any(p.rstrip("/"), ctx) or matches_any(p, ctx)
               or (p.endswith("/") and any(entry.startswith(p) for entry in ctx)) for ctx in open_contexts):
            continue  # an open task will create it
        missing.append(p)
    found = [Finding(WARNING, "project-map-paths",
                     f"`{p}` does not exist and no open task will create it", rel, c.line_of(path, p))
             for p in missing[:MAX_PATH_FINDINGS]]
    if len(missing) > MAX_PATH_FINDINGS:
        found.append(Finding(WARNING, "project-map-paths",
                             f"… and {len(missing) - MAX_PATH_FINDINGS} more paths that do not exist", rel))
    return found or f"{rel}: the {len(paths)} path(s) it names exist or an open task will create them"


def check_breaker(c: _Context) -> CheckResult:
    state = c.state
    if state.breaker_reason:
        when = f" at {state.breaker_at}" if state.breaker_at else ""
        return [Finding(CRITICAL, "circuit-breaker",
                        f"circuit breaker tripped{when}: {state.breaker_reason}; the pipeline is paused — "
                        "fix the cause, then `memento resume`", c.rel(c.ws.state_path))]
    return "circuit breaker: not tripped"


def check_alert(c: _Context) -> CheckResult:
    path = c.ws.alert_path
    rel = c.rel(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return f"no {rel}"
    except OSError:
        text = ""
    facts = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            facts[key.strip()] = value.strip()
    parts = []
    if facts.get("blocked"):
        parts.append(f"blocked: {facts['blocked']}")
    if facts.get("circuit_breaker", "OK") != "OK":
        parts.append(f"circuit breaker: {facts['circuit_breaker']}")
    if facts.get("problem"):
        parts.append(facts["problem"])
    detail = f" ({'; '.join(parts)})" if parts else ""
    return [Finding(WARNING, "alert", f"{rel} is present: the pipeline needs attention{detail}", rel)]


def check_work_tree(c: _Context) -> CheckResult:
    from . import gitops
    from .workspace import OWN_DOCS

    if not gitops.is_repo(c.ws.root):
        return [Finding(CRITICAL, "work-tree", f"{c.ws.root} is not a git repository: ticks cannot run")]
    try:
        entries = gitops.status(c.ws.root)
    except MementoError as exc:
        return [Finding(CRITICAL, "work-tree", f"git status failed: {exc}")]
    own = set(OWN_DOCS)
    # The tick's own rule: changes to tracked files are a person's work in progress and
    # stop it; untracked files are safe where they are (no rollback removes them).
    foreign = sorted({e.path for e in entries if e.path not in own and e.xy != "??"})
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        return [Finding(WARNING, "work-tree",
                        f"uncommitted changes to tracked files: {shown}; the next tick refuses to run "
                        "(commit, stash or remove them)")]
    return "work tree: no uncommitted changes outside Memento's own documents"


def _lock_holders(path: Path) -> list[int] | None:
    """Pids holding a lock on ``path`` according to /proc/locks; None where there is no /proc/locks."""
    try:
        st = path.stat()
    except OSError:
        return []
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            table = fh.read()
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = []
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 30602 fe:00:2149448 0 EOF" ("->" marks a waiter)
        if "->" in fields or len(fields) < 6:
            continue
        if fields[5] == wanted:
            try:
                holders.append(int(fields[4]))
            except ValueError:
                continue
    return holders


def check_tick_lock(c: _Context) -> CheckResult:
    path = c.ws.tick_lock_path
    rel = c.rel(path)
    holders = _lock_holders(path)
    if holders is None:
        return f"{rel}: this system has no /proc/locks to inspect"
    dead = [pid for pid in holders if not pid_alive(pid)]
    if dead:
        return [Finding(CRITICAL, "tick-lock",
                        f"{rel} is held by process {dead[0]}, which is gone: a surviving child inherited the lock "
                        f"and every tick is skipped until it exits (find it with `fuser {rel}`)", rel)]
    if holders:
        return [Finding(INFO, "tick-lock", f"a tick is running now (pid {holders[0]} holds {rel})", rel)]
    return f"{rel}: not held"


def check_config(c: _Context) -> CheckResult:
    config, exc = c._config
    rel = c.rel(c.ws.config_path)
    if exc is not None:
        return [Finding(CRITICAL, "config", exc.args[0] if exc.args else str(exc), rel, exc.line or None)]
    if not c.ws.config_path.exists():
        return f"{rel} does not exist; the defaults apply"
    from .config import unknown_keys

    text = c.ws.config_path.read_text(encoding="utf-8", errors="replace")
    unknown = [Finding(WARNING, "config", f"unknown {what} is ignored (a typo? the default applies)", rel, line or None)
               for what, line in unknown_keys(config, text)]
    return unknown or f"{rel} is valid (agent preset {config.agent_preset})"


def check_agent(c: _Context) -> CheckResult:
    from .agents import PRESETS

    config, _ = c._config
    if config is None:
        return None
    name = config.agent_preset
    rel = c.rel(c.ws.config_path)
    spec = PRESETS.get(name)
    if spec is None:
        return [Finding(CRITICAL, "agent-binary",
                        f"the {name!r} agent preset is not available in this version: every task would fail", rel)]
    if name == "command":
        try:
            words = shlex.split(config.agent_command)
        except ValueError as exc:
            return [Finding(CRITICAL, "agent-binary", f"[agent] command cannot be split: {exc}", rel)]
        if not words:
            return [Finding(CRITICAL, "agent-binary", "preset command but [agent] command is empty", rel)]
        binary = words[0]
    else:
        binary = spec.binary
    if not binary:
        return f"agent preset {name}: no binary needed"
    if "{" in binary:
        return f"agent preset {name}: the binary comes from a placeholder ({binary})"
    if "/" in binary:
        candidate = Path(binary) if os.path.isabs(binary) else c.ws.root / binary
        ok = candidate.is_file() and os.access(candidate, os.X_OK)
    else:
        ok = shutil.which(binary) is not None
    if not ok:
        return [Finding(CRITICAL, "agent-binary",
                        f"agent binary '{binary}' not found on PATH (preset {name}): every task would fail", rel)]
    return f"agent preset {name}: '{binary}' found"


def check_memory_writes(c: _Context) -> CheckResult:
    """Raw writes into memory/ by a worker that bypassed `memento memory write` (last 7 days)."""
    from .memory import unattributed_writes

    found = unattributed_writes(c.ws, now=c.now)
    if not found:
        return "memory: every write of the last 7 days went through `memento memory write`"
    return [Finding(WARNING, "memory-writes",
                    f"memory: unattributed write by {w.task} (commit {w.commit[:7]}): {', '.join(w.paths)} "
                    "— the worker should use `memento memory write`", "memory/")
            for w in found]


CHECKS: tuple[tuple[str, Callable[[_Context], CheckResult]], ...] = (
    ("checkpoint-exists", check_exists),
    ("checkpoint-fresh", check_fresh),
    ("checkpoint-template", check_template),
    ("active-work", check_active_work),
    ("unsurfaced-results", check_unsurfaced),
    ("archive-consistency", check_archive),
    ("recovery-priority", check_recovery_priority),
    ("plan-alignment", check_alignment),
    ("plan-valid", check_plan),
    ("meta-keys", check_meta_keys),
    ("stale-claims", check_claims),
    ("unread-notes", check_notes),
    ("project-map-paths", check_project_map),
    ("circuit-breaker", check_breaker),
    ("alert", check_alert),
    ("work-tree", check_work_tree),
    ("tick-lock", check_tick_lock),
    ("config", check_config),
    ("agent-binary", check_agent),
    ("memory-writes", check_memory_writes),
)


def check_workspace(ws: Workspace, *, now: datetime | None = None) -> list[Finding]:
    """Every check on ``ws``, in a fixed order; reads files only."""
    context = _Context(ws, now or datetime.now(UTC))
    findings: list[Finding] = []
    for name, check in CHECKS:
        try:
            result = check(context)
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            result = [Finding(WARNING, name, f"the check could not run: {type(exc).__name__}: {exc}")]
        if isinstance(result, str):
            findings.append(Finding(OK, name, result))
        elif result:
            findings.extend(result)
    return findings


# --------------------------------------------------------------------------- the command


def _safe(text: str) -> str:
    return "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in text)


def run_workspaces(dirs: list[str]) -> list[dict]:
    """Check each directory; one report per workspace: {workspace, findings, exit_code}."""
    reports = []
    for d in dirs or [os.getcwd()]:
        try:
            if not Path(d).is_dir():
                raise MementoError(f"{d}: no such directory")
            ws = Workspace.find(d)
        except MementoError as exc:
            findings = [Finding(CRITICAL, "workspace", str(exc))]
            reports.append({"workspace": str(Path(d).resolve()), "findings": findings,
                            "exit_code": exit_code(findings)})
            continue
        findings = check_workspace(ws)
        reports.append({"workspace": str(ws.root), "findings": findings, "exit_code": exit_code(findings)})
    return reports


def overall_exit(reports: list[dict], fail_on: str = "warning") -> int:
    """The worst exit code; with ``fail_on="critical"`` warnings alone exit 0."""
    worst = max((r["exit_code"] for r in reports), default=0)
    if fail_on == "critical" and worst < 2:
        return 0
    return worst


def document(reports: list[dict], fail_on: str = "warning") -> dict:
    """The --json document (its schema is documented in the README)."""
    return {
        "schema": SCHEMA,
        "checked_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "exit_code": overall_exit(reports, fail_on),
        "workspaces": [
            {"workspace": r["workspace"], "exit_code": r["exit_code"],
             "findings": [f.to_dict() for f in r["findings"]]}
            for r in reports
        ],
    }


def render_text(reports: list[dict]) -> str:
    out = []
    for r in reports:
        if len(reports) > 1:
            out.append(f"{r['workspace']}:")
        out += [_safe(str(f)) for f in r["findings"]]
    return "\n".join(out)


def run_cli(args) -> int:
    """`memento doctor [DIR…] [--json] [--fail-on warning|critical] [--watch SECONDS [--count N]]`."""
    dirs = list(args.dirs or [])
    if getattr(args, "project", None):
        dirs.insert(0, args.project)
    fail_on = args.fail_on
    if args.watch is None:
        reports = run_workspaces(dirs)
        print(json.dumps(document(reports, fail_on), ensure_ascii=False, indent=2) if args.json
              else render_text(reports))
        return overall_exit(reports, fail_on)
    if args.watch <= 0:
        raise MementoError("--watch needs a number of seconds greater than zero")
    return _watch(dirs, args.json, fail_on, args.watch, args.count)


def _watch(dirs: list[str], as_json: bool, fail_on: str, every: float, count: int | None) -> int:
    """Check every ``every`` seconds; print a block only when the findings changed."""
    previous = None
    code = 0
    runs = 0
    try:
        while True:
            reports = run_workspaces(dirs)
            code = overall_exit(reports, fail_on)
            shape = [(r["workspace"], r["findings"]) for r in reports]
            if shape != previous:
                stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                if as_json:
                    print(json.dumps(document(reports, fail_on), ensure_ascii=False), flush=True)
                else:
                    print(f"{stamp} doctor (exit {code}):")
                    print(render_text(reports), flush=True)
                previous = shape
            runs += 1
            if count is not None and runs >= count:
                return code
            time.sleep(every)
    except KeyboardInterrupt:
        return code


def register(sub, common, with_dir) -> None:
    """Add `memento doctor` to the command line."""
    p = sub.add_parser("doctor", parents=[common],
                       help="check continuity and pipeline health: exit 0 healthy, 1 warnings, 2 critical")
    p.add_argument("dirs", nargs="*", metavar="DIR", help="workspaces to check (default: the current one)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--fail-on", choices=("warning", "critical"), default="warning",
                   help="lowest severity that makes the exit code non-zero (default: warning)")
    p.add_argument("--watch", type=float, metavar="SECONDS",
                   help="check again every SECONDS and print only when the findings change")
    p.add_argument("--count", type=int, metavar="N", help="with --watch: stop after N checks")
    p.set_defaults(func=run_cli)


if __name__ == "__main__":  # pragma: no cover
    from .cli import main

    raise SystemExit(main(["doctor", *sys.argv[1:]]))
