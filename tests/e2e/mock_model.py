"""A mock model server for the end-to-end tests: the real coding CLIs talk to it.

One threaded HTTP server on 127.0.0.1 (port chosen by the OS) speaks the wire
formats the five CLIs use:

- Anthropic Messages (``POST /v1/messages``, SSE when ``stream``): claude;
- OpenAI Chat Completions (``POST /v1/chat/completions``, SSE or JSON): aider
  through litellm, openclaw with an ``openai-completions`` provider;
- OpenAI Responses (``POST /v1/responses``, SSE): codex;
- Gemini (``:generateContent`` / ``:streamGenerateContent``): gemini-cli.

Each conversation is scripted by the ``Script`` the test sets: the first turn
answers with the CLI's own file-writing tool (chosen from the tools the CLI
sent, so the name and schema are the CLI's), writing ``Script.content`` to
``Script.path``; once the CLI sends the tool's result back, the next turn is a
final text. With ``Script.command`` the first turn instead runs that command
line through the CLI's own shell tool (claude's ``Bash``, codex's shell or
``exec_command``, gemini's ``run_shell_command``, openclaw's ``exec``; aider,
which offers no tools, gets a ```` ```bash ```` block, its shell-command
suggestion). ``Script.mode`` may instead be ``"429"`` (HTTP 429 with a
Retry-After), ``"usage_limit"`` (the provider's quota message) or ``"claim"`` (a
model that claims success and calls no tool: the final text at once). Every answer
carries usage numbers (``USAGE_IN``/``USAGE_OUT``). Every request is kept in
``requests`` so the tests can assert what the CLI sent. With ``hold`` set (a
``threading.Event``), the answer to a request that carries a tool's result (the
turn after the tool call) waits until the event is set: the CLI is still running,
its tool call made, while a test looks at what Memento wrote (SPEC §20).

Nothing here opens a connection: the server only listens on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE_IN = 1234
USAGE_OUT = 56
FINAL_TEXT = "Done: the file is written."
USAGE_LIMIT_TEXT = "You've hit your usage limit. Your limit will reset at 11:30pm (UTC)."
HOLD_MAX = 60.0


@dataclass
class Script:
    """What the mock answers: write ``content`` to ``path`` (absolute) with the CLI's tool."""

    path: str = ""
    content: str = ""
    mode: str = "edit"  # "edit" | "429" | "usage_limit" | "claim" | one of CLAUDE_LIMITS
    relative: str = ""  # the path relative to the project, for CLIs that want it (aider)
    # A command line to run through the CLI's own shell tool instead of writing the file.
    command: str = ""
    # the wire formats ``mode`` applies to ("anthropic", "chat", "responses", "gemini");
    # empty: all. The others answer with the edit (a fallback preset gets through).
    only: tuple[str, ...] = ()
    # claude: read ``path`` with its Read tool first, then write it (its Write tool refuses to
    # overwrite a file the conversation has not read).
    read_first: bool = False


