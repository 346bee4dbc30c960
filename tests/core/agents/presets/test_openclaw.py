"""agents/presets/openclaw.py: `openclaw agent --local`'s argv, a session per prompt."""

from __future__ import annotations

from memento_core import agents
from memento_core.agents import build_invocation
from memento_core.agents.presets.openclaw import openclaw_message
from tests.core.agents.presets.requests_of import config, request


def test_openclaw_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("openclaw", "mock/model", ("--thinking", "high")), **req)
    argv = inv.argv
    assert argv[:4] == ("openclaw", "agent", "--local", "--session-id")
    assert argv[4].startswith("memento-T-1-") and len(argv[4]) == len("memento-T-1-") + 12
    assert argv[5:] == ("--timeout", "1200", "--model", "mock/model", "--thinking", "high",
                        "--message", openclaw_message(agents.AgentRequest(
                            "T-1", None, req["prompt_file"], req["system_prompt_file"], tmp_path)))
    assert str(req["prompt_file"]) in argv[-1] and str(tmp_path) in argv[-1]
    assert inv.stdin_path is None
    # openclaw has no per-run permission flag: its own default (tools.exec.mode unset, no
    # sandbox of its own) runs exec without approval, confined or not.
    assert build_invocation(config("openclaw", "mock/model", ("--thinking", "high")), **req,
                            confined=True).argv == argv
    # A new prompt (a retry carries its failed attempts) is a new session.
    req["prompt_file"].write_text("other prompt\n", encoding="utf-8")
    assert build_invocation(config("openclaw"), **req).argv[4] != argv[4]
