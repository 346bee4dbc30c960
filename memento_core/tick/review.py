"""The acceptance gate (SPEC §16): after verify passes, a reviewer agent judges the task's `accept:` criteria.

With ``[review]`` in memento.toml, a task that has ``accept:`` criteria is
reviewed before its commit: the reviewer (confined like the worker, the
project read-only but ``.memento/worker/``) gets the task, its numbered
criteria, verify's output and the attempt's diff, and writes
``.memento/worker/review.md`` (``Verdict: PASS|FAIL``, one finding per
criterion). review_file.py reads it as a model writes it (imported only where
a review ran); a review it still cannot read (none, garbled, a criterion
without a finding or judged both ways, a verdict its findings contradict) is
the reviewer's failure, not the task's: the reviewer is asked once more in the same tick, then the attempt is
set aside (no retry, no round); it never blocks the task. A reviewer that changed anything (the work tree, git, Memento's
documents) fails the review; the attempt's rollback undoes it. A FAIL fails the
attempt with ``review: <first finding>``; its findings wait in
``.memento/reviews/ID.md`` (Workspace.reviews_dir: a parallel worker's are the
project's) and in the entry's ``Findings`` field for the next attempt's prompt
(prompt.py); after ``max_rounds`` failed reviews (counted along the task's
retry numbers) the task is blocked for a person. A reviewer that could not
review (its run failed) sets the attempt aside: no retry, no round. It runs
through limits.run_agent (rate limit, usage, budget) with ``[review] timeout``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from .. import agents, status_log
from ..git.changes import changes_since
from ..git.objects import hash_blobs, show_file
from ..git.run import run_git
from ..lines import read_bytes, read_regular_or_none, safe_text
from ..locks import atomic_write_text
from ..markdown.blocks import fenced
from ..prompt import review_findings_path, task_block
from ..workspace import KEPT_DOCS
from . import confine, limits, own
from .context import TickContext, append_log, unlink
from .record import last_line

if TYPE_CHECKING:
    from .review_file import Review

REVIEW_SYSTEM_PROMPT = "scripts/review_system_prompt.md"
REVIEW_FILE = "review.md"
MAX_DIFF_CHARS = 60_000
MAX_REASON = 300
MAX_FINDINGS = 2000  # the entry's Findings field (a fleet's hosts read it: .memento/reviews/ does not travel)


@dataclass(frozen=True)
class Outcome:
    """What the gate decided: the entry's ``Review`` field, and whether the task blocks now."""

    summary: str  # "PASS (3/3 criteria)", "FAIL (1/3 criteria)", "FAIL (no valid review)"
    blocks: bool = False
    status: str = ""  # the entry's Status when it blocks, or when the reviewer could not review
    verify_output: str = ""  # the entry's Verify Output: verify passed before the review
    uncounted: bool = False  # the reviewer itself failed: not the task's fault, no retry, no round
    findings: str = ""  # the entry's Findings on a FAIL: one line, bounded (the prompt's when the file is not here)

    @property
    def set_aside(self) -> str:
        """The Status of an attempt set aside because the reviewer failed, else ''."""
        return self.status if self.uncounted else ""


REVIEWER_FAILED = "⏹ SET ASIDE (the reviewer could not review; no retry counted)"


# ---------------------------------------------------------------- the gate


def review_attempt(ctx: TickContext, at, touched, verify_tail: str, *, run, guards) -> str:
    """'' when the attempt may be committed (passed, or no review for it), else the failure reason.

    ``run`` is agent.run_agent and ``guards`` observe.check_guards (the tick's own steps).
    Sets ``at.review`` (an :class:`Outcome`) whenever a review ran.
    """
    settings, task = ctx.config.review, at.task
    if settings is None or not task.accept or ctx.interrupted:
        return ""
    at.beat.update(stage="reviewing")
    count = len(task.accept)
    prompt_file, system_file = write_review_prompt(ctx, at, touched, verify_tail, settings.preset)
    append_log(ctx.log_path, f"\n[memento] review {task.id}: {count} criteria, reviewer {settings.preset}\n")
    unreadable, asked = "", read_bytes(prompt_file).decode("utf-8", "replace")  # as written, whatever a run did
    for ask in (1, 2):  # a review that cannot be read is asked for once more, in this tick
        if ask == 2:
            _ask_again(prompt_file, asked, unreadable)
        outcome = _one_review(ctx, at, prompt_file, system_file, settings, run, guards, verify_tail)
        if isinstance(outcome, str):
            return outcome
        failed, review, reviewer = outcome
        if failed:
            return _reviewer_failed(ctx, at, failed, reviewer, verify_tail)
        if review.problem:
            unreadable = review.problem
            append_log(ctx.log_path, f"[memento] review {task.id}: the review cannot be read "
                                     f"({safe_text(unreadable)}){'; asking once more' if ask == 1 else ''}\n")
            continue
        return _decide(ctx, at, review, count, settings.max_rounds, verify_tail) \
            or limits.over_task_budget(ctx, at.agent.usage if at.agent is not None else None)
    over = limits.over_task_budget(ctx, at.agent.usage if at.agent is not None else None)
    return _reviewer_failed(ctx, at, over or f"its review could not be read, asked twice: {unreadable}", None,
                            verify_tail, summary="NONE (the review could not be read)")