@dataclass
class Logged:
    """One request the mock received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class MockModel:
    """The server and its state; ``start()`` it, point the CLI at ``url``, ``stop()`` it."""

    script: Script = field(default_factory=Script)
    requests: list[Logged] = field(default_factory=list)
    hold: threading.Event | None = None  # the turn after a tool call waits for it (at most HOLD_MAX s)
    # Headers every Anthropic answer carries (the service's anthropic-ratelimit-unified-* levels).
    anthropic_headers: dict[str, str] = field(default_factory=dict)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> MockModel:
        mock = self

        class Handler(_Handler):
            model = mock

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=10)
            self._server = None

    def log(self, entry: Logged) -> None:
        with self._lock:
            self.requests.append(entry)

    def model_requests(self) -> list[Logged]:
        """The requests that asked for a model answer (not version checks or telemetry)."""
        return [r for r in self.requests if r.method == "POST" and _kind(r.path)]


def _kind(path: str) -> str:
    path = path.split("?", 1)[0]
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return ""


class _Handler(BaseHTTPRequestHandler):
    model: MockModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    # ------------------------------------------------------------------ plumbing

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _read_chunked(self) -> bytes:
        data = b""
        while True:
            size = int(self.rfile.readline().strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return data
            data += self.rfile.read(size)
            self.rfile.readline()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, Any]], headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, payload in events:
            chunk = "" if name is None else f"event: {name}\n"
            chunk += "data: " + (payload if isinstance(payload, str) else json.dumps(payload))
            self.wfile.write((chunk + "\n\n").encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.model.log(Logged("GET", self.path, dict(self.headers), None))
        if self.path.split("?")[0].endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}],
                             "models": [{"name": "models/mock-model"}]})
        else:
            self._json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.model.log(Logged("POST", self.path, dict(self.headers), body))
        kind = _kind(self.path)
        if not kind:
            if self.path.split("?")[0].endswith("count_tokens") or "countTokens" in self.path:
                self._json(200, {"input_tokens": 10, "totalTokens": 10})
            else:
                self._json(200, {})
            return
        body = body if isinstance(body, dict) else {}
        hold = self.model.hold
        if hold is not None and _after_tool(kind, body):
            hold.wait(HOLD_MAX)
        script = self.model.script
        mode = script.mode if not script.only or kind in script.only else "edit"
        if mode in ("429", "usage_limit") and _wants_tools(kind, body):
            return self._refuse(kind, mode)
        if mode in CLAUDE_LIMITS and kind == "anthropic" and _wants_tools(kind, body):
            return _refuse_as_claude_limit(self, mode)
        getattr(self, f"_answer_{kind}")(body)

    def _refuse(self, kind: str, mode: str) -> None:
        if mode == "429":
            message = "Rate limit exceeded: too many requests. Please retry after 3600 seconds."
            headers = {"Retry-After": "3600", "retry-after-ms": "3600000",
                       "x-should-retry": "false"}
        else:
            message = USAGE_LIMIT_TEXT
            reset = str(int(time.time()) + 2 * 3600)
            headers = {"x-should-retry": "false",
                       # what Anthropic sends a subscription at its limit (claude words it)
                       "anthropic-ratelimit-unified-status": "rejected",
                       "anthropic-ratelimit-unified-reset": reset,
                       "anthropic-ratelimit-unified-representative-claim": "five_hour"}
        if kind == "anthropic":
            err = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
        elif kind == "gemini" and mode == "429":
            # "Please retry in …" longer than gemini-cli waits: its TerminalQuotaError, no retry
            err = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                             "message": "Resource has been exhausted (e.g. check quota). "
                                        "Please retry in 7200s."}}
        elif kind == "gemini":
            # a per-day quota (google.rpc.QuotaFailure): "You have exhausted your daily quota"
            err = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                             "message": "You exceeded your current quota.",
                             "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                                          "violations": [{
                                              "quotaMetric": "generativelanguage.googleapis.com/"
                                                             "generate_content_free_tier_requests",
                                              "quotaId": "GenerateRequestsPerDayPerProjectPerModel"
                                                         "-FreeTier"}]}]}}
        else:
            code = "rate_limit_exceeded" if mode == "429" else "usage_limit_reached"
            err = {"error": {"message": message, "type": code, "code": code}}
            if mode == "usage_limit":  # codex words the reset from these (ChatGPT's fields)
                err["error"].update(resets_in_seconds=7200, resets_at=int(time.time()) + 7200,
                                    plan_type="plus")
        self._json(429, err, headers)

    # ------------------------------------------------------------------ Anthropic

    def _answer_anthropic(self, body: dict) -> None:
        tools = {t.get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)}
        last = (body.get("messages") or [{}])[-1]
        tool_results = [b for b in _blocks(last.get("content")) if b.get("type") == "tool_result"]
        script = self.model.script
        first = not tool_results and not _said_before(body) and script.mode != "claim"
        tool = "Bash" if script.command else "Write"
        turns = sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant")
        if script.read_first and not script.command:  # Read, then Write, then the final text
            first = (turns == 0 and not tool_results) or (turns == 1 and bool(tool_results))
            tool = "Read" if turns == 0 else "Write"
        if tool in tools and first:
            args = (_shell_args(tools[tool].get("input_schema"), script.command) if script.command
                    else {"file_path": script.path} if tool == "Read"
                    else {"file_path": script.path, "content": script.content})
            block = {"type": "tool_use", "id": f"toolu_{int(time.time() * 1000)}", "name": tool,
                     "input": args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": FINAL_TEXT}
            stop = "end_turn"
        message = {"id": "msg_mock", "type": "message", "role": "assistant",
                   "model": body.get("model", "mock-model"), "content": [block],
                   "stop_reason": stop, "stop_sequence": None,
                   "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT,
                             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
        if not body.get("stream"):
            return self._json(200, message, self.model.anthropic_headers)
        start = dict(message, content=[], stop_reason=None,
                     usage={"input_tokens": USAGE_IN, "output_tokens": 1})
        events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start",
                                                                   "message": start})]
        if block["type"] == "text":
            events += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": block["text"]}}),
            ]
        else:
            events += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": dict(block, input={})}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta",
                                                   "partial_json": json.dumps(block["input"])}}),
            ]
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": USAGE_OUT}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events, self.model.anthropic_headers)

    # ------------------------------------------------------------------ OpenAI Chat

    def _answer_chat(self, body: dict) -> None:
        messages = body.get("messages") or []
        tools = [t.get("function", {}) for t in body.get("tools") or [] if isinstance(t, dict)]
        script = self.model.script
        last_role = messages[-1].get("role") if messages else "user"
        answered = any(isinstance(m, dict) and m.get("role") == "tool" for m in messages)
        tool_call = None
        content = FINAL_TEXT
        if script.mode == "claim":
            pass
        elif tools and not answered:
            tool_call = _chat_tool_call(tools, script)
        elif not tools and last_role == "user":
            # aider: every turn answers with the edit (it re-asks after adding files it saw
            # mentioned, without applying the first answer)
            content = (_aider_shell(script) if script.command
                       else _aider_whole_edit(script, _aider_fence(messages)))
        usage = {"prompt_tokens": USAGE_IN, "completion_tokens": USAGE_OUT,
                 "total_tokens": USAGE_IN + USAGE_OUT}
        created = int(time.time())
        if not body.get("stream"):
            msg: dict[str, Any] = {"role": "assistant", "content": None if tool_call else content}
            if tool_call:
                msg["tool_calls"] = [tool_call]
            return self._json(200, {
                "id": "chatcmpl-mock", "object": "chat.completion", "created": created,
                "model": body.get("model", "mock-model"),
                "choices": [{"index": 0, "message": msg,
                             "finish_reason": "tool_calls" if tool_call else "stop"}],
                "usage": usage})
        base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": created,
                "model": body.get("model", "mock-model")}
        if tool_call:
            delta = {"role": "assistant", "content": None,
                     "tool_calls": [dict(tool_call, index=0)]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": content}
            finish = "stop"
        events: list[tuple[str | None, Any]] = [
            (None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}])),
            (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])),
            (None, dict(base, choices=[], usage=usage)),
            (None, "[DONE]"),
        ]
        self._sse(events)

    # ------------------------------------------------------------------ OpenAI Responses

    def _answer_responses(self, body: dict) -> None:
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        answered = any(isinstance(i, dict) and i.get("type", "").endswith("_output")
                       for i in items)
        tools = body.get("tools") or []
        script = self.model.script
        if tools and not answered and script.mode != "claim":
            item = _responses_tool_call(tools, script)
        else:
            item = {"type": "message", "id": "msg_mock", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]}
        rid = f"resp_mock_{int(time.time() * 1000)}"
        response = {"id": rid, "object": "response", "created_at": int(time.time()),
                    "status": "in_progress", "model": body.get("model", "mock-model"),
                    "output": []}
        usage = {"input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": USAGE_OUT, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": USAGE_IN + USAGE_OUT}
        done = dict(response, status="completed", output=[item], usage=usage)
        self._sse([
            ("response.created", {"type": "response.created", "response": response}),
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ])

    # ------------------------------------------------------------------ Gemini

    def _answer_gemini(self, body: dict) -> None:
        contents = body.get("contents") or []
        last_parts = (contents[-1].get("parts") if contents else None) or []
        answered = any("functionResponse" in p for p in last_parts if isinstance(p, dict))
        declared = {d.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
                    for d in t.get("functionDeclarations") or []}
        script = self.model.script
        gen_config = body.get("generationConfig") or {}
        shell = _gemini_declaration(body, "run_shell_command") if script.command else None
        if script.mode == "claim":
            part = {"text": FINAL_TEXT}
        elif shell is not None and not answered:
            part: dict[str, Any] = {"functionCall": {
                "name": "run_shell_command",
                "args": _shell_args(shell.get("parametersJsonSchema") or shell.get("parameters"),
                                    script.command)}}
        elif "write_file" in declared and not answered and not script.command:
            part = {"functionCall": {
                "name": "write_file", "args": {"file_path": script.path, "content": script.content}}}
        elif gen_config.get("responseMimeType") == "application/json":
            part = {"text": json.dumps(_gemini_json_answer(gen_config))}
        else:
            part = {"text": FINAL_TEXT}
        payload = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                   "finishReason": "STOP", "index": 0}],
                   "usageMetadata": {"promptTokenCount": USAGE_IN, "candidatesTokenCount": USAGE_OUT,
                                     "totalTokenCount": USAGE_IN + USAGE_OUT},
                   "modelVersion": "mock-model"}
        if ":streamGenerateContent" in self.path:
            self._sse([(None, payload)])
        else:
            self._json(200, payload)


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in _blocks(content))
    return content if isinstance(content, str) else ""


def _said_before(body: dict) -> bool:
    """Whether the conversation already holds an assistant turn (the edit was answered)."""
    return any(isinstance(m, dict) and m.get("role") == "assistant" for m in body.get("messages") or [])


def _after_tool(kind: str, body: dict) -> bool:
    """The request carries a tool call's result: the CLI made the call and waits for the next turn."""
    if kind == "anthropic":
        last = (body.get("messages") or [{}])[-1]
        return isinstance(last, dict) and any(b.get("type") == "tool_result" for b in _blocks(last.get("content")))
    if kind == "responses":
        items = body.get("input")
        return isinstance(items, list) and any(isinstance(i, dict) and str(i.get("type", "")).endswith("_output")
                                               for i in items)
    if kind == "gemini":
        contents = body.get("contents") or []
        parts = (contents[-1].get("parts") if contents and isinstance(contents[-1], dict) else None) or []
        return any(isinstance(p, dict) and "functionResponse" in p for p in parts)
    return any(isinstance(m, dict) and m.get("role") == "tool" for m in body.get("messages") or [])


