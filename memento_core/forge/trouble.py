"""GitHub refused the token (SPEC §19 "Errors"): said once, a needs-you item until it works again.

A 401, or a 403 that is not a rate limit, is no passing weather like a 502: no later tick gets
past it until a person gives Memento a token that may do what it asks. So the first refusal
writes one ``⚠️ FORGE`` entry in the status log naming where the token came from
(``GITHUB_TOKEN`` or `gh auth token`, never the token) and what Memento was doing, and records
the trouble in ``.memento/forge_trouble.json``; while it lasts, later refusals write nothing
more. `memento status`, the report, ``.memento_alert`` and the dashboard show it as a
needs-you item (overview.needs_you reads :func:`current`). The first call GitHub answers again
(:func:`works`) ends it. Nothing here counts as a task's retry.

The file is Memento's own state, watched like forge_comments.json (tick/own.py): an agent
that deleted it would hide the trouble from the person.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import owned
from ..lines import clipped
from ..runlog import cron_log, utc_stamp
from ..workspace import Workspace

FILE = "forge_trouble.json"
MAX_MESSAGE = 500


def path_of(ws: Workspace) -> Path:
    main = getattr(ws, "main", None)  # a parallel worker's workspace: the trouble is the project's
    return (Workspace(main) if main else ws).memento_dir / FILE


def current(ws: Workspace) -> dict | None:
    """``{"since", "source", "doing", "message"}`` while GitHub refuses the token, else None."""
    raw = owned.read(path_of(ws))
    try:
        data = json.loads(raw.decode("utf-8")) if raw and raw != owned.NOT_A_FILE else {}
    except (UnicodeDecodeError, ValueError):
        return None
    refused = data.get("refused") if isinstance(data, dict) else None
    if not isinstance(refused, dict) or not all(isinstance(refused.get(k), str)
                                                for k in ("since", "source", "doing", "message")):
        return None
    return {k: refused[k] for k in ("since", "source", "doing", "message")}


def source_of(err) -> str:
    """Where the refused token came from, as the error says it (github.py names the source)."""
    # imported here: every tick reads the trouble (current), and github.py loads urllib and ssl
    from .github import GH_SOURCE, TOKEN_ENV

    said = getattr(err, "source", "") or ""
    if said:
        return said
    text = str(err)
    return GH_SOURCE if GH_SOURCE in text or "gh CLI" in text else TOKEN_ENV


def refused(ws: Workspace, config, err, doing: str) -> None:
    """GitHub refused the token (``err``, a ForgeAuthError) while Memento was ``doing`` something
    ("reading the checks of pull request #4"): one ⚠️ FORGE entry and the needs-you item, the
    first time only. Never raises: the tick's work is done whatever GitHub says."""
    del config  # the token's source is in the error; the parameter keeps one signature for every caller
    try:
        _refused(ws, err, doing)
    except Exception as exc:  # noqa: BLE001 - telling must never fail the tick
        try:
            cron_log(ws, f"forge: the token's refusal not recorded: {type(exc).__name__}: {clipped(str(exc), 200)}")
        except OSError:
            pass


def _refused(ws: Workspace, err, doing: str) -> None:
    source = source_of(err)
    message = clipped(" ".join(str(err).split()), MAX_MESSAGE)
    cron_log(ws, f"forge: GitHub refused the token from {source} while {doing}: {message}")
    if current(ws) is not None:
        return  # said once while the trouble lasts
    p = path_of(ws)
    p.parent.mkdir(exist_ok=True)
    doc = {"refused": {"since": utc_stamp(), "source": source, "doing": doing, "message": message}}
    owned.write(p, (json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode())
    _entry(ws, source, doing, message)


def _entry(ws: Workspace, source: str, doing: str, message: str) -> None:
    from .. import status_log

    status_log.append_entry(ws.status_path, status_log.format_entry(utc_stamp(), _tick_number(ws), [
        ("Event", f"⚠️ FORGE — GitHub refused the token from {source}"),
        ("Doing", doing),
        ("Reason", message),
        ("Action", action(source)),
    ]))


def action(source: str) -> str:
    """What a person does about a refused token from ``source``."""
    from .github import GH_SOURCE, TOKEN_ENV

    if source == GH_SOURCE:
        return ("log the gh CLI in again (`gh auth login`) with access to the repository, or set "
                f"{TOKEN_ENV}; Memento tries again each tick")
    return (f"give {TOKEN_ENV} a token that may read and write the repository's issues and pull "
            "requests; Memento tries again each tick")


def _tick_number(ws: Workspace) -> int:
    """The number of the tick now running (it wrote its number first) or the last one."""
    from ..plan.scan import parse_plan
    from ..state import TickState

    try:
        total = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path)).meta.total_ticks
    except Exception:  # noqa: BLE001 - an unreadable plan: the state's number still says which tick
        total = 0
    return max(1, int(total or 0), int(TickState.load(ws).last_tick or 0))


def works(ws: Workspace) -> None:
    """GitHub answered with the token again: the trouble, and its needs-you item, end."""
    if current(ws) is None and owned.read(path_of(ws)) is None:
        return
    try:
        owned.remove(path_of(ws))
        cron_log(ws, "forge: GitHub accepts the token again")
    except OSError:
        pass
