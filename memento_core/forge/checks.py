"""A pull request's required checks (SPEC §19 "Checks and review"): which checks count, and what
they say together.

The checks that count are those the base branch's protection requires, and those its rules
(rulesets) require; when neither names one, every check on the head commit counts. Check runs
(GitHub Actions, apps) and commit statuses (older CI services) both count, matched by name (a
check run's ``name``, a status's ``context``). A required check that has not reported yet is
pending: it is waited for, never taken as passed. The verdict is ``failing`` when any counted
check failed (even while others still run: a person can start on it now), else ``pending``
while any runs or has not reported, else ``passing``; ``none`` when nothing counts at all (no
rule and no check on the head).
"""

from __future__ import annotations

from dataclasses import dataclass

from .pulls import Check

# A check run's conclusions that let a pull request through (GitHub's own reading of them).
PASSED = ("success", "neutral", "skipped")
STATUS_PASSED = ("success",)
STATUS_PENDING = ("pending",)


@dataclass(frozen=True)
class Verdict:
    checks: str  # none | pending | passing | failing
    failing: tuple[Check, ...] = ()
    pending: tuple[str, ...] = ()
    required: tuple[str, ...] = ()  # the names required by protection or rules; () = every check counted


def required_names(client, repo: str, base: str) -> tuple[str, ...]:
    """The check names the base branch requires, by its protection and its rules, in that order."""
    names = list(client.required_status_checks(repo, base) or [])
    for rule in client.branch_rules(repo, base):
        if rule.get("type") != "required_status_checks":
            continue
        params = rule.get("parameters") if isinstance(rule.get("parameters"), dict) else {}
        for item in params.get("required_status_checks") or []:
            if isinstance(item, dict) and isinstance(item.get("context"), str):
                names.append(item["context"])
    return tuple(dict.fromkeys(n for n in names if n))


def results_on(client, repo: str, sha: str) -> dict[str, list[tuple[str, str]]]:
    """``{name: [(outcome, url)…]}`` for every check run and commit status on ``sha``; outcome is
    passed, pending or failed."""
    found: dict[str, list[tuple[str, str]]] = {}
    for run in client.check_runs(repo, sha):
        name = run.get("name")
        if not isinstance(name, str) or not name:
            continue
        if run.get("status") != "completed":
            outcome = "pending"
        else:
            outcome = "passed" if run.get("conclusion") in PASSED else "failed"
        found.setdefault(name, []).append((outcome, str(run.get("html_url") or run.get("details_url") or "")))
    for status in client.commit_statuses(repo, sha):
        name = status.get("context")
        if not isinstance(name, str) or not name:
            continue
        state = status.get("state")
        outcome = "passed" if state in STATUS_PASSED else "pending" if state in STATUS_PENDING else "failed"
        found.setdefault(name, []).append((outcome, str(status.get("target_url") or "")))
    return found


def verdict(client, repo: str, base: str, sha: str) -> Verdict:
    """The checks of a pull request whose base branch is ``base`` and head commit ``sha``."""
    required = required_names(client, repo, base)
    results = results_on(client, repo, sha)
    names = required or tuple(results)
    failing: list[Check] = []
    pending: list[str] = []
    for name in names:
        seen = results.get(name, [])
        bad = [url for outcome, url in seen if outcome == "failed"]
        if bad:
            failing.append(Check(name, bad[0]))
        elif not seen or any(outcome == "pending" for outcome, _ in seen):
            pending.append(name)
    if failing:
        word = "failing"
    elif pending:
        word = "pending"
    else:
        word = "passing" if names else "none"
    return Verdict(word, tuple(failing), tuple(pending), required)
