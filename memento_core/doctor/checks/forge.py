"""The forge check (SPEC §19): status comments that wait to be posted on GitHub issues."""

from __future__ import annotations

from ...forge import comments
from ..context import Context
from ..findings import WARNING, CheckResult, Finding


def check_forge(c: Context) -> CheckResult:
    data = comments.load(c.ws)
    waiting = data["pending"]
    if not waiting:
        return "forge: no status comment waits for GitHub" if data["seen"] else "forge: no GitHub issues imported"
    issues = ", ".join(sorted({f"{w['repo']}#{w['number']}" for w in waiting}))
    why = f"; the last try failed ({data.get('last_error_at') or '?'}): {data['last_error']}" \
        if data.get("last_error") else ""
    return [Finding(WARNING, "forge", f"{len(waiting)} status comment(s) wait to be posted on GitHub ({issues}), "
                    f"the oldest since {waiting[0].get('queued') or '?'}{why}; each tick tries again",
                    c.rel(comments.state_path(c.ws)))]
