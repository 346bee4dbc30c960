"""The one GitHub client (SPEC §19 "Errors"): REST over urllib, the token, retries, pagination.

Everything Memento asks of GitHub goes through :class:`GitHub`. Rate limits (403 or 429 with
``x-ratelimit-remaining: 0`` or ``retry-after``) and 5xx are retried with backoff inside one call,
then raised as :class:`ForgeUnavailable`: the caller defers the work to the next tick, never as a
task's retry. A 401, or a 403 that is not a rate limit, is :class:`ForgeAuthError`, naming where
the token came from. A POST is never sent twice by this module (a 502 may hide a comment that was
made): its caller decides, after looking (comments.py).

The token comes from ``GITHUB_TOKEN``, else ``gh auth token``. It lives in this process's memory
only: it is never written to a file, a log, a message or an exception, and the agent's
environment never has it (config/sandbox.ENV_NEVER). urllib rather than a client library: a handful of endpoints,
and urllib keeps proxies from the environment; the one thing it does wrong for us, carrying the
Authorization header along a redirect to another host, is refused here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import urlencode, urlsplit

from ..errors import MementoError

API_VERSION = "2022-11-28"
USER_AGENT = "memento-tick"
MAX_PAGES = 100  # 10,000 issues at 100 a page: more is a wrong label, not a backlog
TOKEN_ENV = "GITHUB_TOKEN"
GH_SOURCE = "`gh auth token`"


class ForgeError(MementoError):
    """GitHub said no, in a way no retry changes (404, 422, a redirect elsewhere, bad JSON).
    ``status``: GitHub's HTTP status when it answered one (0 otherwise)."""

    status: int = 0


class ForgeUnavailable(ForgeError):
    """Rate limited, a 5xx or no connection, after the retries: try again at the next tick."""


class ForgeAuthError(ForgeError):
    """401, or 403 that is not a rate limit: the token is missing, wrong or lacks a permission.
    ``source``: where the token came from (``GITHUB_TOKEN`` or `gh auth token`), never the token."""

    def __init__(self, message: str, *, source: str = ""):
        super().__init__(message)
        self.source = source


@dataclass(frozen=True)
class Token:
    """A token and where it came from; ``repr`` and ``str`` never show it."""

    value: str = field(repr=False)
    source: str = TOKEN_ENV

    def __str__(self) -> str:
        return f"<token from {self.source}>"


def web_host(api: str) -> str:
    """The forge's web host for ``api``: github.com for api.github.com, else the API's host (GHE)."""
    host = urlsplit(api).hostname or ""
    return "github.com" if host == "api.github.com" else host


def find_token(api: str = "https://api.github.com", env: dict[str, str] | None = None) -> Token:
    """``GITHUB_TOKEN``, else what ``gh auth token`` prints for the forge's host; ForgeAuthError
    saying how to give one when neither has it."""
    env = os.environ if env is None else env
    value = env.get(TOKEN_ENV, "").strip()
    if value:
        return Token(value, TOKEN_ENV)
    gh = _gh_binary(env)
    if gh is None:
        raise ForgeAuthError(f"no GitHub token: {TOKEN_ENV} is not set and the gh CLI is not installed "
                             f"(set {TOKEN_ENV}, or install gh and run `gh auth login`)", source=TOKEN_ENV)
    host = web_host(api)
    argv = [gh, "auth", "token"] + (["--hostname", host] if host and host != "github.com" else [])
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20,
                              env={**env, "GH_PROMPT_DISABLED": "1", "NO_COLOR": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ForgeAuthError(f"no GitHub token: {TOKEN_ENV} is not set and {GH_SOURCE} did not run "
                             f"({type(exc).__name__})", source=GH_SOURCE) from None
    value = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode != 0 or not value or any(c.isspace() for c in value):
        # gh's own words say which host is not logged in; they never hold a token.
        said = " ".join(proc.stderr.decode("utf-8", "replace").split())[:200]
        raise ForgeAuthError(f"no GitHub token: {TOKEN_ENV} is not set and {GH_SOURCE} gave none"
                             + (f" ({said})" if said else "") + f"; set {TOKEN_ENV} or run `gh auth login`",
                             source=GH_SOURCE)
    return Token(value, GH_SOURCE)


def _gh_binary(env) -> str | None:
    # Under cron PATH is minimal: the usual places too.
    found = shutil.which("gh", path=env.get("PATH") or os.defpath)
    if found:
        return found
    for folder in ("/usr/local/bin", "/usr/bin", "/opt/homebrew/bin", os.path.expanduser("~/.local/bin")):
        candidate = os.path.join(folder, "gh")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


# ---------------------------------------------------------------- the remote's repository

_SCP_RE = re.compile(r"^(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?P<path>[^\s]+)$")


def repo_from_url(url: str) -> str | None:
    """``OWNER/REPO`` from a git remote's URL (https, ssh://, scp-like ``git@host:o/r.git``, a GHE
    host, a port, a trailing slash or ``.git``); None for a URL that names no such path."""
    url = url.strip()
    if "://" in url:
        path = urlsplit(url).path
    else:
        m = _SCP_RE.match(url)
        if not m:
            return None
        path = m.group("path")
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) < 2:
        return None
    owner, name = parts[-2], parts[-1].removesuffix(".git")
    from ..config.sections import repo_problem

    repo = f"{owner}/{name}"
    return None if repo_problem(repo) else repo