def _one_review(ctx: TickContext, at, prompt_file: Path, system_file: Path, settings, run, guards,
                verify_tail: str):
    """One run of the reviewer: (why its run failed or '', its review, its outcome), or the reason
    the attempt fails ('' when interrupted; a reviewer that changed something fails the review)."""
    from .review_file import Review, read_review  # review.md's reader: only where a review ran

    task, count = at.task, len(at.task.accept)
    report = ctx.ws.worker_dir / REVIEW_FILE
    unlink(report)  # whatever the worker (or a first review) left there is never read as the review
    before = _fingerprint(ctx, at)
    worker = at.agent
    try:
        failed = _run_reviewer(ctx, at, prompt_file, system_file, settings, run)
    finally:
        reviewer, at.agent = at.agent, _together(worker, at.agent)  # the entry's Usage: every agent's
    if ctx.interrupted:  # SIGTERM: the attempt is interrupted (no retry), not reviewed
        unlink(report)
        return ""
    changed = _changes_by_reviewer(ctx, at, before, guards)
    if changed:
        unlink(report)
        review = Review(problem=f"{changed} (a review may change nothing; rolled back)")
        return _decide(ctx, at, review, count, settings.max_rounds, verify_tail)
    review = read_review(report, task.accept) if not failed else Review()
    if not failed:  # a reviewer that exited 0 with a rate limit in its last words: its review decides
        failed = limits.judge_suspect(ctx, reviewer, "no valid review" if review.problem else "")
        failed = failed if failed.startswith("rate limited") else ""
        at.agent = _together(worker, reviewer)
    unlink(report)
    return failed, review, reviewer


def _ask_again(prompt_file: Path, asked: str, problem: str) -> None:
    """The reviewer's prompt (``asked``) once more, saying why its review could not be read."""
    text = asked + ("\n## Your last review could not be read\n\n"
                    f"Memento could not read the review you wrote: {safe_text(problem)}. Write it again: the "
                    "line `Verdict: PASS` or `Verdict: FAIL`, then for each criterion exactly one line "
                    "`- [PASS] N: finding` or `- [FAIL] N: finding`.\n")
    atomic_write_text(prompt_file, text)


def _together(worker, reviewer):
    """One AgentOutcome for the attempt: the usage of both; the reviewer's rate limit, if any."""
    if worker is None or reviewer is None or worker is reviewer:
        return reviewer or worker
    usage = reviewer.usage if worker.usage is None else worker.usage if reviewer.usage is None \
        else worker.usage + reviewer.usage
    return limits.AgentOutcome(usage, reviewer.limit, reviewer.preset, reviewer.until,
                               [*worker.fallbacks, *reviewer.fallbacks])


def _reviewer_failed(ctx: TickContext, at, failed: str, reviewer, verify_tail: str, *,
                     summary: str = "NONE (the reviewer failed)") -> str:
    """The reviewer could not review (could not start, timed out, exited non-zero, was refused):
    not the task's fault. A rate limit sets the attempt aside like the worker's; the task's budget
    fails it like the worker's; anything else sets it aside, no retry and no review round counted."""
    append_log(ctx.log_path, f"[memento] review {at.task.id}: the reviewer failed: {safe_text(failed)}\n")
    if failed.startswith("task budget exceeded") or (reviewer is not None and reviewer.limit is not None):
        return failed
    verify_output = f"`{last_line(verify_tail) or '(no output)'}` (exit code 0)"
    at.review = Outcome(summary, status=REVIEWER_FAILED, verify_output=verify_output,
                        uncounted=True)
    return "reviewer failed: " + " ".join(safe_text(failed).split())[:MAX_REASON]


