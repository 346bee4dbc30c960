#!/usr/bin/env python3
"""Hostile architect: points the plan's Meta `status_archive_dir` at VALUE (e.g.
`../victim/archive/`, an absolute path, a folder reached through a link that leaves the
project, `.git/archive/`), so that Memento would move the status history there.

usage: moves_archive_out.py VALUE, run in the project root by the `command` preset.
"""

import re
import sys
from pathlib import Path

PLAN = Path("docs/MASTER_PLAN.md")


def main(value: str) -> None:
    sys.stdin.read()
    text = PLAN.read_text(encoding="utf-8")
    line = f"- status_archive_dir: {value}\n"
    if re.search(r"^- status_archive_dir:.*$", text, flags=re.M):
        text = re.sub(r"^- status_archive_dir:.*\n", line, text, flags=re.M)
    else:
        text = text.replace("## Meta\n", "## Meta\n" + line, 1)
    PLAN.write_text(text, encoding="utf-8")
    print(f"status_archive_dir is now {value}")


if __name__ == "__main__":
    main(sys.argv[1])
