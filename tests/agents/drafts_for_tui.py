#!/usr/bin/env python3
"""Fake drafter for the dashboard's plan-draft screen (SPEC §17), run by the `command` preset.

usage: drafts_for_tui.py ACTION, in the project root, the draft prompt on stdin.

  good        append `## Phase 2: Drafted` with T-201 (verify fails: red, as it should) and T-202
              (verify `true`: already passes, a warning), and a line to docs/PROJECT_MAP.md
  no_verify   append T-201 without a verify (refused)
  mark_done   append T-201 born [x] (refused)
  wait FLAG ACTION  write FLAG.started, wait (up to 60 s) for FLAG, then do ACTION
  work        appends a line to greet.txt (a worker whose task's verify is `true`)
  hostile     `good`, with markup and terminal escape sequences in T-201's title and in the map

Every run copies its prompt to $FAKE_DRAFTER_PROMPT when that is set.
"""

import os
import sys
from pathlib import Path

PLAN = Path("docs/MASTER_PLAN.md")

GOOD = """
## Phase 2: Drafted
<!-- depends: Phase 1 -->

- [ ] `T-201` [MODULE:greet] Greet loudly
  - verify: `grep -q LOUD greet.txt`
  - context_files: [greet.txt]
  - retries: 0

- [ ] `T-202` [MODULE:greet] Greet at all
  - verify: `true`
  - context_files: [greet.txt]
  - retries: 0
"""

NO_VERIFY = """
## Phase 2: Drafted
<!-- depends: Phase 1 -->

- [ ] `T-201` Greet without proof
  - context_files: [greet.txt]
  - retries: 0
"""

MARK_DONE = """
## Phase 2: Drafted
<!-- depends: Phase 1 -->

- [x] `T-201` Born done
  - verify: `grep -q LOUD greet.txt`
  - context_files: [greet.txt]
  - retries: 0
"""

HOSTILE = GOOD.replace("Greet loudly", "Greet [bold red]loudly[/] [link=file:///etc/passwd]x[/link] \x1b[31mred")


def main(action, *args):
    prompt = sys.stdin.read()
    if action == "wait":
        import time

        Path(args[0] + ".started").write_text("1", encoding="utf-8")
        end = time.monotonic() + 60
        while not Path(args[0]).exists() and time.monotonic() < end:
            time.sleep(0.02)
        action = args[1]
    out = os.environ.get("FAKE_DRAFTER_PROMPT")
    if out:
        Path(out).write_text(prompt, encoding="utf-8")
    if action == "work":  # a worker's small change (an attempt that changes nothing fails)
        with open("greet.txt", "a", encoding="utf-8") as fh:
            fh.write("worked\n")
        print("worker: greet.txt worked on")
        return
    addition = {"good": GOOD, "no_verify": NO_VERIFY, "mark_done": MARK_DONE, "hostile": HOSTILE}[action]
    PLAN.write_text(PLAN.read_text(encoding="utf-8").rstrip("\n") + "\n" + addition, encoding="utf-8")
    if action in ("good", "hostile"):
        extra = "\x1b]52;c;cHduZWQ=\x07\x1b[2J[bold red]map[/]" if action == "hostile" else ""
        path = Path("docs/PROJECT_MAP.md")
        path.write_text(path.read_text(encoding="utf-8") + f"\n- greet.txt: the greeting (drafted){extra}\n",
                        encoding="utf-8")
    print(f"drafter: {action} done")


if __name__ == "__main__":
    main(*sys.argv[1:])