def _wants_tools(kind: str, body: dict) -> bool:
    """The main conversation, which a refusal hits: it offers tools, or is aider's chat.

    Side calls without tools (gemini's model router, claude's title) are answered.
    """
    return kind == "chat" or bool(body.get("tools"))


def _chat_tool_call(tools: list[dict], script: Script) -> dict:
    """A call to the CLI's write tool, found among the tools it offered (openclaw's ``write``)."""
    names = {t.get("name") for t in tools}
    for name in () if script.command else ("write", "Write", "write_file", "create_file"):
        if name in names:
            params = next(t for t in tools if t.get("name") == name).get("parameters") or {}
            props = set((params.get("properties") or {}).keys())
            path_key = next((k for k in ("path", "file_path", "filePath", "file") if k in props),
                            "path")
            args = {path_key: script.path, "content": script.content}
            return {"id": "call_mock_write", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}
    shell = next((n for n in ("exec", "bash", "shell", "Bash") if n in names), None)
    if shell is None:
        raise RuntimeError(f"mock model: no write or shell tool among {sorted(names)}")
    params = next(t for t in tools if t.get("name") == shell).get("parameters")
    args = _shell_args(params, script.command or _shell_write(script))
    return {"id": "call_mock_shell", "type": "function",
            "function": {"name": shell, "arguments": json.dumps(args)}}


