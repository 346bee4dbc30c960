"""`memento lint` finds what would make a plan fail later, each with file:line (issue 25,
item 5): a `script` task without `do:`, task lines the format does not read (reported, not
dropped), an unclosed `[` list or backtick, and an unknown field with the nearest known name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PLAN = """# MASTER_PLAN: lint

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
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN)
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
