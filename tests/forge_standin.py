"""A local stand-in of the GitHub REST endpoints Memento uses (SPEC §19 "Tests"), checked against
GitHub's published OpenAPI description.

Every request (its path and method exist, its path, query and body parameters are the
description's, required ones present, values of the declared types) and every answer it gives
(the body against the operation's response schema, $refs resolved) is validated against
``api.github.com.json`` of npm ``@octokit/openapi`` (the ``github/rest-api-description``
repository's file). A violation is recorded in ``StandIn.violations`` and answered 400, so the
test that caused it fails twice over.

The description is installed by :func:`openapi_path` with npm from the registry into
``$MEMENTO_FORGE_CACHE`` (default ``~/.cache/memento-forge``); without npm or the registry the
tests that need it are skipped, saying so.

Faults: :meth:`StandIn.fail` queues answers (a 502, a 401, a rate limit) for the next matching
requests; ``after=True`` answers the fault *after* doing the work (a comment made, then a 502).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

OPENAPI_PACKAGE = "@octokit/openapi"
OPENAPI_VERSION = "23.0.2"
TOKEN = "ghp_standin0123456789abcdefTOKENvalue"


def openapi_path() -> Path | str:
    """The path of api.github.com.json, installed with npm when missing; else a string: why not."""
    cache = Path(os.environ.get("MEMENTO_FORGE_CACHE", Path.home() / ".cache" / "memento-forge"))
    prefix = cache / "openapi"
    target = prefix / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
    if target.is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed: the GitHub stand-in cannot be checked against the OpenAPI description"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(cache / "install.lock", "w") as lock:  # xdist workers: one installs, the others wait
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():
            proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix",
                                   str(prefix), f"{OPENAPI_PACKAGE}@{OPENAPI_VERSION}"],
                                  capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
            if proc.returncode != 0 or not target.is_file():
                return (f"npm could not install {OPENAPI_PACKAGE}@{OPENAPI_VERSION} from the registry: "
                        + (proc.stderr.strip().splitlines() or ["no output"])[-1])
    return target


def _nullable(node):
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema says it (jsonschema knows no ``nullable``), and
    every ``#/…`` reference made absolute (``urn:github#/…``)."""
    if isinstance(node, list):
        return [_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _nullable(v) for k, v in node.items()}
    if isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        node["$ref"] = "urn:github" + node["$ref"]  # an inline schema's $ref resolves against the document
    if node.pop("nullable", False) is True:
        if "type" in node and "$ref" not in node:
            kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
            node["type"] = [*kinds, "null"]
            if "enum" in node:
                node["enum"] = [*node["enum"], None]
        else:
            node = {"anyOf": [{"type": "null"}, node]}
    return node


