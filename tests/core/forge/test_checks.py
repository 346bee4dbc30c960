"""forge/checks.py, one call at a time (SPEC §19 "Checks and review"): the required checks of a commit, from
the base branch's protection, its rules, else every check; check runs and commit statuses alike; every
page read. Against the GitHub stand-in, checked against GitHub's OpenAPI description."""

from __future__ import annotations

import pytest

from memento_core.forge import checks
from memento_core.forge.github import GitHub, Token
from tests.forge_standin import TOKEN

REPO = "octo-org/shop"
SHA = "a" * 40


@pytest.fixture
def client(github) -> GitHub:
    return GitHub(github.api, Token(TOKEN), backoff=0.01)


@pytest.mark.parametrize("kind", ["check run", "status"])
@pytest.mark.parametrize("required_by", ["protection", "rules", "every check"])
def test_a_required_check_fails_then_passes_and_is_waited_for_while_it_runs(github, client, kind, required_by):
    def report(name: str, outcome: str) -> None:
        if kind == "check run":
            if outcome == "pending":
                github.check_run(SHA, name, None, status="in_progress")
            else:
                github.check_run(SHA, name, {"passed": "success", "failed": "failure"}[outcome])
        else:
            github.status(SHA, name, {"passed": "success", "failed": "failure", "pending": "pending"}[outcome])

    if required_by == "protection":
        github.protect("main", ["ci/test"])
    elif required_by == "rules":
        github.ruleset("main", ["ci/test"])
    assert checks.verdict(client, REPO, "main", SHA).checks == ("pending" if required_by != "every check" else "none")
    report("ci/test", "pending")
    found = checks.verdict(client, REPO, "main", SHA)
    assert (found.checks, found.pending) == ("pending", ("ci/test",))
    report("ci/test", "failed")
    report("ci/other", "failed")  # not required: counts only when nothing is
    found = checks.verdict(client, REPO, "main", SHA)
    assert found.checks == "failing"
    names = sorted(c.name for c in found.failing)
    assert names == (["ci/test"] if required_by != "every check" else ["ci/other", "ci/test"])
    assert all(c.url.startswith("https://") for c in found.failing)
    report("ci/test", "passed")
    found = checks.verdict(client, REPO, "main", SHA)
    assert found.checks == ("passing" if required_by != "every check" else "failing")
    report("ci/other", "passed")
    assert checks.verdict(client, REPO, "main", SHA).checks == "passing"


def test_check_runs_and_statuses_both_count_and_a_required_one_not_reported_is_pending(github, client):
    github.protect("main", ["build"])
    github.ruleset("main", ["lint"])
    github.check_run(SHA, "build", "success")
    found = checks.verdict(client, REPO, "main", SHA)
    assert (found.checks, found.pending, found.required) == ("pending", ("lint",), ("build", "lint"))
    github.status(SHA, "lint", "error")
    found = checks.verdict(client, REPO, "main", SHA)
    assert found.checks == "failing" and [c.name for c in found.failing] == ["lint"]
    github.status(SHA, "lint", "success")  # the newest status of a context is its word
    assert checks.verdict(client, REPO, "main", SHA).checks == "passing"


def test_every_page_of_check_runs_is_read(github, client):
    github.per_page_max = 2
    for n in range(5):
        github.check_run(SHA, f"job-{n}", "success")
    github.check_run(SHA, "job-last", "failure")
    found = checks.verdict(client, REPO, "main", SHA)
    assert [c.name for c in found.failing] == ["job-last"]


def test_a_protection_the_token_may_not_read_leaves_the_rules_to_say(github, client):
    github.protect("main", ["ci/secret"])
    github.ruleset("main", ["ci/test"])
    github.fail("GET", r"/protection/required_status_checks$", 403,
                body={"message": "Resource not accessible by integration",
                      "documentation_url": "https://docs.github.com/rest", "status": "403"})
    github.check_run(SHA, "ci/test", "success")
    assert checks.verdict(client, REPO, "main", SHA).required == ("ci/test",)