def repo_of_remote(root, remote: str) -> str:
    """``OWNER/REPO`` of the git remote ``remote`` of the repository at ``root``; a ForgeError
    when it has none that names one (its URL is never printed: it may carry a password)."""
    from ..git.run import run_git

    proc = run_git(root, ["config", "--get", f"remote.{remote}.url"], check=False)
    url = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode != 0 or not url:
        raise ForgeError(f"no git remote {remote!r} to read the repository from: name it "
                         "(`memento plan import github OWNER/REPO`) or set [forge] repo in memento.toml")
    repo = repo_from_url(url)
    if repo is None:
        raise ForgeError(f"the URL of git remote {remote!r} names no OWNER/REPO: set [forge] repo in memento.toml")
    return repo


def forge_repo(root, config) -> str:
    """The repository of ``[forge] repo``, else of the ``[forge] remote``'s URL."""
    return config.forge_repo or repo_of_remote(root, config.forge_remote)


# ---------------------------------------------------------------- the client


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    data: object

    def link(self, rel: str) -> str | None:
        """The URL of ``rel`` in the Link header (``<url>; rel="next", …``)."""
        for part in self.headers.get("link", "").split(","):
            m = re.match(r'\s*<([^>]*)>\s*;(?:.*;)?\s*rel="?([^";]+)"?', part)
            if m and rel in m.group(2).split():
                return m.group(1)
        return None


