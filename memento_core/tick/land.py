"""The tick's part of ``[forge] land = "pr"`` (SPEC §19 "Pull requests out"): a branch per phase,
one pull request per finished phase, later phases waiting for the merge.

- :func:`before_pick` (after the dirty-tree check, step 5): each open pull request's state from
  GitHub; on the branch of a phase whose pull request is merged, the work tree moves to the base
  branch, fetched and fast-forwarded to the remote's (never anything else: a local base with
  commits of its own is said, and the tick waits for a person).
- :func:`pick_verdict` (step 6, through pick.pick_unheld): the phases that wait on a pull request
  are passed over; when only they have work, the verdict names the pull request: WAITING (exit
  0, a line in logs/cron.log), or a closed pull request (a status entry once, exit 1).
- :func:`enter` (after the pick, before the claim): the work tree onto the picked task's phase
  branch, made from the base branch (``stack = true``: from the finished phase's branch) the first
  time. Every commit of the phase (the task's, the plan's, the status log's) goes there.
- :func:`after_tick` (with the forge's comments, once the tick's commits are final): each
  finished phase's branch pushed and its pull request opened or updated. GitHub down or rate
  limited: deferred to the next tick, never a task's retry; the token refused: said, tried again
  once it works; a refused push: said in the remote's words, a status entry per change.

Memento's own record is ``.memento/forge_pulls.json`` (forge/pulls.py), put back after every agent
(own.py): an agent that wrote "merged" there would start the next phase on unreviewed work.
"""

from __future__ import annotations

from ..errors import EXIT_ATTENTION, EXIT_OK, MementoError
from ..forge import pulls
from ..lines import clipped
from ..plan.model import Plan, Task
from ..runlog import Outcome, cron_log, utc_stamp
from ..scheduler import COMPLETE, WAITING, Verdict
from .context import TickContext

PR_CLOSED = "pr_closed"  # a Verdict kind: only phases held by a pull request closed without a merge are left
CHECKS_FAILING = "checks_failing"  # a Verdict kind: what is left waits on a pull request whose required checks fail
MAX_MOVES = 3  # a tick re-picks after moving onto a branch; never more than this


def enabled(ctx: TickContext) -> bool:
    return ctx.config is not None and ctx.config.forge_land == "pr"


# ---------------------------------------------------------------- before the pick


def before_pick(ctx: TickContext) -> Outcome | None:
    """Refresh the records; off a merged phase's branch onto the base brought up to date. An
    Outcome when the base cannot be brought forward (the tick waits for a person)."""
    if not enabled(ctx):
        return None
    records = pulls.load(ctx.ws)
    if not records:
        return None
    # The forge's branches and landing: imported only with land = "pr" and a record to act on.
    from ..forge import phase_branch as pb
    from ..forge.landing import root_base

    records = _refresh(ctx, records)
    records = _merged_by_hand(ctx, records)
    here = pb.current(ctx.root)
    rec = next((r for r in records.values() if r.branch == here), None)
    merged = [r for r in records.values() if r.landed]
    if rec is None and merged and here in {root_base(records, r) for r in merged}:
        rec = merged[-1]  # on the base already: brought up to the merges all the same
    if rec is None or not rec.landed:
        return None
    base = root_base(records, rec)
    try:
        why = pb.bring_base_up(ctx.root, ctx.config.forge_remote, base)
    except MementoError as exc:  # the remote out of reach: passing weather, tried again next tick
        cron_log(ctx.ws, f"forge: {base} not brought up to {ctx.config.forge_remote}/{base}, tried again next "
                         f"tick: {clipped(str(exc), 300)}")
        return None if here == base else Outcome(EXIT_OK, f"waiting for the remote: {clipped(str(exc), 300)}",
                                                   ctx.number)
    if not why:
        if here != base:
            cron_log(ctx.ws, f"forge: pull request #{rec.number} ({rec.phase}) is merged; the work tree is on "
                             f"{base}, up to date with {ctx.config.forge_remote}/{base}")
        return None
    signature = f"base:{why}"
    if ctx.state.last_event != signature:
        ctx.event("⚠️ BASE BRANCH NOT UPDATED — the next phase waits", [("Phase merged", f"{rec.phase} (#{rec.number})"),
                                                                        ("Reason", why)])
        ctx.state.last_event = signature
        _commit_entry(ctx, "memento: the base branch could not be brought forward")
    cron_log(ctx.ws, f"forge: {why}")
    ctx.state.save(ctx.ws)
    return Outcome(EXIT_ATTENTION, f"the next phase waits: {why}", ctx.number)