class OpenAPI:
    """GitHub's REST description: operations by method and path, validators for their schemas."""

    def __init__(self, path: Path):
        from jsonschema import Draft7Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT7

        self.doc = _nullable(json.loads(Path(path).read_text(encoding="utf-8")))
        self._registry = Registry().with_resource("urn:github", Resource.from_contents(self.doc, DRAFT7))
        self._validator = Draft7Validator
        self._routes = []
        for template in self.doc["paths"]:
            pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "([^/]+)", re.escape(template)) + "$"
            names = re.findall(r"\{([^}]+)\}", template)
            self._routes.append((re.compile(pattern), template, names))

    def _resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            node = self.pointer(node["$ref"].removeprefix("urn:github"))
        return node

    def pointer(self, ref: str):
        node = self.doc
        for part in ref.lstrip("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def route(self, method: str, path: str) -> tuple[str, dict, dict]:
        """(template, operation, path values) for a request; AssertionError when there is none."""
        for pattern, template, names in self._routes:
            m = pattern.match(path)
            if m:
                op = self.doc["paths"][template].get(method.lower())
                if op is None:
                    raise AssertionError(f"{method} {template}: no such operation in GitHub's description")
                return template, op, dict(zip(names, m.groups(), strict=True))
        raise AssertionError(f"{method} {path}: no such path in GitHub's description")

    def errors(self, schema, value, where: str) -> list[str]:
        schema = {"$ref": "urn:github#" + schema[1:]} if isinstance(schema, str) else schema
        validator = self._validator(schema, registry=self._registry)
        return [f"{where}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
                for e in validator.iter_errors(value)]

    def check_request(self, method: str, path: str, query: list[tuple[str, str]], body) -> tuple[str, list[str]]:
        """(the operation's template, what is wrong with the request)."""
        template, op, values = self.route(method, path)
        problems = []
        params = {}
        for p in [*self.doc["paths"][template].get("parameters", []), *op.get("parameters", [])]:
            p = self._resolve(p)
            params[(p["in"], p["name"])] = p
        given = {"path": dict(values), "query": dict(query)}
        for name in given["query"]:
            if ("query", name) not in params:
                problems.append(f"{method} {template}: query parameter {name!r} is not in the description")
        for (where, name), p in params.items():
            if where not in given:
                continue
            if name not in given[where]:
                if p.get("required"):
                    problems.append(f"{method} {template}: required {where} parameter {name!r} missing")
                continue
            value = _typed(given[where][name], self._resolve(p.get("schema", {})))
            problems += self.errors(p.get("schema", {}), value, f"{method} {template} {where} {name}")
        request_body = self._resolve(op.get("requestBody")) if op.get("requestBody") else None
        if request_body is None and body is not None:
            problems.append(f"{method} {template}: takes no body")
        elif request_body is not None:
            if body is None:
                if request_body.get("required"):
                    problems.append(f"{method} {template}: the body is required")
            else:
                schema = request_body["content"]["application/json"]["schema"]
                problems += self.errors(schema, body, f"{method} {template} body")
        return template, problems

    def check_response(self, method: str, template: str, status: int, body) -> list[str]:
        op = self.doc["paths"][template][method.lower()]
        answer = op["responses"].get(str(status))
        if answer is None:
            return [f"{method} {template}: answers {status}, which the description does not list"]
        answer = self._resolve(answer)
        content = answer.get("content", {}).get("application/json")
        if content is None:
            return [] if body is None else [f"{method} {template} {status}: the description has no body"]
        return self.errors(content["schema"], body, f"{method} {template} {status} answer")


def _typed(text: str, schema: dict):
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", text):
        return int(text)
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


@dataclass
class Fault:
    method: str
    pattern: str  # a regex searched in the path
    status: int
    headers: dict = field(default_factory=dict)
    body: object = None
    after: bool = False  # do the work, then answer the fault


def user(login: str = "octocat", uid: int = 1) -> dict:
    base = f"https://api.github.com/users/{login}"
    return {"login": login, "id": uid, "node_id": f"U_{uid}", "avatar_url": f"https://avatars.example/{uid}",
            "gravatar_id": "", "url": base, "html_url": f"https://github.com/{login}",
            "followers_url": f"{base}/followers", "following_url": f"{base}/following{{/other_user}}",
            "gists_url": f"{base}/gists{{/gist_id}}", "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{base}/subscriptions", "organizations_url": f"{base}/orgs",
            "repos_url": f"{base}/repos", "events_url": f"{base}/events{{/privacy}}",
            "received_events_url": f"{base}/received_events", "type": "User", "site_admin": False}


# ---------------------------------------------------------------- checks and reviews (issue 40 part B)
# The endpoints forge/checks.py and forge/reviews.py call, in a section of their own: the base
# branch's protection and rules, the check runs and commit statuses of a commit, a pull request's
# reviews and their inline comments. Set them with the helpers below; each answer is checked
# against the description like every other.


def _repository(repo: str) -> dict:
    """A minimal-repository object (the combined status carries one)."""
    owner, name = repo.split("/")
    base = f"https://api.github.com/repos/{owner}/{name}"
    urls = {k: f"{base}/{k.removesuffix('_url')}" for k in (
        "archive_url", "assignees_url", "blobs_url", "branches_url", "collaborators_url", "comments_url",
        "commits_url", "compare_url", "contents_url", "contributors_url", "deployments_url", "downloads_url",
        "events_url", "forks_url", "git_commits_url", "git_refs_url", "git_tags_url", "hooks_url",
        "issue_comment_url", "issue_events_url", "issues_url", "keys_url", "labels_url", "languages_url",
        "merges_url", "milestones_url", "notifications_url", "pulls_url", "releases_url", "stargazers_url",
        "statuses_url", "subscribers_url", "subscription_url", "tags_url", "teams_url", "trees_url")}
    return {**urls, "id": 77, "node_id": "R_77", "name": name, "full_name": repo, "owner": user(owner, 3),
            "private": False, "html_url": f"https://github.com/{repo}", "description": None, "fork": False,
            "url": base}


class ChecksAndReviews:
    """Mixed into StandIn: the state behind the endpoints of this section."""

    def _checks_state(self) -> None:
        if not hasattr(self, "protection"):
            self.protection: dict[str, list[str]] = {}  # branch -> required contexts
            self.rules: dict[str, list[str]] = {}  # branch -> contexts a ruleset requires
            self.runs: dict[str, list[dict]] = {}  # sha -> check runs
            self.statuses: dict[str, list[dict]] = {}  # sha -> commit statuses, newest first
            self.pull_reviews: dict[int, list[dict]] = {}
            self.inline: dict[int, list[dict]] = {}  # review id -> its comments

    def protect(self, branch: str, contexts) -> None:
        """The branch's protection requires ``contexts``."""
        self._checks_state()
        with self.lock:
            self.protection[branch] = list(contexts)

    def ruleset(self, branch: str, contexts) -> None:
        """A ruleset requires ``contexts`` on the branch."""
        self._checks_state()
        with self.lock:
            self.rules[branch] = list(contexts)

    def check_run(self, sha: str, name: str, conclusion: str | None, *, status: str = "completed") -> dict:
        """A check run on ``sha`` (the latest of that name replaces an earlier one); conclusion None
        with status "in_progress" is one still running."""
        self._checks_state()
        owner, repo = self.repo.split("/")
        with self.lock:
            self._next_id += 1
            rid = self._next_id
            run = {"id": rid, "node_id": f"CR_{rid}", "head_sha": sha, "name": name, "external_id": None,
                   "url": f"https://api.github.com/repos/{owner}/{repo}/check-runs/{rid}",
                   "html_url": f"https://github.com/{owner}/{repo}/runs/{rid}", "details_url": None,
                   "status": status, "conclusion": conclusion if status == "completed" else None,
                   "started_at": "2026-12-06T12:00:00Z",
                   "completed_at": "2026-12-06T12:05:00Z" if status == "completed" else None,
                   "output": {"title": None, "summary": None, "text": None, "annotations_count": 0,
                              "annotations_url": f"https://api.github.com/repos/{owner}/{repo}/check-runs/{rid}/annotations"},
                   "check_suite": {"id": 900}, "app": None, "pull_requests": []}
            self.runs[sha] = [r for r in self.runs.get(sha, []) if r["name"] != name] + [run]
        return run

    def status(self, sha: str, context: str, state: str) -> dict:
        """A commit status on ``sha`` (success, pending, failure, error)."""
        self._checks_state()
        owner, repo = self.repo.split("/")
        with self.lock:
            self._next_id += 1
            sid = self._next_id
            found = {"id": sid, "node_id": f"SC_{sid}", "state": state, "context": context,
                     "description": f"{context} says {state}", "target_url": f"https://ci.example/{context}/{sid}",
                     "avatar_url": None, "url": f"https://api.github.com/repos/{owner}/{repo}/statuses/{sha}",
                     "created_at": "2026-12-06T12:00:00Z", "updated_at": "2026-12-06T12:00:00Z"}
            self.statuses[sha] = [found] + self.statuses.get(sha, [])
        return found

    def review(self, pr: int, state: str, body: str = "", comments=(), *, login: str = "reviewer") -> dict:
        """A review of pull request ``pr``; ``comments``: (path, line, body) of its inline comments."""
        self._checks_state()
        owner, repo = self.repo.split("/")
        pull_url = f"https://api.github.com/repos/{owner}/{repo}/pulls/{pr}"
        with self.lock:
            self._next_id += 1
            rid = self._next_id
            found = {"id": rid, "node_id": f"PRR_{rid}", "user": user(login, 9), "body": body, "state": state,
                     "html_url": f"https://github.com/{owner}/{repo}/pull/{pr}#pullrequestreview-{rid}",
                     "pull_request_url": pull_url, "commit_id": "0" * 40, "author_association": "MEMBER",
                     "submitted_at": "2026-12-06T12:10:00Z",
                     "_links": {"html": {"href": f"https://github.com/{owner}/{repo}/pull/{pr}"},
                                "pull_request": {"href": pull_url}}}
            self.pull_reviews.setdefault(pr, []).append(found)
            inline = []
            for path, line, text in comments:
                self._next_id += 1
                cid = self._next_id
                url = f"https://api.github.com/repos/{owner}/{repo}/pulls/comments/{cid}"
                inline.append({"id": cid, "node_id": f"PRRC_{cid}", "url": url, "pull_request_review_id": rid,
                               "diff_hunk": "@@ -1 +1 @@", "path": path, "position": 1, "original_position": 1,
                               "line": line, "commit_id": "0" * 40, "original_commit_id": "0" * 40,
                               "user": user(login, 9), "body": text, "created_at": "2026-12-06T12:10:00Z",
                               "updated_at": "2026-12-06T12:10:00Z",
                               "html_url": f"https://github.com/{owner}/{repo}/pull/{pr}#discussion_r{cid}",
                               "pull_request_url": pull_url, "author_association": "MEMBER",
                               "_links": {"self": {"href": url}, "html": {"href": url}, "pull_request": {"href": pull_url}}})
            self.inline[rid] = inline
        return found

    def _route_checks(self, method: str, template: str, query: dict, path: str):
        """This section's answer, or None when the request is not one of its endpoints."""
        from urllib.parse import unquote

        if method != "GET":
            return None
        self._checks_state()
        values = dict(zip(re.findall(r"\{([^}]+)\}", template),
                          re.fullmatch("^" + re.sub(r"\\\{[^}]+\\\}", "([^/]+)", re.escape(template)) + "$",
                                       path).groups(), strict=True)) if template else {}
        values = {k: unquote(v) for k, v in values.items()}
        not_found = 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
        owner, repo = self.repo.split("/")
        if template == "/repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks":
            contexts = self.protection.get(values["branch"])
            if contexts is None:
                return 404, {"message": "Branch not protected", "documentation_url": "https://docs.github.com/rest"}, {}
            url = f"https://api.github.com/repos/{owner}/{repo}/branches/{values['branch']}/protection/required_status_checks"
            return 200, {"url": url, "contexts_url": url + "/contexts", "strict": False, "contexts": contexts,
                         "checks": [{"context": c, "app_id": None} for c in contexts]}, {}
        if template == "/repos/{owner}/{repo}/rules/branches/{branch}":
            contexts = self.rules.get(values["branch"])
            found = [] if contexts is None else [
                {"type": "required_status_checks", "ruleset_source_type": "Repository", "ruleset_source": self.repo,
                 "ruleset_id": 5, "parameters": {"strict_required_status_checks_policy": False,
                                                 "required_status_checks": [{"context": c} for c in contexts]}}]
            found.append({"type": "deletion", "ruleset_source_type": "Repository", "ruleset_source": self.repo,
                          "ruleset_id": 5})
            return self._page(path, query, found)
        if template == "/repos/{owner}/{repo}/commits/{ref}/check-runs":
            runs = list(self.runs.get(values["ref"], []))
            status, chunk, headers = self._page(path, query, runs)
            return status, {"total_count": len(runs), "check_runs": chunk}, headers
        if template == "/repos/{owner}/{repo}/commits/{ref}/status":
            seen: dict[str, dict] = {}
            for s in self.statuses.get(values["ref"], []):
                seen.setdefault(s["context"], s)  # the newest of each context
            statuses = [{k: s[k] for k in ("id", "node_id", "state", "context", "description", "target_url",
                                            "avatar_url", "url", "created_at", "updated_at")} for s in seen.values()]
            states = {s["state"] for s in statuses}
            state = "failure" if states & {"failure", "error"} else "pending" if "pending" in states or not states \
                else "success"
            status, chunk, headers = self._page(path, query, statuses)
            sha = values["ref"]
            return status, {"state": state, "sha": sha, "total_count": len(statuses), "statuses": chunk,
                            "repository": _repository(self.repo),
                            "commit_url": f"https://api.github.com/repos/{owner}/{repo}/commits/{sha}",
                            "url": f"https://api.github.com/repos/{owner}/{repo}/commits/{sha}/status"}, headers
        if template == "/repos/{owner}/{repo}/pulls/{pull_number}/reviews":
            return self._page(path, query, list(self.pull_reviews.get(int(values["pull_number"]), [])))
        if template == "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments":
            rid = int(values["review_id"])
            if rid not in self.inline:
                return not_found
            return self._page(path, query, list(self.inline[rid]))
        return None


class StandIn(ChecksAndReviews):
    """The server, its repository's issues and comments, the requests it saw, and its faults."""

    def __init__(self, openapi: OpenAPI, repo: str = "octo-org/shop", token: str = TOKEN, per_page_max: int = 100):
        self.openapi = openapi
        self.repo = repo
        self.token = token
        self.per_page_max = per_page_max
        self.issues: dict[int, dict] = {}
        self.comments: dict[int, list[dict]] = {}
        self.faults: list[Fault] = []
        self.requests: list[dict] = []
        self.violations: list[str] = []
        self._next_id = 1000
        self.pulls: dict[int, dict] = {}  # pull requests (land = "pr"), by number
        self.bare: Path | None = None  # the real bare remote their branches are read from and merged into
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="github-standin", daemon=True)

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> StandIn:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    # ------------------------------------------------------------ the repository

    def issue(self, number: int, title: str, body: str | None = "", *, labels=("memento",), state: str = "open",
              state_reason: str | None = None, pull_request: bool = False) -> dict:
        owner, name = self.repo.split("/")
        base = f"https://api.github.com/repos/{owner}/{name}/issues/{number}"
        found = {
            "id": 5000 + number, "node_id": f"I_{number}", "url": base,
            "repository_url": f"https://api.github.com/repos/{owner}/{name}",
            "labels_url": f"{base}/labels{{/name}}", "comments_url": f"{base}/comments",
            "events_url": f"{base}/events", "html_url": f"https://github.com/{owner}/{name}/issues/{number}",
            "number": number, "state": state, "state_reason": state_reason, "title": title, "body": body,
            "user": user(), "labels": [{"id": 7, "node_id": "L_7", "url": f"https://api.github.com/labels/{la}",
                                        "name": la, "description": None, "color": "ededed", "default": False}
                                       for la in labels],
            "assignee": None, "assignees": [], "milestone": None, "locked": False, "comments": 0,
            "closed_at": "2026-12-01T10:00:00Z" if state == "closed" else None,
            "created_at": "2026-12-01T09:00:00Z", "updated_at": "2026-12-01T09:30:00Z",
            "author_association": "OWNER",
        }
        if pull_request:
            found["pull_request"] = {"url": f"{base}/pull", "html_url": f"{base}/pull", "diff_url": f"{base}.diff",
                                     "patch_url": f"{base}.patch", "merged_at": None}
        with self.lock:
            self.issues[number] = found
        return found

    def fail(self, method: str, pattern: str, status: int, *, times: int = 1, headers: dict | None = None,
             body: object = None, after: bool = False) -> None:
        """The next ``times`` requests of ``method`` whose path matches ``pattern`` get ``status``."""
        if body is None:
            body = {"message": {401: "Bad credentials", 403: "API rate limit exceeded", 429: "Too Many Requests",
                                404: "Not Found"}.get(status, "Server Error"),
                    "documentation_url": "https://docs.github.com/rest", "status": str(status)}
        with self.lock:
            self.faults += [Fault(method, pattern, status, dict(headers or {}), body, after) for _ in range(times)]

    def rate_limit(self, method: str, pattern: str, *, times: int = 1, retry_after: int = 0, status: int = 403) -> None:
        headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-used": "5000",
                   "x-ratelimit-reset": "9999999999", "x-ratelimit-resource": "core"}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        self.fail(method, pattern, status, times=times, headers=headers)

    def posted(self, number: int) -> list[str]:
        with self.lock:
            return [c["body"] for c in self.comments.get(number, [])]

    # ------------------------------------------------------------ the server

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                standin._serve(self, "GET")

            def do_POST(self) -> None:
                standin._serve(self, "POST")

            def do_PATCH(self) -> None:
                standin._serve(self, "PATCH")

        return Handler

    def _serve(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        query = parse_qsl(parts.query, keep_blank_values=True)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body = None
        record = {"method": method, "path": parts.path, "query": dict(query),
                  "authorization": h.headers.get("Authorization", ""), "accept": h.headers.get("Accept", "")}
        problems: list[str] = []
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            problems.append(f"{method} {parts.path}: the body is not JSON")
        try:
            template, found = self.openapi.check_request(method, parts.path, query, body)
            problems += found
        except AssertionError as exc:
            template, problems = "", [*problems, str(exc)]
        if "application/vnd.github+json" not in record["accept"]:
            problems.append(f"{method} {parts.path}: Accept is not application/vnd.github+json")
        record["body"] = body
        with self.lock:
            self.requests.append(record)
        if problems:
            with self.lock:
                self.violations += problems
            return self._answer(h, 400, {"message": "; ".join(problems)}, record)
        if record["authorization"] != f"Bearer {self.token}":
            return self._answer(h, 401, {"message": "Bad credentials",
                                         "documentation_url": "https://docs.github.com/rest"}, record)
        fault = self._take_fault(method, parts.path)
        if fault is not None and not fault.after:
            return self._answer(h, fault.status, fault.body, record, fault.headers)
        status, answer, headers = self._route(method, template, parts.path, dict(query), body)
        if fault is not None:
            return self._answer(h, fault.status, fault.body, record, fault.headers)
        if 200 <= status < 300:
            bad = self.openapi.check_response(method, template, status, answer)
            if bad:
                with self.lock:
                    self.violations += bad
        return self._answer(h, status, answer, record, headers)

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for i, f in enumerate(self.faults):
                if f.method == method and re.search(f.pattern, path):
                    return self.faults.pop(i)
        return None

    def _answer(self, h, status: int, body, record: dict, headers: dict | None = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        record["status"] = status
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _route(self, method: str, template: str, path: str, query: dict, body) -> tuple[int, object, dict]:
        prefix = f"/repos/{self.repo}/"
        if not path.startswith(prefix):
            return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
        checks = self._route_checks(method, template, query, path)  # checks and reviews: their own section
        if checks is not None:
            return checks
        if method == "GET" and template == "/repos/{owner}/{repo}/issues":
            return self._list_issues(path, query)
        if path[len(prefix):].startswith("pulls"):
            return self._pulls_route(method, path[len(prefix):], query, body)
        m = re.fullmatch(r"issues/(\d+)/comments", path[len(prefix):])
        if m:
            number = int(m.group(1))
            if number not in self.issues:
                return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
            if method == "POST":
                return 201, self._comment(number, body["body"]), {}
            with self.lock:
                items = list(self.comments.get(number, []))
            return self._page(path, query, items)
        return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}

    def _list_issues(self, path: str, query: dict) -> tuple[int, object, dict]:
        state = query.get("state", "open")
        wanted = [w for w in query.get("labels", "").split(",") if w]
        with self.lock:
            items = sorted(self.issues.values(), key=lambda i: i["number"], reverse=query.get("direction") == "desc")
        items = [i for i in items if state in ("all", i["state"])
                 and all(w in {la["name"] for la in i["labels"]} for w in wanted)]
        return self._page(path, query, items)

    def _page(self, path: str, query: dict, items: list) -> tuple[int, object, dict]:
        per = min(int(query.get("per_page", 30)), self.per_page_max)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per: page * per]
        headers = {}
        if page * per < len(items):
            following = {**query, "page": str(page + 1)}
            link = f"{self.api}{path}?" + "&".join(f"{k}={v}" for k, v in following.items())
            headers["Link"] = f'<{link}>; rel="next"'
        return 200, chunk, headers

    def _comment(self, number: int, text: str) -> dict:
        with self.lock:
            self._next_id += 1
            cid = self._next_id
            owner, name = self.repo.split("/")
            comment = {"id": cid, "node_id": f"IC_{cid}",
                       "url": f"https://api.github.com/repos/{owner}/{name}/issues/comments/{cid}",
                       "html_url": f"https://github.com/{owner}/{name}/issues/{number}#issuecomment-{cid}",
                       "body": text, "user": user("memento-bot", 2), "created_at": "2026-12-06T12:00:00Z",
                       "updated_at": "2026-12-06T12:00:00Z",
                       "issue_url": f"https://api.github.com/repos/{owner}/{name}/issues/{number}",
                       "author_association": "OWNER"}
            self.comments.setdefault(number, []).append(comment)
            self.issues[number]["comments"] += 1
        return comment