def rate_limit_wait(status: int, headers: dict[str, str], message: str = "",
                    now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait when the answer is a rate limit (GitHub's rules), else None."""
    retry_after = headers.get("retry-after", "").strip()
    remaining = headers.get("x-ratelimit-remaining", "").strip()
    limited = status == 429 or (status == 403 and (remaining == "0" or bool(retry_after)
                                                   or "rate limit" in message.lower()))
    if not limited:
        return None
    if retry_after.isdigit():
        return float(retry_after)
    reset = headers.get("x-ratelimit-reset", "").strip()
    if remaining == "0" and reset.isdigit():
        return max(1.0, int(reset) - now() + 1)
    return 60.0  # a secondary rate limit without a hint: GitHub asks for at least a minute


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the API's own scheme, host and port (a renamed repository):
    the Authorization header must never travel to another host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if _origin(newurl) != _origin(req.full_url):
            raise ForgeError(f"GitHub answered {code} with a redirect to another host ({_origin(newurl)}); "
                             "not followed with the token")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


class GitHub:
    """REST calls to one GitHub API with one token; see the module docstring for the retries."""

    def __init__(self, api: str, token: Token, *, attempts: int = 4, backoff: float = 0.5,
                 max_wait: float = 20.0, timeout: float = 30.0, sleep: Callable[[float], None] = time.sleep):
        self.api = api.rstrip("/")
        self.token = token
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.max_wait = max_wait
        self.timeout = timeout
        self.sleep = sleep
        self._opener = urllib.request.build_opener(_SameOrigin())

    def __repr__(self) -> str:
        return f"GitHub({self.api!r}, token from {self.token.source})"

    # ------------------------------------------------------------ endpoints

    def issues(self, repo: str, label: str | None, state: str = "all") -> list[dict]:
        """Every issue of ``repo`` with ``label`` in ``state`` (pull requests included: GitHub
        lists them as issues with a ``pull_request`` key; the caller leaves them out)."""
        params = {"state": state, "per_page": "100", "sort": "created", "direction": "asc"}
        if label:
            params["labels"] = label
        return list(self.pages(f"/repos/{repo}/issues", params))

    def issue_comments(self, repo: str, number: int) -> list[dict]:
        return list(self.pages(f"/repos/{repo}/issues/{int(number)}/comments", {"per_page": "100"}))

    def create_comment(self, repo: str, number: int, body: str) -> dict:
        """One POST, never repeated here (see the module docstring)."""
        found = self.request("POST", f"/repos/{repo}/issues/{int(number)}/comments", body={"body": body})
        return found.data if isinstance(found.data, dict) else {}

    def pulls_with_head(self, repo: str, owner: str, branch: str) -> list[dict]:
        """Every pull request (open or not) whose head is ``owner:branch``, newest first."""
        params = {"head": f"{owner}:{branch}", "state": "all", "per_page": "100", "sort": "created",
                  "direction": "desc"}
        return [p for p in self.pages(f"/repos/{repo}/pulls", params) if isinstance(p, dict)]

    def create_pull(self, repo: str, title: str, head: str, base: str, body: str) -> dict:
        """One POST, never repeated here: the caller looks for the pull request first (a 502 may
        hide one GitHub made)."""
        found = self.request("POST", f"/repos/{repo}/pulls",
                             body={"title": title, "head": head, "base": base, "body": body})
        return found.data if isinstance(found.data, dict) else {}

    def pull(self, repo: str, number: int) -> dict:
        found = self.request("GET", f"/repos/{repo}/pulls/{int(number)}")
        if not isinstance(found.data, dict):
            raise ForgeError(f"GitHub answered pull request #{int(number)} with {type(found.data).__name__}")
        return found.data

    def update_pull_body(self, repo: str, number: int, body: str) -> dict:
        found = self.request("PATCH", f"/repos/{repo}/pulls/{int(number)}", body={"body": body})
        return found.data if isinstance(found.data, dict) else {}

    # ------------------------------------------------------------ the mechanics

    def pages(self, path: str, params: dict[str, str] | None = None) -> Iterator:
        """The items of every page of a list endpoint, following ``rel="next"`` links."""
        url: str | None = self._url(path, params)
        for _ in range(MAX_PAGES):
            if url is None:
                return
            found = self.request("GET", url)
            if not isinstance(found.data, list):
                raise ForgeError(f"GitHub answered {path} with {type(found.data).__name__}, not a list")
            yield from found.data
            url = found.link("next")
            if url is not None and _origin(url) != _origin(self.api):
                raise ForgeError(f"GitHub's next page is on another host ({_origin(url)[1]}); not followed")
        raise ForgeError(f"{path}: more than {MAX_PAGES} pages; narrow it (a label)")

    def _url(self, path: str, params: dict[str, str] | None = None) -> str:
        url = path if "://" in path else self.api + path
        return url + ("?" + urlencode(params) if params else "")

    def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                body: object = None) -> Response:
        """One call, retried as the module docstring says; the answer's JSON in ``data``."""
        url = self._url(path, params)
        idempotent = method in ("GET", "HEAD")
        problem = ""
        for attempt in range(self.attempts):
            wait = self.backoff * (2 ** attempt)
            try:
                status, headers, raw = self._send(method, url, body)
            except ForgeError:
                raise
            except (OSError, urllib.error.URLError, ValueError) as exc:
                reason = getattr(exc, "reason", None) or exc
                problem = f"could not reach {_origin(self.api)[1]}: {reason}"
                if not idempotent:
                    raise ForgeUnavailable(f"{method} {_short(url)}: {problem}") from None
            else:
                data = _json(raw)
                if 200 <= status < 300:
                    return Response(status, headers, data)
                message = data.get("message", "") if isinstance(data, dict) else ""
                limited = rate_limit_wait(status, headers, str(message))
                if limited is not None:
                    problem = f"rate limited (HTTP {status})"
                    if limited > self.max_wait:
                        raise ForgeUnavailable(f"{method} {_short(url)}: {problem} for another "
                                               f"{round(limited)} s; deferred to the next tick")
                    wait = limited
                elif status >= 500:
                    problem = f"HTTP {status}"
                    if not idempotent:
                        raise ForgeUnavailable(f"{method} {_short(url)}: GitHub answered {problem}")
                elif status in (401, 403):
                    raise _with_status(status, ForgeAuthError(f"GitHub refused the token from {self.token.source} (HTTP {status}"
                                         + (f": {_said(message)}" if message else "") + "): "
                                         + ("it is wrong or expired" if status == 401 else
                                            f"it may not {method} {_short(url)} (a missing scope or permission)"),
                                         source=self.token.source))
                else:
                    raise _with_status(status, ForgeError(f"{method} {_short(url)}: GitHub answered HTTP {status}"
                                                          + (f": {_said(message)}" if message else "")))
            if attempt + 1 < self.attempts:
                self.sleep(wait)
        raise ForgeUnavailable(f"{method} {_short(url)}: {problem} after {self.attempts} attempts; "
                               "deferred to the next tick")

    def _send(self, method: str, url: str, body: object) -> tuple[int, dict[str, str], bytes]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("X-GitHub-Api-Version", API_VERSION)
        req.add_header("User-Agent", USER_AGENT)
        req.add_header("Authorization", f"Bearer {self.token.value}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, _headers(resp.headers), resp.read()
        except urllib.error.HTTPError as exc:
            try:
                raw = exc.read()
            except OSError:
                raw = b""
            finally:
                exc.close()
            return exc.code, _headers(exc.headers), raw


    # ------------------------------------------------------------ checks and reviews (SPEC §19)

    def required_status_checks(self, repo: str, branch: str) -> list[str] | None:
        """The check names the branch's protection requires; None when the branch has no
        protection of its checks (404), or the token may not read its protection (403: reading it
        takes the administration permission, which a token that works the repository may lack)."""
        try:
            found = self.request("GET", f"/repos/{repo}/branches/{_segment(branch)}/protection/required_status_checks")
        except ForgeError as exc:
            if exc.status == 404 or (exc.status == 403 and isinstance(exc, ForgeAuthError)):
                return None
            raise
        data = found.data if isinstance(found.data, dict) else {}
        names = [str(c) for c in data.get("contexts") or [] if isinstance(c, str)]
        names += [str(c["context"]) for c in data.get("checks") or [] if isinstance(c, dict) and c.get("context")]
        return list(dict.fromkeys(names))

    def branch_rules(self, repo: str, branch: str) -> list[dict]:
        """The rules (rulesets) that apply to ``branch``, every page."""
        return [r for r in self.pages(f"/repos/{repo}/rules/branches/{_segment(branch)}", {"per_page": "100"})
                if isinstance(r, dict)]

    def check_runs(self, repo: str, ref: str) -> list[dict]:
        """The latest check run of each name on ``ref`` (a sha), every page."""
        return self._object_pages(f"/repos/{repo}/commits/{_segment(ref)}/check-runs",
                                  {"filter": "latest", "per_page": "100"}, "check_runs")

    def commit_statuses(self, repo: str, ref: str) -> list[dict]:
        """The latest commit status of each context on ``ref`` (the combined status), every page."""
        try:
            return self._object_pages(f"/repos/{repo}/commits/{_segment(ref)}/status", {"per_page": "100"},
                                      "statuses")
        except ForgeError as exc:
            if exc.status == 404:  # GitHub answers 404 for a ref it has no status of yet
                return []
            raise

    def reviews(self, repo: str, number: int) -> list[dict]:
        """The reviews of pull request ``number``, oldest first."""
        return [r for r in self.pages(f"/repos/{repo}/pulls/{int(number)}/reviews", {"per_page": "100"})
                if isinstance(r, dict)]

    def review_comments(self, repo: str, number: int, review_id: int) -> list[dict]:
        """The inline comments of one review."""
        return [c for c in self.pages(f"/repos/{repo}/pulls/{int(number)}/reviews/{int(review_id)}/comments",
                                      {"per_page": "100"}) if isinstance(c, dict)]

    def _object_pages(self, path: str, params: dict[str, str], key: str) -> list[dict]:
        """The items under ``key`` of every page of an endpoint that answers an object per page."""
        url: str | None = self._url(path, params)
        out: list[dict] = []
        for _ in range(MAX_PAGES):
            if url is None:
                return out
            found = self.request("GET", url)
            items = found.data.get(key) if isinstance(found.data, dict) else None
            if not isinstance(items, list):
                raise ForgeError(f"GitHub answered {path} without a list of {key}")
            out += [i for i in items if isinstance(i, dict)]
            url = found.link("next")
            if url is not None and _origin(url) != _origin(self.api):
                raise ForgeError(f"GitHub's next page is on another host ({_origin(url)[1]}); not followed")
        raise ForgeError(f"{path}: more than {MAX_PAGES} pages")


def _segment(value: str) -> str:
    """A branch or ref as one path segment (``memento/phase`` → ``memento%2Fphase``)."""
    from urllib.parse import quote

    return quote(str(value), safe="")


def _with_status(status: int, exc: ForgeError) -> ForgeError:
    exc.status = status
    return exc


def _headers(headers: Message | None) -> dict[str, str]:
    return {k.lower(): v for k, v in (headers.items() if headers is not None else ())}


def _json(raw: bytes) -> object:
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _short(url: str) -> str:
    """The path of ``url`` for a message (no query: nothing in it is worth a line)."""
    return urlsplit(url).path or url


def _said(message: str) -> str:
    from ..lines import clipped, safe_text

    return clipped(safe_text(" ".join(str(message).split())), 200)


def client_for(config, env: dict[str, str] | None = None, **kw) -> GitHub:
    """A client for ``[forge] api`` with the token from the environment or gh."""
    return GitHub(config.forge_api, find_token(config.forge_api, env), **kw)