def _refresh(ctx: TickContext, records: dict) -> dict:
    """Each record with an open (or closed) pull request, as GitHub says it now. Never raises."""
    from ..forge import trouble
    from ..forge.github import ForgeAuthError, ForgeError, ForgeUnavailable, client_for, forge_repo
    from ..forge.landing import refresh

    asked = [r for r in records.values() if r.number and r.state in ("open", "closed")]
    if not asked:
        return records
    try:
        client, repo = client_for(ctx.config), forge_repo(ctx.root, ctx.config)
        for rec in asked:
            records[rec.phase] = fresh = refresh(client, repo, rec)
            if fresh.state != rec.state:
                cron_log(ctx.ws, f"forge: pull request #{rec.number} ({rec.phase}) is {fresh.state} on GitHub")
            pulls.update(ctx.ws, rec.phase, state=fresh.state, url=fresh.url, updated=fresh.updated)
    except ForgeUnavailable as exc:
        cron_log(ctx.ws, f"forge: the pull requests' state was not read, tried again next tick: {clipped(str(exc), 300)}")
    except ForgeAuthError as exc:
        _auth_refused(ctx, exc, "reading the state of the pull requests")
    except ForgeError as exc:
        cron_log(ctx.ws, f"forge: the pull requests' state was not read: {clipped(str(exc), 300)}")
    else:
        trouble.works(ctx.ws)
    return records


def _merged_by_hand(ctx: TickContext, records: dict) -> dict:
    """A pull request closed without a merge whose branch a person merged into the base themselves
    (on the remote): the phase is merged all the same."""
    from ..forge import phase_branch as pb
    from ..forge.landing import root_base

    for rec in [r for r in records.values() if r.state == "closed" and r.head]:
        base = root_base(records, rec)
        try:
            theirs = pb.fetch_base(ctx.root, ctx.config.forge_remote, base)
        except MementoError as exc:
            cron_log(ctx.ws, f"forge: {exc}")
            continue
        if theirs and pb.is_ancestor(ctx.root, rec.head, theirs):
            records[rec.phase] = pulls.update(ctx.ws, rec.phase, state="merged", updated=utc_stamp())
            cron_log(ctx.ws, f"forge: {rec.branch} is in {ctx.config.forge_remote}/{base}: {rec.phase} is merged "
                             f"(pull request #{rec.number} was closed, the branch merged by hand)")
    return records


# ---------------------------------------------------------------- the pick


def pick_verdict(ctx: TickContext, plan: Plan) -> tuple[frozenset[str], Verdict | None]:
    """(the tasks the pick passes over, the verdict when only they could run)."""
    if not enabled(ctx):
        return frozenset(), None
    from ..forge.landing import passed_over

    skipped, rec = passed_over(plan, pulls.load(ctx.ws), ctx.config.forge_stack)
    return skipped, (_waiting(rec) if rec is not None else None)


def unlanded(ctx: TickContext, verdict: Verdict) -> Verdict:
    """Every task done is not ALL TASKS COMPLETE while a phase's pull request is not merged: the
    verdict waits on it."""
    if not enabled(ctx) or verdict.kind != COMPLETE:
        return verdict
    from ..forge.landing import unmerged

    rec = unmerged(pulls.load(ctx.ws))
    return _waiting(rec) if rec is not None else verdict