# ---------------------------------------------------------------- pull requests (land = "pr")
# The pull request endpoints Memento uses: list with ``head=``, create, get, update; and a merge
# done for real on the bare remote (``StandIn.merge_pull``). A pull request's number is taken from
# the issues' sequence, as GitHub does.


def _fill(openapi: OpenAPI, schema, values: dict | None = None, depth: int = 0):
    """A minimal instance of ``schema``: its required properties, ``values`` first, then a null
    where null is allowed, else a value of the declared type (a URL for a string)."""
    values = values or {}
    schema = openapi._resolve({"$ref": schema} if isinstance(schema, str) else schema)
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf")
        if any(openapi._resolve(o).get("type") == "null" for o in options):
            return None
        return _fill(openapi, options[0], values, depth)
    if "allOf" in schema:
        merged: dict = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            part = openapi._resolve(part)
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
        schema = merged
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" in kinds and depth > 0:
        return None
    if "object" in kinds or "properties" in schema:
        out = {}
        for name in schema.get("required", []):
            if name in values:
                out[name] = values[name]
            else:
                out[name] = _fill(openapi, schema.get("properties", {}).get(name, {}), None, depth + 1)
        return out
    if "enum" in schema:
        return schema["enum"][0]
    if "array" in kinds:
        return []
    if "integer" in kinds or "number" in kinds:
        return 1
    if "boolean" in kinds:
        return False
    if schema.get("format") == "date-time":
        return "2026-12-06T12:00:00Z"
    return "https://api.github.com/x"