def _decide(ctx: TickContext, at, review: Review, count: int, max_rounds: int, verify_tail: str) -> str:
    task = at.task
    met = sum(1 for _, ok, _ in review.findings if ok)
    summary = f"{'PASS' if review.passed else 'FAIL'} ({met}/{count} criteria)" if not review.problem \
        else "FAIL (no valid review)"
    findings_file = review_findings_path(ctx.ws, task.id)
    verify_output = f"`{last_line(verify_tail) or '(no output)'}` (exit code 0)"  # verify passed
    if review.passed:
        unlink(findings_file)
        append_log(ctx.log_path, f"[memento] review {task.id}: {summary}\n")
        at.review = Outcome(summary, verify_output=verify_output)
        return ""
    reason = "review: " + _first_finding(review, task.accept)
    atomic_write_text(findings_file, _findings_text(review, task.accept, ctx.stamp))
    rounds = prior_review_failures(ctx, task) + 1
    blocks = rounds >= max_rounds
    retry = f"retry {task.retries + 1}/{ctx.plan().meta.max_retries}"  # the walk back below reads it
    status = f"🚫 BLOCKED (review failed {rounds}/{max_rounds}, {retry} — needs a person)" if blocks else ""
    append_log(ctx.log_path, f"[memento] review {task.id}: {summary} (round {rounds}/{max_rounds}): "
                             f"{safe_text(reason)}\n")
    at.review = Outcome(summary, blocks, status, verify_output, findings=_findings_line(review, task.accept))
    return reason


def prior_review_failures(ctx: TickContext, task) -> int:
    """Failed reviews since the task was last reset (by a person, or by passing): among the counted
    attempts numbered ``retries``, ``retries - 1`` … 1, newest first, the status archive included (a
    rotation never hides a round; an older streak, before a reset, is never counted)."""
    if not task.retries:
        return 0
    entries = status_log.parse_status(ctx.ws.status_path)
    rounds, want = _rounds_back(entries, task.id, task.retries)
    if want:  # the streak goes back further than TICK_STATUS.md: into the rotated archive
        main = getattr(ctx.ws, "main", None) or ctx.root  # a parallel worker's: the project's archive
        archive = main / ctx.plan().meta.status_archive_dir
        older, _ = _rounds_back(status_log.iter_status_archive(archive), task.id, want)
        rounds += older
    return rounds


_SAID_RE = re.compile(r"^(?P<n>[0-9]{1,6})/[0-9]{1,6}")


def _rounds_back(entries, task_id: str, want: int) -> tuple[int, int]:
    """(review failures, the retry number still looked for; 0: the streak's start was found)."""
    rounds = 0
    for entry in reversed(list(entries)):
        if entry.task_id != task_id:
            continue
        if entry.status == "SUCCESS":
            return rounds, 0
        said = entry.retry  # "❌ FAILED (retry 2/5)"; a stale reset's event says "Retries: 2/5"
        stale = _SAID_RE.match(entry.field("Retries") or "") if said is None else None
        number = said[0] if said is not None else int(stale.group("n")) if stale else None
        if number is None:
            continue  # set aside, interrupted, rate limited: no retry counted
        if number != want:
            return rounds, 0  # another streak: the task was reset since
        rounds += entry.status in ("FAILED", "BLOCKED") and (entry.field("Reason") or "").startswith("review:")
        want -= 1
        if not want:
            return rounds, 0
    return rounds, want


