"""`memento lint` (cli/commands/lint.py), a real subprocess: exit 0, 1 or 2 with a prefixed summary
line, each problem located. It finds what would make a plan fail later, each with file:line (issue 25,
item 5): a `script` task without `do:`, task lines the format does not read (reported, not
dropped), an unclosed `[` list or backtick, and an unknown field with the nearest known name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.core.cli.runs import PLAN, WORDS_PLAN, memento

LINT_PLAN = """# MASTER_PLAN: lint

## Meta
- tick_mode: auto

## Phase 1: Only
<!-- depends: none -->

- [ ] `T-1` [MODULE:x] No do
  - verify: `true`
  - context_files: [a.txt

- [] `T-2` [MODULE:x] An empty box

-[ ] `T-4` [MODULE:x] No space after the dash

- [ ] `T-3` [MODULE:x] A typo
  - verfy: `true`
  - verify: `pytest -q
  - do: `echo hi`
  - context_files: [c.txt]

- [x] `T-5` [MODULE:x] Done long ago, no do needed
  - verify: `true`
  - context_files: [d.txt]

```markdown
- [] `T-9` inside a fence is an example, not a task
```
"""


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", "lint", str(root)], capture_output=True,
                          text=True, timeout=120)


def test_lint_reports_what_would_fail_later_with_lines(tmp_path, git_identity):
    root = tmp_path / "proj"
    subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True, capture_output=True)
    r = lint(root)
    assert r.returncode == 0, r.stdout + r.stderr  # the template's own plan is clean (its task has do:)
    (root / "docs" / "MASTER_PLAN.md").write_text(LINT_PLAN)
    r = lint(root)
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    where = "docs/MASTER_PLAN.md"
    assert f"[warn] {where}:9: T-1 has no `do:` command" in out
    assert f"[error] {where}:11: T-1 context_files: the list's `[` … `]` is not closed" in out
    assert f"[error] {where}:13: T-2 looks like a task but is not read as one" in out
    assert f"[error] {where}:15: T-4 looks like a task but is not read as one" in out
    assert f"[warn] {where}:18: T-3 unknown field `verfy:` is ignored (did you mean `verify`?)" in out
    assert f"[error] {where}:19: T-3 verify: a backtick is never closed" in out
    assert "T-5" not in out and "T-9" not in out and "T-3 has no `do:`" not in out


def test_do_is_not_required_of_a_real_agent(tmp_path, git_identity):
    root = tmp_path / "proj"
    subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True, capture_output=True)
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text("".join(line for line in plan.read_text().splitlines(keepends=True) if "- do:" not in line))
    assert "has no `do:`" in lint(root).stdout + lint(root).stderr
    config = root / "memento.toml"
    config.write_text(config.read_text().replace('preset = "script"', 'preset = "claude"'))
    r = lint(root)
    assert "has no `do:`" not in r.stdout + r.stderr


def test_lint_exit_codes_and_located_messages(ws: Path):
    plan = ws / PLAN
    plan.write_text(plan.read_text() + "\n- [ ] T-102 Second\n  - context_files: []\n")
    r = memento("lint", cwd=ws / "docs")  # found by searching upwards
    assert r.returncode == 2
    assert "[error] docs/MASTER_PLAN.md:31: T-102 has no verify command" in r.stderr
    plan.write_text(plan.read_text() + "  - verify: true\n- [ ] not a task\n")
    r = memento("lint", str(ws))
    assert r.returncode == 1 and "[warn] docs/MASTER_PLAN.md:34: checkbox line without a task id" in r.stdout


def test_the_lint_summary_has_a_prefix(words_ws: Path):
    r = memento("lint", str(words_ws))
    assert r.returncode == 0 and r.stdout == "[ok] docs/MASTER_PLAN.md: 2 tasks in 1 phase, no problems\n"
    (words_ws / PLAN).write_text(WORDS_PLAN + "\n- [ ] not a task\n")
    r = memento("lint", str(words_ws))
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "[warn] docs/MASTER_PLAN.md: 2 tasks in 1 phase, 1 warning"
    (words_ws / PLAN).write_text(WORDS_PLAN.replace("max_retries: 2", "max_retries: lots") + "\n- [ ] not a task\n")
    r = memento("lint", str(words_ws))
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == "[error] docs/MASTER_PLAN.md: 2 tasks in 1 phase, 1 error, 1 warning"
