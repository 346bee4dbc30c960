"""The forge client and ``[forge]`` (SPEC §19 "Errors"): against the GitHub stand-in, whose requests
and answers are checked against GitHub's OpenAPI description (tests/forge_standin.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memento_core.config.load import config_from_dict, load_config
from memento_core.errors import MementoError
from memento_core.forge.github import (
    ForgeAuthError,
    ForgeError,
    ForgeUnavailable,
    GitHub,
    Token,
    find_token,
    rate_limit_wait,
    repo_from_url,
)
from tests.forge_standin import TOKEN

REPO = "octo-org/shop"


def client(github, token: str = TOKEN, source: str = "GITHUB_TOKEN", **kw) -> tuple[GitHub, list[float]]:
    waits: list[float] = []
    return GitHub(github.api, Token(token, source), sleep=waits.append, **kw), waits


# ---------------------------------------------------------------- [forge]


def load(tmp_path: Path, text: str):
    path = tmp_path / "memento.toml"
    path.write_text(text)
    return load_config(path)


def test_forge_defaults_and_values(tmp_path):
    config = load(tmp_path, "[agent]\npreset = \"script\"\n")
    assert (config.forge_land, config.forge_api, config.forge_repo, config.forge_remote, config.forge_stack) == \
        ("direct", "https://api.github.com", "", "origin", False)
    config = load(tmp_path, '[forge]\nland = "direct"\napi = "https://github.example.com/api/v3/"\n'
                            'repo = "octo-org/shop.api"\nremote = "upstream"\nstack = true\n')
    assert (config.forge_api, config.forge_repo, config.forge_remote, config.forge_stack) == \
        ("https://github.example.com/api/v3", "octo-org/shop.api", "upstream", True)


def test_land_pr_is_accepted_and_refused_only_beside_a_fleet_naming_its_line(tmp_path):
    config = load(tmp_path, '[agent]\npreset = "script"\n\n[forge]\nrepo = "o/r"\nland = "pr"\nstack = true\n')
    assert (config.forge_land, config.forge_stack) == ("pr", True)
    with pytest.raises(MementoError) as caught:
        load(tmp_path, '[workers]\nremote = "origin"\n\n[forge]\nrepo = "o/r"\nland = "pr"\n')
    said = str(caught.value)
    assert "memento.toml:6" in said and "[forge] land" in said and "[workers] remote" in said, said


@pytest.mark.parametrize(("line", "key", "words"), [
    ('land = "merge"', "land", "unknown land"),
    ('api = "http://api.github.com"', "api", "never sent in the clear"),
    ('api = "ftp://x"', "api", "https URL"),
    ('api = "https://user:pw@github.example.com/api/v3"', "api", "https URL"),
    ('repo = "octo-org"', "repo", "OWNER/REPO"),
    ('repo = "octo-org/../x"', "repo", "OWNER/REPO"),
    ('remote = "-x"', "remote", "git remote"),
    ('stack = "yes"', "stack", "true or false"),
])
def test_bad_forge_values_are_config_errors_with_their_line(tmp_path, line, key, words):
    with pytest.raises(MementoError) as caught:
        load(tmp_path, f"[forge]\n# a comment\n{line}\n")
    said = str(caught.value)
    assert "memento.toml:3" in said and f"[forge] {key}" in said and words in said, said


def test_the_api_may_be_plain_http_only_on_loopback():
    assert config_from_dict({"forge": {"api": "http://127.0.0.1:8080"}}).forge_api == "http://127.0.0.1:8080"
    with pytest.raises(MementoError):
        config_from_dict({"forge": {"api": "http://10.0.0.5:8080"}})


@pytest.mark.parametrize(("url", "repo"), [
    ("https://github.com/octo-org/shop.git", "octo-org/shop"),
    ("https://github.com/octo-org/shop", "octo-org/shop"),
    ("https://github.com/octo-org/shop/", "octo-org/shop"),
    ("https://x-access:secret@github.com/octo-org/shop.git", "octo-org/shop"),
    ("git@github.com:octo-org/shop.git", "octo-org/shop"),
    ("git@github.com:octo-org/shop", "octo-org/shop"),
    ("ssh://git@github.com/octo-org/shop.git", "octo-org/shop"),
    ("ssh://git@github.example.com:2222/team/api.v2.git", "team/api.v2"),
    ("https://github.example.com/team/api.git", "team/api"),
    ("github-work:octo-org/shop.git", "octo-org/shop"),  # an ~/.ssh/config alias
    ("/srv/git/shop.git", None),
    ("https://github.com/octo-org", None),
    ("", None),
])
def test_the_repository_is_read_from_the_remotes_url(url, repo):
    assert repo_from_url(url) == repo


def test_repo_of_remote_never_prints_the_url(tmp_path, repo):
    import subprocess

    from memento_core.forge.github import repo_of_remote

    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "https://u:hunter2@github.com/o/r.git"],
                   check=True)
    assert repo_of_remote(repo, "origin") == "o/r"
    subprocess.run(["git", "-C", str(repo), "remote", "set-url", "origin", "https://u:hunter2@example.com/x"],
                   check=True)
    with pytest.raises(ForgeError) as caught:
        repo_of_remote(repo, "origin")
    assert "hunter2" not in str(caught.value) and "[forge] repo" in str(caught.value)


def test_the_forges_repository_is_the_configs_else_the_remotes(tmp_path, repo):
    import subprocess

    from memento_core.forge.github import forge_repo

    subprocess.run(["git", "-C", str(repo), "remote", "add", "upstream", "git@github.example.com:team/api.git"],
                   check=True)
    assert forge_repo(repo, config_from_dict({"forge": {"remote": "upstream"}})) == "team/api"
    assert forge_repo(repo, config_from_dict({"forge": {"remote": "upstream", "repo": "o/r"}})) == "o/r"
    with pytest.raises(ForgeError) as caught:
        forge_repo(repo, config_from_dict({}))
    assert "no git remote 'origin'" in str(caught.value)


# ---------------------------------------------------------------- the token


def test_the_token_comes_from_github_token_else_gh_auth_token(tmp_path):
    assert find_token(env={"GITHUB_TOKEN": " abc ", "PATH": ""}) == Token("abc", "GITHUB_TOKEN")
    gh = tmp_path / "bin" / "gh"
    gh.parent.mkdir()
    gh.write_text("#!/bin/sh\n[ \"$1 $2\" = 'auth token' ] && echo gho_fromgh && exit 0\nexit 1\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    token = find_token(env={"PATH": str(gh.parent)})
    assert (token.value, token.source) == ("gho_fromgh", "`gh auth token`")
    assert "gho_fromgh" not in repr(token) and "gho_fromgh" not in str(token)
    gh.write_text("#!/bin/sh\necho 'You are not logged into any GitHub hosts.' >&2\nexit 1\n")
    with pytest.raises(ForgeAuthError) as caught:
        find_token(env={"PATH": str(gh.parent)})
    assert "GITHUB_TOKEN is not set" in str(caught.value) and "not logged into" in str(caught.value)


def test_no_token_at_all_says_how_to_give_one(tmp_path):
    with pytest.raises(ForgeAuthError) as caught:
        find_token(env={"PATH": str(tmp_path)})
    said = str(caught.value)
    assert "GITHUB_TOKEN" in said and "gh" in said


# ---------------------------------------------------------------- the client


def test_issues_follow_the_link_header_across_pages(github):
    for n in range(1, 8):
        github.issue(n, f"Issue {n}", labels=("memento",) if n != 4 else ("other",))
    github.per_page_max = 2
    gh, _ = client(github)
    assert [i["number"] for i in gh.issues(REPO, "memento")] == [1, 2, 3, 5, 6, 7]
    pages = [r for r in github.requests if r["path"].endswith("/issues")]
    assert len(pages) == 3 and pages[0]["query"]["labels"] == "memento" and pages[0]["query"]["state"] == "all"
    assert all(r["authorization"] == f"Bearer {TOKEN}" for r in github.requests)


def test_502s_are_retried_with_backoff_then_deferred(github):
    github.issue(1, "One")
    github.fail("GET", r"/issues$", 502, times=2)
    gh, waits = client(github)
    assert [i["number"] for i in gh.issues(REPO, "memento")] == [1]
    assert waits == [0.5, 1.0]
    github.fail("GET", r"/issues$", 502, times=4)
    gh, waits = client(github)
    with pytest.raises(ForgeUnavailable) as caught:
        gh.issues(REPO, "memento")
    assert "HTTP 502 after 4 attempts" in str(caught.value) and "next tick" in str(caught.value)
    assert waits == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("status", [403, 429])
def test_a_rate_limit_waits_what_github_says_then_goes_on(github, status):
    github.issue(1, "One")
    github.rate_limit("GET", r"/issues$", retry_after=7, status=status)
    gh, waits = client(github)
    assert [i["number"] for i in gh.issues(REPO, "memento")] == [1]
    assert waits == [7.0]


def test_a_rate_limit_that_lasts_is_deferred_at_once(github):
    github.issue(1, "One")
    github.rate_limit("GET", r"/issues$", retry_after=None)  # remaining 0, the reset far away
    gh, waits = client(github)
    with pytest.raises(ForgeUnavailable) as caught:
        gh.issues(REPO, "memento")
    assert "rate limited (HTTP 403)" in str(caught.value) and waits == []


def test_rate_limit_rules():
    assert rate_limit_wait(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1100"}, now=lambda: 1000) == 101
    assert rate_limit_wait(403, {"retry-after": "30"}) == 30
    assert rate_limit_wait(403, {}, "You have exceeded a secondary rate limit") == 60
    assert rate_limit_wait(403, {"x-ratelimit-remaining": "12"}, "Resource not accessible by integration") is None
    assert rate_limit_wait(429, {}) == 60
    assert rate_limit_wait(502, {"retry-after": "3"}) is None


def test_a_401_names_the_tokens_source_and_is_not_retried(github):
    gh, waits = client(github, token="wrong", source="`gh auth token`")
    with pytest.raises(ForgeAuthError) as caught:
        gh.issues(REPO, "memento")
    said = str(caught.value)
    assert "`gh auth token`" in said and "401" in said and "wrong" not in said.replace("wrong or", "")
    assert waits == [] and len(github.requests) == 1


def test_a_403_that_is_no_rate_limit_names_the_tokens_source(github):
    github.issue(1, "One")
    github.fail("POST", r"/comments$", 403, headers={"x-ratelimit-remaining": "4000"},
                body={"message": "Resource not accessible by personal access token",
                      "documentation_url": "https://docs.github.com/rest"})
    gh, waits = client(github)
    with pytest.raises(ForgeAuthError) as caught:
        gh.create_comment(REPO, 1, "hello")
    assert "GITHUB_TOKEN" in str(caught.value) and "permission" in str(caught.value) and waits == []


def test_a_post_is_never_sent_twice_by_the_client(github):
    github.issue(1, "One")
    github.fail("POST", r"/comments$", 502, after=True)
    gh, waits = client(github)
    with pytest.raises(ForgeUnavailable):
        gh.create_comment(REPO, 1, "hello")
    assert github.posted(1) == ["hello"] and waits == []


def test_no_connection_is_deferred(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens there once closed
    waits: list[float] = []
    gh = GitHub(f"http://127.0.0.1:{port}", Token("t"), sleep=waits.append, attempts=2)
    with pytest.raises(ForgeUnavailable) as caught:
        gh.issues(REPO, None)
    assert "could not reach 127.0.0.1" in str(caught.value) and waits == [0.5]


def test_the_standin_refuses_what_github_would(github):
    """The stand-in's checks are real: a request GitHub's description does not allow is a violation."""
    gh, _ = client(github)
    with pytest.raises(ForgeError):
        gh.request("GET", f"/repos/{REPO}/issues", params={"labelz": "memento"})
    with pytest.raises(ForgeError):
        gh.request("POST", f"/repos/{REPO}/issues/1/comments", body={"text": "x"})
    with pytest.raises(ForgeError):
        gh.request("GET", f"/repos/{REPO}/issues", params={"state": "everything"})
    bad = list(github.violations)
    github.violations.clear()
    assert any("'labelz' is not in the description" in v for v in bad)
    assert any("'body' is a required property" in v for v in bad)
    assert any("'everything' is not one of" in v for v in bad)
    # and an answer that is not an issue as GitHub describes one is caught too
    broken = github.issue(1, "One")
    del broken["node_id"]
    gh.issues(REPO, None)
    bad = list(github.violations)
    github.violations.clear()
    assert any("'node_id' is a required property" in v for v in bad), bad


def test_the_client_never_shows_the_token():
    gh = GitHub("https://api.github.com", Token("ghp_secretvalue"))
    assert "ghp_secretvalue" not in repr(gh) and "ghp_secretvalue" not in repr(gh.token)
    assert os.environ.get("GITHUB_TOKEN") != "ghp_secretvalue"


def test_a_redirect_to_another_host_is_not_followed_with_the_token(github):
    github.issue(1, "One")
    github.fail("GET", r"/issues$", 301, headers={"Location": "http://127.0.0.2:9/steal"})
    gh, waits = client(github)
    with pytest.raises(ForgeError) as caught:
        gh.issues(REPO, "memento")
    assert "redirect to another host" in str(caught.value) and waits == []
    # the API's own host is followed (a renamed repository), the token along
    github.fail("GET", r"/issues$", 301, headers={"Location": f"{github.api}/repos/{REPO}/issues?state=all"})
    assert [i["number"] for i in gh.issues(REPO, None)] == [1]