def _first_finding(review: Review, criteria) -> str:
    if review.problem:
        text = review.problem
    else:
        n, _, finding = next(f for f in review.findings if not f[1])
        text = f"criterion {n} ({criteria[n - 1]}) not met: {finding}"
    text = " ".join(safe_text(text).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def _findings_text(review: Review, criteria, stamp: str) -> str:
    out = [f"Review of the attempt at {stamp}: FAIL", ""]
    if review.problem:
        out.append(f"- no valid review: {review.problem}")
    for n, ok, finding in review.findings:
        out.append(f"- [{'PASS' if ok else 'FAIL'}] {n}: {criteria[n - 1]} — {finding}")
    return "\n".join(out) + "\n"


def _findings_line(review: Review, criteria) -> str:
    """The findings as the entry's one-line field: ``[FAIL] 1: criterion — finding [PASS] 2: …``."""
    items = [f"no valid review: {review.problem}"] if review.problem else []
    items += [f"[{'PASS' if ok else 'FAIL'}] {n}: {criteria[n - 1]} — {finding}" for n, ok, finding in review.findings]
    text = " ".join(safe_text(" ".join(items)).split())
    return text if len(text) <= MAX_FINDINGS else text[: MAX_FINDINGS - 1] + "…"


def entry_fields(fields: list[tuple[str, str]], outcome: Outcome | None) -> list[tuple[str, str]]:
    """The status entry's fields with ``Review`` after ``Verify Output`` (unchanged without a review)."""
    if outcome is None:
        return fields
    review = [("Review", outcome.summary)] + ([("Findings", outcome.findings)] if outcome.findings else [])
    names = [name for name, _ in fields]
    if "Verify Output" not in names:
        return [*fields, *review]
    at = names.index("Verify Output")
    verify = outcome.verify_output or fields[at][1]
    return [*fields[:at], ("Verify Output", verify), *review, *fields[at + 1:]]


# ---------------------------------------------------------------- the reviewer's run


def _run_reviewer(ctx: TickContext, at, prompt_file: Path, system_file: Path, settings, run) -> str:
    """Run the reviewer confined like the worker, the project read-only, through limits.run_agent
    (its rate limit, usage and the task's budget, as the worker's): '' or why it failed."""
    task, saved = at.task, ctx.config
    ctx.config = saved.as_agent(settings)  # the sandbox and the invocation read the reviewer's preset
    try:
        at.agent = limits.AgentOutcome()
        wrap, refused = confine.prepare(ctx, task, at.snap.untracked, extra_guard=_top_level(ctx.root),
                                        role="reviewer")
        if refused:
            return refused

        def one(ctx, task, prompt, beat):
            return run(ctx, task, prompt, beat, wrap, system_prompt=system_file, context_files=(),
                       timeout=settings.timeout)

        # [review] has no fallback (Config.as_agent): limits never rolls the worker's work back for one.
        reason, _ = limits.run_agent(ctx, at, prompt_file, one, lambda _ctx, _task: (prompt_file, []))
        return reason
    finally:
        ctx.config = saved


def _top_level(root: Path) -> list[str]:
    """Every entry of the project's top folder: read-only for the reviewer (.memento/worker/ stays writable)."""
    try:
        return sorted(p.name for p in Path(root).iterdir() if p.name not in (".memento",))
    except OSError:
        return []


def _fingerprint(ctx: TickContext, at) -> tuple:
    """What a reviewer must leave as it is: the work tree's changes and their contents, and the
    documents only Memento writes (a person's notes are the guards' business)."""
    root, ws = ctx.root, ctx.ws
    changes = changes_since(root, at.snap.base, set(at.snap.untracked))
    blobs = hash_blobs(root, [c.path for c in changes if c.path not in KEPT_DOCS and not c.scratch])
    plan_text = read_bytes(ws.plan_path).decode("utf-8", errors="replace")
    docs = tuple(_read(p) for p in (ws.status_path, ws.map_path, ws.checkpoint_path))
    return blobs, docs, task_block(plan_text, at.task)


def _changes_by_reviewer(ctx: TickContext, at, before: tuple, guards) -> str:
    """'' or what the reviewer changed; git is put back by the guards, the tree by the rollback."""
    left = own.specials_reason(own.remove_specials(ctx.ws))  # a FIFO in .memento/worker/…
    verdict = guards(ctx, ctx.plan(), at, after_verify=True)
    if left:
        return left.replace("the agent left", "the reviewer left", 1)
    after = _fingerprint(ctx, at)
    changed = sorted(p for p in set(before[0]) | set(after[0]) if before[0].get(p) != after[0].get(p))
    names = ["docs/TICK_STATUS.md", "docs/PROJECT_MAP.md", "docs/CURRENT_STATE.md"]
    changed += [n for n, a, b in zip(names, before[1], after[1], strict=True) if a != b]
    if before[2] != after[2]:
        changed.append(f"{at.task.id}'s block in docs/MASTER_PLAN.md")
    if changed:
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        return "the reviewer changed " + ", ".join(safe_text(c) for c in changed[:5]) + more
    if verdict.reason:  # git, links, notes: the guards' words, about the reviewer now
        return "the reviewer broke a rule: " + verdict.reason.replace("verify changed", "it changed")
    return ""


def _read(path: Path) -> bytes | None:
    return read_regular_or_none(path, follow=True)  # a FIFO the reviewer made is never opened


# ---------------------------------------------------------------- the reviewer's prompt


def system_prompt_text(ctx: TickContext, base: str | None) -> str:
    """scripts/review_system_prompt.md as committed (the worker's uncommitted edits never reach the
    reviewer), else the bundled template."""
    data = show_file(ctx.root, base, REVIEW_SYSTEM_PROMPT) if base else None
    if data is not None:
        return data.decode("utf-8", "replace")
    return resources.files("memento_core").joinpath("templates", "review_system_prompt.md").read_text("utf-8")


def write_review_prompt(ctx: TickContext, at, touched, verify_tail: str, preset: str) -> tuple[Path, Path]:
    """``.memento/prompts/ID.review.md`` and the system prompt beside it; the paths."""
    ws, task = ctx.ws, at.task
    system = system_prompt_text(ctx, at.snap.base)
    system_file = ws.memento_dir / "prompts" / "review_system_prompt.md"
    atomic_write_text(system_file, system)
    spec = agents.PRESETS.get(preset)
    separate = spec is not None and spec.separate_system_prompt
    text = review_prompt(ctx, at, touched, verify_tail)
    if not separate:
        text = system.rstrip() + "\n\n---\n\n" + text
    prompt_file = ws.memento_dir / "prompts" / f"{task.id}.review.md"
    atomic_write_text(prompt_file, text)
    append_log(ctx.log_path, f"[memento] review prompt {ws.rel(prompt_file)} ({text.count(chr(10))} lines)\n")
    return prompt_file, system_file


def review_prompt(ctx: TickContext, at, touched, verify_tail: str) -> str:
    ws, task = ctx.ws, at.task
    plan_text = read_bytes(ws.plan_path).decode("utf-8", errors="replace")
    out = [
        f"# Review: {task.id} {task.title}",
        "",
        f"Project: {ctx.plan().title}. Work tree: `{ws.root}`. A worker has done this task and its verify",
        "command passed. Judge every acceptance criterion below against the diff and the files.",
        f"Change nothing; write your report to `{ws.rel(ws.worker_dir / REVIEW_FILE)}`.",
        "",
        "## The task",
        "",
        *fenced(task_block(plan_text, task), "markdown"),
        "",
        f"## Acceptance criteria ({len(task.accept)}) — judge each, by number",
        "",
        *(f"{n}. {text}" for n, text in enumerate(task.accept, 1)),
        "",
        "## Verify",
        "",
        f"`{task.verify}` exited 0. The end of its output:",
        "",
        *fenced("\n".join(verify_tail.strip().splitlines()[-30:]) or "(no output)", "text"),
        "",
        f"## The diff of this attempt ({len(touched)} files)",
        "",
        *fenced(attempt_diff(ctx.root, at.snap.base, touched) or "(no changes)", "diff"),
        "",
        "## Your report",
        "",
        f"Write `{ws.rel(ws.worker_dir / REVIEW_FILE)}`: first line `Verdict: PASS` or `Verdict: FAIL`, then one",
        "line per criterion: `- [PASS] N: finding` or `- [FAIL] N: finding`.",
    ]
    return "\n".join(out) + "\n"


def attempt_diff(root: Path, base: str | None, touched) -> str:
    """The work tree against ``base`` for the touched paths; new files in full (at most MAX_DIFF_CHARS)."""
    parts: list[str] = []
    size = 0
    for change in touched:
        if change.kind == "created" or base is None:
            args = ["diff", "--no-color", "--no-index", "--", "/dev/null", change.path]
        else:
            args = ["diff", "--no-color", base, "--", change.path]
        text = run_git(root, args, check=False).stdout.decode("utf-8", "replace")
        parts.append(text.rstrip("\n"))
        size += len(text)
        if size > MAX_DIFF_CHARS:
            parts.append(f"… (the diff is longer than {MAX_DIFF_CHARS} characters; read the files)")
            break
    return "\n".join(p for p in parts if p)[: MAX_DIFF_CHARS + 200]
