"""agents/presets/aider.py: aider's argv (Memento's documents read-only, the context files it can
open, its shell commands when confined), its Tokens: lines and litellm's rate-limit errors."""

from __future__ import annotations

import pytest

from memento_core.agents import build_invocation
from memento_core.agents.presets import aider
from memento_core.errors import MementoError
from memento_core.spending import Usage
from tests.core.agents.outputs import NOW, sample
from tests.core.agents.presets.requests_of import config, request

AIDER_COMMON = (
    "--no-auto-commits", "--no-dirty-commits", "--no-gitignore", "--no-git",
    "--no-check-update", "--no-show-release-notes", "--analytics-disable",
    "--no-detect-urls", "--no-pretty", "--no-stream", "--no-fancy-input",
)


AIDER_FLAGS = ("--yes-always", "--no-suggest-shell-commands", *AIDER_COMMON)


def test_aider_argv(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    for doc in ("MASTER_PLAN.md", "PROJECT_MAP.md", "HUMAN_NOTES.md"):  # no CURRENT_STATE.md yet
        (tmp_path / "docs" / doc).write_text("x\n")
    req = request(tmp_path, context_files=["src/app.py", "src/", "tests/*.py", "src", "README.md",
                                           "docs/PROJECT_MAP.md"])
    inv = build_invocation(config("aider", "sonnet", ("--map-tokens", "2048")), **req)
    state = tmp_path / ".memento" / "worker"
    assert inv.argv == (
        "aider", "--message-file", str(req["prompt_file"]),
        "--read", str(req["system_prompt_file"]),
        # Memento's documents are read-only for aider, even when a task names one
        "--read", "docs/MASTER_PLAN.md", "--read", "docs/PROJECT_MAP.md", "--read", "docs/HUMAN_NOTES.md",
        *AIDER_FLAGS,
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
        "--model", "sonnet", "--map-tokens", "2048",
        "src/app.py", "README.md",  # folders and patterns are not files aider can open
    )
    assert inv.stdin_path is None  # the prompt comes from --message-file; stdin is /dev/null


def test_confined_aider_runs_the_shell_commands_it_suggests(tmp_path):
    """--yes-always answers no to "Run shell command?": confined, aider gets no --yes-always and
    answers each question with its default (yes) from /dev/null, its shell commands suggested."""
    req = request(tmp_path, context_files=["a.py"])
    inv = build_invocation(config("aider", "sonnet"), **req, confined=True)
    state = tmp_path / ".memento" / "worker"
    assert inv.argv == (
        "aider", "--message-file", str(req["prompt_file"]), "--read", str(req["system_prompt_file"]),
        "--suggest-shell-commands", *AIDER_COMMON,
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
        "--model", "sonnet", "a.py",
    )
    assert "--yes-always" not in inv.argv and inv.stdin_path is None


def test_aider_reads_context_files_from_the_plan_when_not_given(tmp_path):
    plan = tmp_path / "docs" / "MASTER_PLAN.md"
    plan.parent.mkdir(parents=True)
    plan.write_text(
        "# MASTER_PLAN: x\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: A\n\n"
        "- [ ] `T-1` Do it\n  - verify: `true`\n  - context_files: [a.py, docs/]\n",
        encoding="utf-8")
    inv = build_invocation(config("aider", "sonnet"), **request(tmp_path))
    assert inv.argv[-1] == "a.py" and "docs/" not in inv.argv


def test_aider_without_a_model_refuses_to_start_naming_the_setting(tmp_path):
    with pytest.raises(MementoError, match=r"\[agent\] model"):
        build_invocation(config("aider"), **request(tmp_path))


def test_aider_usage_sums_tokens_lines_and_keeps_the_session_cost():
    # 2.5k sent + 1.4k cache write + 1.1k cache hit, then 12k sent; 345 + 1.2k received
    assert aider.parse_usage(sample("aider_success.log")) == Usage(2500 + 1400 + 1100 + 12000, 345 + 1200, 0.04)


def test_aider_litellm_rate_limit_error():
    limit = aider.rate_limit(sample("aider_rate_limit.log"), NOW)
    assert limit is not None and "rate limited you" in limit.message
    assert aider.rate_limit(sample("aider_success.log"), NOW) is None