def _git_out(bare: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", "-C", str(bare), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def _bare_tip(bare: Path | None, branch: str) -> str:
    if bare is None:
        return ""
    proc = subprocess.run(["git", "-C", str(bare), "rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _pull_object(self: StandIn, pr: dict, simple: bool = False) -> dict:
    owner, name = self.repo.split("/")
    number = pr["number"]
    api = f"https://api.github.com/repos/{owner}/{name}"
    link = {"href": f"{api}/pulls/{number}"}
    repo = _fill(self.openapi, "#/components/schemas/repository",
                 {"id": 77, "node_id": "R_77", "name": name, "full_name": self.repo, "owner": user(owner, 3),
                  "private": False, "fork": False, "default_branch": "main", "description": None})

    def side(branch: str) -> dict:
        return {"label": f"{owner}:{branch}", "ref": branch, "sha": _bare_tip(self.bare, branch) or pr["sha_" + (
            "head" if branch == pr["head"] else "base")], "user": user(owner, 3), "repo": repo}

    values = {
        "url": f"{api}/pulls/{number}", "id": 9000 + number, "node_id": f"PR_{number}",
        "html_url": f"https://github.com/{owner}/{name}/pull/{number}", "number": number,
        "state": pr["state"], "locked": False, "title": pr["title"], "body": pr["body"], "user": user(),
        "labels": [], "milestone": None, "assignee": None, "assignees": [], "requested_reviewers": [],
        "requested_teams": [], "created_at": "2026-12-06T12:00:00Z", "updated_at": "2026-12-06T12:00:00Z",
        "closed_at": pr["closed_at"], "merged_at": pr["merged_at"], "merge_commit_sha": pr["merge_sha"],
        "head": side(pr["head"]), "base": side(pr["base"]), "author_association": "OWNER", "auto_merge": None,
        "draft": False, "_links": {k: link for k in ("comments", "commits", "statuses", "html", "issue",
                                                      "review_comments", "review_comment", "self")},
        "merged": pr["merged_at"] is not None, "mergeable": True, "mergeable_state": "clean", "merged_by": None,
        "comments": 0, "review_comments": 0, "maintainer_can_modify": False, "commits": 1, "additions": 1,
        "deletions": 0, "changed_files": 1,
    }
    return _fill(self.openapi, "#/components/schemas/pull-request" + ("-simple" if simple else ""), values)


def _pulls_route(self: StandIn, method: str, rest: str, query: dict, body) -> tuple[int, object, dict]:
    not_found = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
    if rest == "pulls" and method == "GET":
        owner = self.repo.split("/")[0]
        state = query.get("state", "open")
        with self.lock:
            items = sorted(self.pulls.values(), key=lambda p: p["number"], reverse=query.get("direction") != "asc")
        wanted = query.get("head")
        items = [p for p in items if state in ("all", p["state"]) and (wanted is None or wanted == f"{owner}:{p['head']}")]
        return self._page(f"/repos/{self.repo}/pulls", query, [_pull_object(self, p, simple=True) for p in items])
    if rest == "pulls" and method == "POST":
        head, base = body["head"], body["base"]
        if not _bare_tip(self.bare, head) or not _bare_tip(self.bare, base):
            return 422, {"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
                         "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}]}, {}
        with self.lock:
            if any(p["head"] == head and p["state"] == "open" for p in self.pulls.values()):
                return 422, {"message": f"Validation Failed: A pull request already exists for {head}.",
                             "documentation_url": "https://docs.github.com/rest"}, {}
            number = max([*self.issues, *self.pulls, 0]) + 1
            self.pulls[number] = {"number": number, "title": body.get("title", ""), "body": body.get("body"),
                                  "head": head, "base": base, "state": "open", "closed_at": None, "merged_at": None,
                                  "merge_sha": None, "sha_head": _bare_tip(self.bare, head),
                                  "sha_base": _bare_tip(self.bare, base)}
            pr = dict(self.pulls[number])
        return 201, _pull_object(self, pr), {}
    m = re.fullmatch(r"pulls/(\d+)", rest)
    if m and int(m.group(1)) in self.pulls:
        number = int(m.group(1))
        with self.lock:
            pr = self.pulls[number]
            if method == "PATCH":
                for key in ("title", "body"):
                    if key in body:
                        pr[key] = body[key]
                if body.get("state") in ("open", "closed") and pr["merged_at"] is None:
                    pr["state"] = body["state"]
                    pr["closed_at"] = "2026-12-06T13:00:00Z" if body["state"] == "closed" else None
            pr = dict(pr)
        return 200, _pull_object(self, pr), {}
    return 404, not_found, {}


def merge_pull(self: StandIn, number: int) -> str:
    """Merge pull request ``number`` for real: a merge commit of its head into its base in the bare
    remote (``git merge-tree``, ``commit-tree``, ``update-ref``), the pull request marked merged;
    the merge commit."""
    assert self.bare is not None, "StandIn.bare: the bare remote the pull requests are merged in"
    with self.lock:
        pr = self.pulls[number]
    head, base = _bare_tip(self.bare, pr["head"]), _bare_tip(self.bare, pr["base"])
    env = {**os.environ, "GIT_AUTHOR_NAME": "GitHub", "GIT_AUTHOR_EMAIL": "noreply@github.example",
           "GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.example"}
    tree = _git_out(self.bare, "merge-tree", "--write-tree", base, head).splitlines()[0]
    merge = _git_out(self.bare, "commit-tree", tree, "-p", base, "-p", head, "-m",
                     f"Merge pull request #{number} from {self.repo.split('/')[0]}/{pr['head']}", env=env)
    _git_out(self.bare, "update-ref", f"refs/heads/{pr['base']}", merge, base)
    with self.lock:
        pr.update(state="closed", merged_at="2026-12-06T14:00:00Z", closed_at="2026-12-06T14:00:00Z",
                  merge_sha=merge)
    return merge


def close_pull(self: StandIn, number: int) -> None:
    """Close pull request ``number`` without a merge, as a person's "Close pull request" does."""
    with self.lock:
        self.pulls[number].update(state="closed", closed_at="2026-12-06T14:00:00Z")


StandIn._pulls_route = _pulls_route
StandIn.merge_pull = merge_pull
StandIn.close_pull = close_pull
