"""Following each phase's pull request (SPEC §19 "Checks and review"), once a tick.

For every pull request Memento opened (``PullRecord.number`` > 0) that is open, or merged while
its required checks have not passed yet, the tick asks GitHub for the checks on its head
(checks.py) and for its reviews: the record gets the verdict (``checks``, ``failing``,
``pending``) and the review state, and a review that requests changes becomes notes and sends
its tasks back to pending (reviews.py). A failing check is a needs-you item from then on
(overview.needs_you reads the record).

GitHub's trouble never reaches the tick: down or rate limited (ForgeUnavailable) defers the
rest to the next tick with a line in logs/cron.log; a refused token is trouble.refused (one
⚠️ FORGE entry and a needs-you item); another answer (a 404: the pull request gone) is said in
cron.log and the other phases go on. Nothing here counts as a task's retry.
"""

from __future__ import annotations

from ..lines import clipped
from ..plan.scan import parse_plan
from ..runlog import cron_log, utc_stamp
from ..workspace import Workspace
from . import checks, pulls, reviews, trouble
from .github import ForgeAuthError, ForgeError, ForgeUnavailable


def to_follow(record: pulls.PullRecord) -> bool:
    """Open, or merged with its checks not passed yet (a merged one that passed is landed)."""
    return record.number > 0 and (record.state == "open" or (record.state == "merged" and not record.landed))


def follow(ws: Workspace, config, client=None) -> list[str]:
    """Refresh what GitHub says of each phase's pull request; the phases whose record changed.
    Never raises (see the module docstring)."""
    try:
        return _follow(ws, config, client)
    except Exception as exc:  # noqa: BLE001 - the tick's work is done whatever GitHub says
        try:
            cron_log(ws, f"forge: pull requests not followed: {type(exc).__name__}: {clipped(str(exc), 300)}")
        except OSError:
            pass
        return []


def _follow(ws: Workspace, config, client) -> list[str]:
    from .github import client_for, forge_repo

    todo = [r for r in pulls.load(ws).values() if to_follow(r)]
    if not todo:
        return []
    changed: list[str] = []
    try:
        repo = forge_repo(ws.root, config)
        client = client if client is not None else client_for(config)
        for record in todo:
            try:
                if _refresh(ws, client, repo, record):
                    changed.append(record.phase)
            except ForgeUnavailable:
                raise
            except ForgeAuthError:
                raise
            except ForgeError as exc:  # this pull request (gone, its head unknown): the others go on
                cron_log(ws, f"forge: pull request #{record.number} ({record.phase}) not followed: "
                             f"{clipped(str(exc), 300)}")
        trouble.works(ws)
    except ForgeAuthError as exc:
        trouble.refused(ws, config, exc, f"following the pull requests of {len(todo)} phase(s)")
    except ForgeUnavailable as exc:
        cron_log(ws, f"forge: pull requests followed again next tick: {clipped(str(exc), 300)}")
    except ForgeError as exc:  # no repository to name: said, tried again next tick
        cron_log(ws, f"forge: pull requests not followed: {clipped(str(exc), 300)}")
    return changed


def _refresh(ws: Workspace, client, repo: str, record: pulls.PullRecord) -> bool:
    """One pull request's checks and reviews into its record; whether the record changed."""
    verdict = checks.verdict(client, repo, record.base, record.head) if record.head else None
    found = client.reviews(repo, record.number)
    seen = record.reviews_seen
    if record.state == "open":  # a merged pull request takes no more commits: its review is history
        plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
        applied = reviews.apply_new(ws, plan, record, found,
                                    lambda rid: client.review_comments(repo, record.number, rid))
        seen = applied.reviews_seen
    changes = {"review": reviews.review_state(found), "reviews_seen": seen}
    if verdict is not None:
        changes.update(checks=verdict.checks, failing=verdict.failing, pending=verdict.pending)
    current = pulls.load(ws).get(record.phase)
    if current is None:
        return False  # the record went meanwhile (a person's reset of the phase): nothing to write into
    differs = any(getattr(current, k) != v for k, v in changes.items())
    pulls.update(ws, record.phase, **changes, updated=utc_stamp())
    if differs:
        cron_log(ws, f"forge: pull request #{record.number} ({record.phase}): checks {changes.get('checks', current.checks)}, "
                     f"review {changes['review']}")
    return differs