def _waiting(rec) -> Verdict:
    from ..forge.landing import wait_message

    kind = PR_CLOSED if rec.state == "closed" else CHECKS_FAILING if rec.checks == "failing" else WAITING
    return Verdict(kind, phase=rec.phase, message=wait_message(rec), tasks=(f"#{rec.number}",) if rec.number else ())


# ---------------------------------------------------------------- the phase's branch


def enter(ctx: TickContext, plan: Plan, task: Task) -> bool | Outcome:
    """The work tree on ``task``'s phase branch (made the first time); True when HEAD moved to
    another commit (the plan there may say otherwise: pick again), an Outcome when git refused."""
    if not enabled(ctx) or task.phase is None:
        return False
    from ..forge import phase_branch as pb
    from ..forge.landing import WORKING

    records = pulls.load(ctx.ws)
    rec = records.get(task.phase)
    here = pb.current(ctx.root)
    before = pb.tip(ctx.root, "HEAD")
    try:
        if rec is not None and rec.state in WORKING:
            if here != rec.branch:
                pb.switch(ctx.root, rec.branch)
        else:
            if here is None and not records:
                raise MementoError('HEAD is detached: land = "pr" starts each phase from the branch the work tree '
                                   "is on; check out the base branch (`git switch main`)")
            start = _start_of(ctx, plan, records, here)
            phase = next(p for p in plan.phases if p.id == task.phase)
            name = pb.branch_name(phase.title or phase.id, pb.local_branches(ctx.root))
            pb.switch(ctx.root, name, start=start)
            records[task.phase] = pulls.PullRecord(task.phase, name, start, updated=utc_stamp())
            pulls.save(ctx.ws, records)
            cron_log(ctx.ws, f"forge: {task.phase} is worked on branch {name}, from {start}")
    except MementoError as exc:
        cron_log(ctx.ws, f"forge: {exc}")
        return Outcome(EXIT_ATTENTION, f"{task.phase} cannot be worked on its own branch: {exc}", ctx.number)
    return pb.tip(ctx.root, "HEAD") != before


def _start_of(ctx: TickContext, plan: Plan, records: dict, here: str | None) -> str:
    """Where a new phase's branch starts: with ``stack``, the finished, unmerged phase's branch;
    else the base branch (the records' own, or the branch the work tree is on)."""
    from ..forge.landing import WORKING, finished, root_base

    if ctx.config.forge_stack:
        below = [r for r in records.values() if not r.landed and r.state in WORKING and finished(plan, r.phase)]
        if below:
            return next((r.branch for r in below if r.branch == here), below[-1].branch)
    if records:
        return root_base(records, next(iter(records.values())))
    return here or "HEAD"


# ---------------------------------------------------------------- after the tick


def after_tick(ctx: TickContext) -> None:
    """Push each finished phase's branch and open or update its pull request. Never raises: the
    tick's work is committed whatever GitHub or the remote says."""
    if not enabled(ctx):
        return
    try:
        _land_finished(ctx)
    except Exception as exc:  # noqa: BLE001 - said, and tried again by the next tick
        cron_log(ctx.ws, f"forge: the pull requests were not brought up to date: {type(exc).__name__}: "
                         f"{clipped(str(exc), 300)}")


def _land_finished(ctx: TickContext) -> None:
    from ..forge import phase_branch as pb
    from ..forge.landing import WORKING, finished, plan_at

    for rec in list(pulls.load(ctx.ws).values()):
        if rec.state not in WORKING:
            continue
        sha = pb.tip(ctx.root, f"refs/heads/{rec.branch}")
        plan = plan_at(ctx.root, sha) if sha else None
        if plan is None or not finished(plan, rec.phase):
            continue
        if rec.number and rec.head == sha:
            continue  # pushed and its pull request up to date
        _land(ctx, rec, sha, plan)


