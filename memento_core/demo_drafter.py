#!/usr/bin/env python3
"""The demo's drafter (SPEC §17), no model: each line of the brief becomes one task in a new phase.

`memento demo` copies this file to the demo project's ``scripts/demo_drafter.py`` and names it in
``[architect]`` (the ``command`` preset), so `memento plan draft` and the dashboard's composer
(`D`) show a real proposal without a model. It reads the draft prompt on standard input (or from
the file its first argument names), finds the brief in it (the section whose heading says
"brief"), and appends to docs/MASTER_PLAN.md one phase with a task per line of the brief: its
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


def brief_of(prompt: str) -> str:
    """The text under the first heading that names the brief, to the next heading of its level or above."""
    lines = prompt.splitlines()
    for i, line in enumerate(lines):
        head = re.match(r"^(#+)\s+(.*)$", line)
        if head and "brief" in head.group(2).lower():
            level = len(head.group(1))
            body = []
            for rest in lines[i + 1:]:
                other = re.match(r"^(#+)\s", rest)
                if other and len(other.group(1)) <= level:
                    break
                body.append(rest)
            return "\n".join(body)
    return ""


def wishes(brief: str) -> list[str]:
    """One wish per line: bullets, numbers, headings, fences and blank lines dropped, backticks removed."""
    out = []
    for line in brief.splitlines():
        if line.strip().startswith(("```", "~~~", "#")):
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
        print("demo drafter: no brief found in the prompt; nothing drafted", file=sys.stderr)
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
