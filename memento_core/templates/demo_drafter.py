#!/usr/bin/env python3
"""The demo's drafter, no model: each line of the brief becomes one task in a new phase.

The demo (memento_core/demo.py) copies this file to its ``scripts/demo_drafter.py`` and names
it in ``[architect]`` (the ``command`` preset), so `memento plan draft` and the dashboard's
composer (`D`) show a real proposal without a model. It reads the draft prompt on standard input
(or from the file its first argument names), finds the brief in it (the fenced text under the
last heading "The brief"), and appends to docs/MASTER_PLAN.md one phase with a task per line of the brief: its
``do:`` writes ``wishes/T-N.md`` (the demo's `script` agent runs it), its ``verify:`` fails
until that file is written, so red first sees each verify fail. It also registers the
``[MODULE:wishes]`` in docs/PROJECT_MAP.md. Standalone: it runs confined in the project, with
nothing of Memento importable.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PLAN = Path("docs/MASTER_PLAN.md")
MAP = Path("docs/PROJECT_MAP.md")
MAX_TASKS = 20
MAX_TITLE = 70


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def _closes(line: str, fence: str) -> bool:
    """``line`` closes a block opened by ``fence``: the same character, at least as many, nothing else."""
    text = line.strip()
    return len(text) >= len(fence) and set(text) == {fence[0]}


def brief_of(prompt: str) -> str:
    """The brief: the fenced text (or else the lines) under the last heading "The brief" outside a fence."""
    lines = prompt.splitlines()
    outside: list[int] = []  # the lines not inside a fence: only there is a heading a heading
    fence = ""
    for i, line in enumerate(lines):
        if fence:
            fence = "" if _closes(line, fence) else fence
        elif _FENCE.match(line):
            fence = _FENCE.match(line).group(1)
        else:
            outside.append(i)
    heads = [i for i in outside if re.match(r"^#+\s+(the\s+)?brief\b[^#]*$", lines[i], flags=re.I)]
    if not heads:
        return ""
    start = heads[-1]
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next((i for i in outside if i > start and re.match(rf"^#{{1,{level}}}\s", lines[i])), len(lines))
    body = lines[start + 1:end]
    opened = next((n for n, line in enumerate(body) if _FENCE.match(line)), None)
    if opened is None:
        return "\n".join(body)
    fence = _FENCE.match(body[opened]).group(1)
    inner = []
    for line in body[opened + 1:]:
        if _closes(line, fence):
            break
        inner.append(line)
    return "\n".join(inner)


def wishes(brief: str) -> list[str]:
    """One wish per line: bullets, numbers, headings, fences and blank lines dropped, backticks made quotes."""
    out = []
    for line in brief.splitlines():
        if line.strip().startswith("#") or _FENCE.match(line):
            continue
        text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).replace("`", "'").strip()
        text = " ".join(text.split())
        if text:
            out.append(text[:MAX_TITLE].rstrip() + ("…" if len(text) > MAX_TITLE else ""))
    return out[:MAX_TASKS]


def draft(plan: str, items: list[str]) -> str:
    phases = re.findall(r"^## Phase (\d+)\b", plan, flags=re.M)
    last = max((int(n) for n in phases), default=0)
    number = last + 1
    used = {int(n) for n in re.findall(r"`T-(\d+)`", plan)}
    out = [plan.rstrip("\n"), "", f"## Phase {number}: From the brief", "<!-- parallel: false -->",
           "<!-- depends: none -->", ""]  # wishes wait on nothing: the demo's T-304 blocks for good
    tid = number * 100
    for item in items:
        tid += 1
        while tid in used:
            tid += 1
        task = f"T-{tid}"
        out += [
            f"- [ ] `{task}` [MODULE:wishes] {item}",
            f"  - verify: `grep -q {task} wishes/{task}.md`",
            f"  - context_files: [wishes/{task}.md]",
            f"  - do: `mkdir -p wishes && echo '{task} done' > wishes/{task}.md`",
            "  - estimate: 1min",
            "  - retries: 0",
            "",
        ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    prompt = sys.stdin.read()
    if not prompt.strip() and len(argv) > 1:
        prompt = Path(argv[1]).read_text(encoding="utf-8")
    items = wishes(brief_of(prompt))
    if not items:
        print("demo drafter: no brief in the prompt, so nothing drafted. It drafts plans from a brief "
              "(memento plan draft, the dashboard's D) and cannot repair one: for `memento architect`, "
              'give [architect] a model, e.g. preset = "claude"', file=sys.stderr)
        return 1
    PLAN.write_text(draft(PLAN.read_text(encoding="utf-8"), items), encoding="utf-8")
    if MAP.exists() and "[MODULE:wishes]" not in MAP.read_text(encoding="utf-8"):
        text = MAP.read_text(encoding="utf-8")
        module = ("### [MODULE:wishes]\n- Purpose: what the brief asked for, one note per wish\n"
                  "- Entry: wishes/\n\n")
        marker = "## File Tree"
        text = text.replace(marker, module + marker, 1) if marker in text else text.rstrip("\n") + "\n\n" + module
        MAP.write_text(text, encoding="utf-8")
    print(f"demo drafter: {len(items)} task(s) drafted from the brief")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