def _land(ctx: TickContext, rec, sha: str, plan: Plan) -> None:
    from ..forge import landing, trouble
    from ..forge.github import ForgeAuthError, ForgeError, ForgeUnavailable, client_for, forge_repo
    from ..forge.landing import root_base

    remote = ctx.config.forge_remote
    if rec.head != sha:
        try:
            landing.push(ctx.root, remote, rec, sha)
        except landing.PushRefused as exc:
            _said(ctx, rec, f"the remote {remote!r} refused the push of {rec.branch}: {exc.said}",
                  "⚠️ PUSH REFUSED — the phase's branch was not pushed")
            return
        except MementoError as exc:
            _said(ctx, rec, str(exc), "⚠️ PUSH FAILED — the phase's branch was not pushed")
            return
        rec = pulls.update(ctx.ws, rec.phase, head=sha, updated=utc_stamp())
        cron_log(ctx.ws, f"forge: {rec.branch} pushed to {remote} at {sha[:12]}")
    try:
        client, repo = client_for(ctx.config), forge_repo(ctx.root, ctx.config)
        phase = next((p for p in plan.phases if p.id == rec.phase), None)
        title = landing.clipped_title(phase.title if phase is not None else rec.phase)
        records = pulls.load(ctx.ws)
        opened = landing.open_or_update(client, repo, rec, title, landing.body(ctx.ws, plan, rec, repo),
                                        root_base(records, rec))
    except ForgeUnavailable as exc:
        pulls.update(ctx.ws, rec.phase, error=clipped(str(exc), 600))
        cron_log(ctx.ws, f"forge: the pull request of {rec.phase} waits for GitHub, tried again next tick: "
                         f"{clipped(str(exc), 300)}")
        return
    except ForgeAuthError as exc:
        pulls.update(ctx.ws, rec.phase, error=clipped(str(exc), 600))
        _auth_refused(ctx, exc, f"opening the pull request of {rec.phase}", commit=True)
        return
    except ForgeError as exc:
        _said(ctx, rec, f"GitHub did not take the pull request of {rec.branch}: {exc}",
              "⚠️ PULL REQUEST NOT OPENED")
        return
    trouble.works(ctx.ws)
    pulls.update(ctx.ws, rec.phase, number=opened.number, url=opened.url, state=opened.state, error="",
                 updated=opened.updated)
    verb = "opened" if not rec.number else "updated"
    cron_log(ctx.ws, f"forge: pull request #{opened.number} ({rec.phase}) {verb}: {opened.url}")


def _said(ctx: TickContext, rec, error: str, event: str) -> None:
    """A push or pull request that did not happen: the record's error, a cron.log line, and a
    status entry when the error is new (not every tick while it lasts)."""
    error = clipped(error, 600)
    cron_log(ctx.ws, f"forge: {error}; tried again next tick")
    if error == rec.error:
        return
    pulls.update(ctx.ws, rec.phase, error=error, updated=utc_stamp())
    ctx.event(event, [("Phase", rec.phase), ("Branch", rec.branch), ("Reason", error),
                      ("Action", "nothing is marked done that was not; the next tick tries again")])
    _commit_entry(ctx, f"memento: {rec.phase} not pushed")


def _auth_refused(ctx: TickContext, exc, doing: str, *, commit: bool = False) -> None:
    """GitHub refused the token: one ⚠️ FORGE entry and the needs-you item (forge/trouble.py), no
    retry counted, nothing marked done; ``commit``: after the tick's own commit, the entry's."""
    from ..forge import trouble

    cron_log(ctx.ws, f"forge: could not {doing}; nothing was marked done, tried again once the token works")
    trouble.refused(ctx.ws, ctx.config, exc, doing)
    if commit:
        _commit_entry(ctx, "memento: forge: the token refused")


def _commit_entry(ctx: TickContext, message: str) -> None:
    ctx.commit([ctx.ws.rel(ctx.ws.status_path), ctx.ws.rel(ctx.ws.plan_path)], message)