def _shell_write(script: Script) -> str:
    import shlex

    return f"printf '%s' {shlex.quote(script.content)} > {shlex.quote(script.path)}"


def _shell_args(schema: Any, command: str) -> dict:
    """Arguments for a shell tool of JSON schema ``schema``: the command line under its key
    (``command`` or ``cmd``), every other required string (a ``description``) filled in."""
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties") or {}
    key = next((k for k in ("command", "cmd") if k in props), next(iter(props), "command"))
    args: dict[str, Any] = {key: command}
    for name in schema.get("required") or []:
        if name not in args and str((props.get(name) or {}).get("type", "string")).lower() == "string":
            args[name] = "Run the task's program"
    return args


def _aider_shell(script: Script) -> str:
    """aider's shell-command suggestion: a ```bash block its diff (editblock) format runs."""
    return f"Run the program that writes the file:\n\n```bash\n{script.command}\n```\n"


def _responses_tool_call(tools: list[dict], script: Script) -> dict:
    """codex: its ``apply_patch`` (freeform or function) when offered, else its shell tool."""
    by_name = {t.get("name") or t.get("type"): t for t in tools if isinstance(t, dict)}
    lines = script.content.splitlines()
    patch = "*** Begin Patch\n*** Add File: " + script.path + "\n"
    patch += "".join(f"+{line}\n" for line in lines) + "*** End Patch\n"
    call_id = f"call_mock_{int(time.time() * 1000)}"
    if "apply_patch" in by_name and not script.command:
        tool = by_name["apply_patch"]
        if tool.get("type") == "custom":
            return {"type": "custom_tool_call", "id": "ctc_mock", "status": "completed",
                    "call_id": call_id, "name": "apply_patch", "input": patch}
        return {"type": "function_call", "id": "fc_mock", "status": "completed",
                "call_id": call_id, "name": "apply_patch",
                "arguments": json.dumps({"input": patch})}
    for name in ("shell", "exec_command", "shell_command"):
        if name in by_name:
            cmd = script.command or _shell_write(script)
            args = ({"command": ["bash", "-lc", cmd]} if name == "shell"
                    # exec_command yields after 10 s by default and codex, told the task is
                    # done, then ends the still-running command: wait the longest it allows
                    else {"cmd": cmd, "yield_time_ms": 30000} if name == "exec_command"
                    else {"command": cmd})
            return {"type": "function_call", "id": "fc_mock", "status": "completed",
                    "call_id": call_id, "name": name, "arguments": json.dumps(args)}
    raise RuntimeError(f"mock model: no apply_patch or shell tool among {sorted(by_name)}")


