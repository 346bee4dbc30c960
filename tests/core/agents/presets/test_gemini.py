"""agents/presets/gemini.py: gemini's argv (its prompt suffix, the trusted folder), its stream-json
rendered as log lines, its usage and its quota messages."""

from __future__ import annotations

from datetime import timedelta

from memento_core.agents import build_invocation
from memento_core.agents.presets import gemini
from memento_core.agents.presets.gemini import GEMINI_PROMPT_SUFFIX
from memento_core.spending import Usage
from tests.core.agents.outputs import NOW, ev, rendered, sample
from tests.core.agents.presets.requests_of import config, request


def test_gemini_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("gemini"), **req)
    assert inv.argv == ("gemini", "--approval-mode", "auto_edit", "--output-format", "stream-json",
                        "--prompt", GEMINI_PROMPT_SUFFIX)
    assert inv.stdin_path == req["prompt_file"]
    # A fresh install refuses an untrusted folder (exit 55): the project is trusted for the run.
    assert inv.env == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
    inv = build_invocation(config("gemini", "gemini-2.5-pro", ("--debug",)), **req)
    assert inv.argv == ("gemini", "--approval-mode", "auto_edit", "--output-format", "stream-json",
                        "--model", "gemini-2.5-pro", "--debug", "--prompt", GEMINI_PROMPT_SUFFIX)
    # Confined (SPEC §13): every tool approved, its run_shell_command included.
    inv = build_invocation(config("gemini"), **req, confined=True)
    assert inv.argv == ("gemini", "--approval-mode", "yolo", "--output-format", "stream-json",
                        "--prompt", GEMINI_PROMPT_SUFFIX)
    assert inv.env == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


def test_gemini_tool_use_events_and_its_stream_result():
    data = (ev({"type": "init", "session_id": "s", "model": "gemini-2.5-pro"})
            + ev({"type": "message", "role": "user", "content": "Do it"})
            + ev({"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "c1",
                  "parameters": {"command": "pytest -q", "description": "Run the tests"}})
            + ev({"type": "tool_result", "tool_id": "c1", "status": "error", "output": "",
                  "error": {"type": "x", "message": "boom"}})
            + ev({"type": "tool_use", "tool_name": "write_file", "tool_id": "c2",
                  "parameters": {"file_path": "/p/hello.txt", "content": "hi"}})
            + ev({"type": "message", "role": "assistant", "content": "I wrote ", "delta": True})
            + ev({"type": "message", "role": "assistant", "content": "hello.txt.", "delta": True})
            + ev({"type": "result", "status": "success",
                  "stats": {"total_tokens": 1290, "input_tokens": 1234, "output_tokens": 56, "cached": 0,
                            "input": 1234, "duration_ms": 10, "tool_calls": 2, "models": {}}}))
    assert rendered(gemini.SPEC, data, root="/p").splitlines() == [
        "[tool] run_shell_command: pytest -q", "[tool] write_file: hello.txt"]
    text = data.decode()
    assert gemini.parse_usage(text).tokens_in == 1234 and gemini.parse_usage(text).tokens_out == 56
    assert gemini.readable(text) == "I wrote hello.txt."


def test_gemini_stream_error_result_is_its_last_words():
    data = ev({"type": "result", "status": "error",
               "error": {"type": "TerminalQuotaError", "message": "Quota exceeded for quota metric"},
               "stats": {"input_tokens": 0, "output_tokens": 0}}).decode()
    limit = gemini.rate_limit(data)
    assert limit is not None and "Quota exceeded" in limit.message


def test_gemini_usage_sums_every_model_prompt_and_output_tokens():
    assert gemini.parse_usage(sample("gemini_success.log")) == Usage(9312 + 700, 241 + 148 + 12, None)
    assert gemini.readable(sample("gemini_success.log")) == "I have written hello.txt."


def test_gemini_quota_with_reset_after():
    limit = gemini.rate_limit(sample("gemini_quota.log"), NOW)
    assert limit is not None
    assert limit.until == NOW + timedelta(hours=2, minutes=9, seconds=12)
    assert gemini.rate_limit(sample("gemini_success.log"), NOW) is None
