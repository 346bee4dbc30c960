"""What the coding CLIs print, for the tests of their presets, the stream and the log pipe: the samples
saved in tests/core/fixtures/agent_output/ (each CLI's documented output and its limit messages) and
stream events built as the CLIs print them (claude's stream-json, codex's ``exec --json``, gemini's)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from memento_core.agents.stream import StreamLog


def ev(obj: dict) -> bytes:
    """One event as the CLIs print it: compact JSON on one line."""
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def assistant(block: dict, parent: str | None = None) -> bytes:
    """A claude model turn holding ``block`` (a sub-agent's when ``parent`` names its tool call)."""
    return ev({"type": "assistant", "message": {"role": "assistant", "content": [block]},
               "parent_tool_use_id": parent})


def rendered(spec, data: bytes, chunk: int | None = None, root: str | None = None) -> str:
    """What ``spec``'s renderer writes to the log for ``data`` fed ``chunk`` bytes at a time."""
    log = StreamLog(spec.stream(), spec.stream_wanted, root)
    step = chunk or len(data) or 1
    out = b"".join(log.feed(data[i:i + step]) for i in range(0, len(data), step)) + log.end()
    return out.decode("utf-8", "replace")


CLAUDE = (
    ev({"type": "system", "subtype": "init", "cwd": "/p", "tools": ["Bash"]})
    + assistant({"type": "text", "text": "I will run the tests."})
    + assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}})
    + ev({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1",
                                                   "content": "1 passed"}]}})
    + assistant({"type": "tool_use", "id": "t2", "name": "Edit",
                 "input": {"file_path": "/p/src/x.py", "old_string": "a", "new_string": "b"}})
    + assistant({"type": "tool_use", "id": "t3", "name": "Task", "input": {"description": "Review it"}})
    + assistant({"type": "tool_use", "id": "t4", "name": "Grep", "input": {"pattern": "def main"}}, "t3")
    + assistant({"type": "tool_use", "id": "t5", "name": "Task", "input": {"description": "Deeper"}}, "t3")
    + assistant({"type": "tool_use", "id": "t6", "name": "Read", "input": {"file_path": "/p/a.py"}}, "t5")
    + ev({"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
          "total_cost_usd": 0.01, "usage": {"input_tokens": 5, "output_tokens": 7},
          "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t7",
                                  "tool_input": {"command": "rm -rf build"}}]})
)


CLAUDE_LINES = [
    "[tool] Bash: pytest -q",
    "[tool] Edit: src/x.py",
    "[tool] Task: Review it",
    "  [tool] Grep: def main",
    "  [tool] Task: Deeper",
    "    [tool] Read: a.py",
    "[denied] Bash: rm -rf build",
]


FIXTURES = Path(__file__).parents[1] / "fixtures" / "agent_output"


NOW = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)


def sample(name: str) -> str:
    """A CLI's output as saved in tests/core/fixtures/agent_output/."""
    return (FIXTURES / name).read_text(encoding="utf-8")