def _aider_fence(messages: list[dict]) -> tuple[str, str]:
    """The fence aider asked for: it picks another one (````, <source>) when a file has ```."""
    import re

    for message in messages:
        found = re.search(r"Second line: opening (\S+)", _text(message))
        if found:
            opening = found.group(1)
            closing = opening.replace("<", "</", 1) if opening.startswith("<") else opening
            return opening, closing
    return "```", "```"


def _aider_whole_edit(script: Script, fence: tuple[str, str] = ("```", "```")) -> str:
    """aider's ``whole`` edit format: the file's path on a line, then its whole text fenced."""
    name = script.relative or script.path
    body = script.content if script.content.endswith("\n") else script.content + "\n"
    return f"I will write the file.\n\n{name}\n{fence[0]}\n{body}{fence[1]}\n"


def _gemini_declaration(body: dict, name: str) -> dict | None:
    """The function declaration called ``name`` among the tools gemini-cli sent, if any."""
    for tool in body.get("tools") or []:
        for decl in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []:
            if isinstance(decl, dict) and decl.get("name") == name:
                return decl
    return None


def _gemini_json_answer(gen_config: dict) -> dict:
    """An answer for gemini-cli's side calls that want JSON (routing, next speaker)."""
    schema = gen_config.get("responseJsonSchema") or gen_config.get("responseSchema") or {}
    props = schema.get("properties") or {}
    answer: dict[str, Any] = {}
    for key, prop in props.items():
        kind = str((prop or {}).get("type", "string")).lower()
        if key == "next_speaker":
            answer[key] = "user"
        elif (prop or {}).get("enum"):
            answer[key] = prop["enum"][0]
        elif kind in ("number", "integer"):
            answer[key] = 10
        elif kind == "boolean":
            answer[key] = False
        else:
            answer[key] = "mock"
    return answer


