"""`memento memory distill`: a journal day's digest and the knowledge it suggests (SPEC §9).

Deterministic rules, no model: every task that failed that day proposes a
lesson (its reasons, the analysis, and how it ended); an Outputs line that
states a decision proposes a decision entry. ``--apply`` writes the
proposals through the normal CRUD-checked write, so distilling twice is a NOOP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import MementoError
from ..lines import read_text_file
from ..workspace import Workspace
from .journal import JournalDay, parse_journal
from .layout import ARCHIVE

_DECISION_RE = re.compile(r"^\s*(?:decision\s*:|decided\b|we decided\b)|\bdecided to\b", re.I)


@dataclass(frozen=True)
class Proposal:
    path: str
    summary: str
    content: str
    source: str


@dataclass
class Digest:
    day: str
    text: str
    proposals: list[Proposal] = field(default_factory=list)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "entry"


def read_day(ws: Workspace, day: str) -> tuple[str, str]:
    """(relative path, text) of a journal day, live or archived."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        raise MementoError(f"--date must be YYYY-MM-DD, not {day!r}")
    for rel in (f"journal/{day}.md", f"{ARCHIVE}/journal/{day}.md"):
        path = ws.memory_dir / rel
        if path.is_file():
            return rel, read_text_file(path, "replace")
    raise MementoError(f"no journal for {day} (memory/journal/{day}.md does not exist)")


def distill_text(day: str, text: str, rel: str = "") -> Digest:
    """The digest of one journal page's text."""
    parsed: JournalDay = parse_journal(day, text)
    attempts = parsed.attempts
    passed = [a for a in attempts if a.outcome == "passed"]
    failed = [a for a in attempts if a.outcome != "passed"]
    ticks = sorted(set(parsed.ticks))
    span = f" (#{ticks[0]}–#{ticks[-1]})" if len(ticks) > 1 else f" (#{ticks[0]})" if ticks else ""
    out = [f"# Distill of {rel or 'journal/' + day + '.md'}", "",
           f"- ticks: {len(ticks)}{span}; attempts: {len(attempts)} — {len(passed)} passed, "
           f"{sum(a.outcome == 'failed' for a in failed)} failed, {sum(a.outcome == 'blocked' for a in failed)} blocked",
           f"- notes: {len(parsed.notes)}", ""]
    out += ["## Failed attempts", ""]
    for a in failed:
        out.append(f"- {a.task} ({a.outcome}, tick #{a.tick}, {a.time}): {a.reason or 'no reason given'}")
        for key in ("Verify Output", "Error Analysis"):
            if key in a.details:
                out.append(f"  - {key}: {a.details[key]}")
    if not failed:
        out.append("- none")
    out += ["", "## Notes", ""]
    for time, title, body in parsed.notes:
        first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
        out.append(f"- {time} — {title}" + (f": {first}" if first else ""))
    if not parsed.notes:
        out.append("- none")
    out += ["", "## Outputs", ""]
    outputs = [(a.task, a.details["Outputs"]) for a in passed if "Outputs" in a.details]
    for task, text_ in outputs:
        out.append(f"- {task}: {text_}")
    if not outputs:
        out.append("- none")
    proposals = _proposals(day, attempts, outputs)
    out += ["", "## Proposed knowledge entries", ""]
    for p in proposals:
        out.append(f"- {p.path} — {p.summary}")
    if not proposals:
        out.append("- none")
    else:
        out += ["", "Write them with `memento memory distill --date " + day + " --apply` "
                "(each write is checked: what is already known is a NOOP)."]
    return Digest(day, "\n".join(out) + "\n", proposals)


def _proposals(day: str, attempts, outputs) -> list[Proposal]:
    proposals: list[Proposal] = []
    order: list[str] = []
    for a in attempts:
        if a.outcome != "passed" and a.task not in order:
            order.append(a.task)
    for task in order:
        mine = [a for a in attempts if a.task == task]
        fails = [a for a in mine if a.outcome != "passed"]
        lines = [f"Failed attempts of {task} on {day}:", ""]
        for a in fails:
            lines.append(f"- tick #{a.tick}: {a.reason or 'no reason given'}")
            if "Error Analysis" in a.details:
                lines.append(f"  - analysis: {a.details['Error Analysis']}")
        ended = mine[-1]
        if ended.outcome == "passed":
            lines += ["", f"{task} passed later the same day (tick #{ended.tick})"
                      + (f": {ended.details['Outputs']}" if "Outputs" in ended.details else ".")]
        elif ended.outcome == "blocked":
            lines += ["", f"{task} ended the day blocked: it needs a person."]
        first = fails[0].reason or "failed"
        proposals.append(Proposal(f"knowledge/lessons/{_slug(task)}.md",
                                  f"{task}: {first}"[:160], "\n".join(lines) + "\n", task))
    for task, text in outputs:
        for sentence in re.split(r"(?<=[.;])\s+", text):
            if _DECISION_RE.search(sentence):
                proposals.append(Proposal(f"knowledge/decisions/{_slug(task)}.md",
                                          f"{task}: {sentence.strip()}"[:160],
                                          f"{sentence.strip()} ({task}, {day})\n", task))
                break
    return proposals


def distill(ws: Workspace, day: str) -> Digest:
    rel, text = read_day(ws, day)
    return distill_text(day, text, rel)


def apply(ws: Workspace, digest: Digest):
    """Write every proposal through the CRUD-checked write; returns the WriteResults."""
    from .writes import write_entry

    return [write_entry(ws, p.path, p.content, p.summary, source=p.source) for p in digest.proposals]
