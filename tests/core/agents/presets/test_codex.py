"""agents/presets/codex.py: `codex exec`'s argv, its items rendered as log lines, its usage summed over
the turns and its usage-limit and 429 messages."""

from __future__ import annotations

from datetime import timedelta

from memento_core.agents import build_invocation
from memento_core.agents.presets import codex
from memento_core.spending import Usage
from tests.core.agents.outputs import NOW, ev, rendered, sample
from tests.core.agents.presets.requests_of import config, request


def test_codex_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("codex"), **req)
    assert inv.argv == (
        "codex", "exec", "--json", "--sandbox", "workspace-write", "--cd", str(tmp_path), "--color", "never",
        "-",
    )
    assert inv.stdin_path == req["prompt_file"]
    inv = build_invocation(config("codex", "gpt-5-codex", ("-c", "x=1")), **req)
    # extra arguments come before the trailing "-" (the prompt is read from stdin)
    assert inv.argv[9:] == ("--model", "gpt-5-codex", "-c", "x=1", "-")
    # In Memento's sandbox codex's own bubblewrap cannot nest: Memento's sandbox confines it instead.
    # `codex exec` never asks for approval; confined, codex's own sandbox is off too (full access).
    inv = build_invocation(config("codex"), **req, confined=True)
    assert inv.argv == (
        "codex", "exec", "--json", "--sandbox", "danger-full-access", "--cd", str(tmp_path),
        "--color", "never", "-",
    )
    assert inv.env == {}


def test_codex_items_are_shown_once_when_they_start():
    item = {"id": "i1", "type": "command_execution", "command": "bash -lc 'pytest -q'",
            "aggregated_output": "", "exit_code": None, "status": "in_progress"}
    data = (ev({"type": "thread.started", "thread_id": "x"}) + ev({"type": "turn.started"})
            + ev({"type": "item.started", "item": item})
            + ev({"type": "item.completed", "item": dict(item, status="completed", exit_code=0)})
            + ev({"type": "item.completed", "item": {"id": "i2", "type": "file_change", "status": "completed",
                                                     "changes": [{"path": "/p/src/x.py", "kind": "update"},
                                                                 {"path": "/p/new.py", "kind": "add"}]}})
            + ev({"type": "item.started", "item": {"id": "i3", "type": "mcp_tool_call", "server": "docs",
                                                   "tool": "search", "arguments": {"query": "bwrap"},
                                                   "status": "in_progress"}})
            + ev({"type": "item.completed", "item": {"id": "i4", "type": "agent_message", "text": "Done."}})
            + ev({"type": "item.completed", "item": {"id": "i5", "type": "reasoning", "text": "hmm"}})
            + ev({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0,
                                                      "output_tokens": 2}})
            + ev({"type": "error", "message": "stream disconnected"}))
    assert rendered(codex.SPEC, data, root="/p").splitlines() == [
        "[tool] shell: bash -lc 'pytest -q'",
        "[tool] Edit: src/x.py",
        "[tool] Write: new.py",
        "[tool] docs.search: bwrap",
        "[error] stream disconnected",
    ]


def test_codex_usage_sums_the_turns_and_has_no_cost():
    text = sample("codex_success.log")
    assert codex.parse_usage(text) == Usage(24763, 122, None)
    doubled = text.replace('{"type":"turn.completed"', '{"type":"turn.completed","usage":{"input_tokens":1,'
                           '"cached_input_tokens":0,"output_tokens":2}}\n{"type":"turn.completed"', 1)
    assert codex.parse_usage(doubled) == Usage(24764, 124, None)
    assert codex.readable(text) == "Wrote hello.txt."


def test_codex_usage_limit_try_again_in():
    limit = codex.rate_limit(sample("codex_usage_limit.log"), NOW)
    assert "usage limit" in limit.message
    assert limit.until == NOW + timedelta(hours=2, minutes=5)


def test_codex_429_after_its_retries():
    limit = codex.rate_limit(sample("codex_429.log"), NOW)
    assert "429" in limit.message and limit.until is None
    assert codex.rate_limit(sample("codex_success.log"), NOW) is None