# ------------------------------------------------------------------ Claude Code's own usage-limit wordings

# Claude Code (2.1.332) words a limit itself when the account is a subscriber's or a gateway's
# (its fEr(): claude.ai login, or ANTHROPIC_AUTH_TOKEN a JWT with aud "claude-gateway"):
# - "limit": 429 with anthropic-ratelimit-unified-status and -overage-status "rejected" and no
#   representative claim: it prints "You've hit your limit · resets <reset> (<zone>)" (its wi());
# - "limit_old": 429 with -overage-disabled-reason and no claim: it prints error.message as is,
#   here the older wording "Claude usage limit reached. Your limit will reset at <h> (UTC).".
CLAUDE_LIMITS = ("claude_limit", "claude_limit_old")
CLAUDE_OLD_LIMIT_HOUR = 21  # "… will reset at 9pm (UTC)."


def claude_reset_epoch(hours: int = 3) -> int:
    """When the mock says the limit resets: ``hours`` from now, on a whole minute."""
    return (int(time.time()) // 60 + hours * 60) * 60


def window_headers(five_hour: float, seven_day: float, hours: int = 3) -> dict[str, str]:
    """What Anthropic sends a subscription about its usage windows: each window's share used and
    its reset (epoch seconds); the 5-hour one resets in ``hours``, the 7-day one 5 days later."""
    reset = claude_reset_epoch(hours)
    return {"anthropic-ratelimit-unified-status": "allowed_warning" if max(five_hour, seven_day) >= 0.8 else "allowed",
            "anthropic-ratelimit-unified-5h-utilization": str(five_hour),
            "anthropic-ratelimit-unified-5h-reset": str(reset),
            "anthropic-ratelimit-unified-7d-utilization": str(seven_day),
            "anthropic-ratelimit-unified-7d-reset": str(reset + 5 * 86400),
            "anthropic-ratelimit-unified-reset": str(reset),
            "anthropic-ratelimit-unified-representative-claim": "five_hour"}


def gateway_token() -> str:
    """An (unsigned) JWT whose audience makes Claude Code treat the endpoint as a gateway."""
    import base64

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"aud": "claude-gateway", "sub": "e2e", "exp": int(time.time()) + 3600}
    return part({"alg": "none", "typ": "JWT"}) + "." + part(claims) + ".e2e"


def _refuse_as_claude_limit(handler: _Handler, mode: str) -> None:
    if mode == "claude_limit":
        headers = {"x-should-retry": "false", "anthropic-ratelimit-unified-status": "rejected",
                   "anthropic-ratelimit-unified-reset": str(claude_reset_epoch()),
                   "anthropic-ratelimit-unified-overage-status": "rejected"}
        message = "usage limit"
    else:
        headers = {"x-should-retry": "false", "retry-after": "3600",
                   "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled"}
        message = "Claude usage limit reached. Your limit will reset at 9pm (UTC)."
    handler._json(429, {"type": "error", "error": {"type": "rate_limit_error", "message": message}}, headers)
