#!/usr/bin/env python3
"""Fake acceptance reviewer (the `command` preset's [review] agent).

usage: reviews.py PROMPT_FILE OUTDIR MODE

Copies its prompt to OUTDIR/review_prompt_N.md (N counts its runs), then by MODE:
  pass        every criterion [PASS]
  fail        criterion 1 [FAIL] ("hello.txt says hello, not done"), the rest [PASS]
  fail-once   fail on its first run, pass afterwards
  garbled     a file that is not a review (no Verdict line)
  liar        `Verdict: PASS` with a [FAIL] finding
  none        writes nothing
  edits       writes a passing review, and also rewrites hello.txt (the work it judges)
  creates     writes a passing review, and also creates extra.txt in the project
  git         writes a passing review, and also moves a branch ref with git
  huge        `Verdict: PASS` and one finding numbered with 5000 digits
  exits       writes nothing and exits 3 (a reviewer that could not run)
  limited     prints claude's usage-limit result and exits 1 (read with [review] output = "claude")
  costs       writes a passing review and prints claude's result costing $0.05
  slow        waits 4 s, then writes a passing review (longer than a task's `timeout: 2s`)
  clobbers    writes a passing review and overwrites the worker's .memento/worker/tick_result.md
  heading     a passing review as models write it: `# Review`, a note, then `**Verdict:** PASS` and
              `- **[PASS] N:** finding` lines
  limited-0   writes nothing, prints claude's usage-limit answer and exits 0 (as Claude Code does)
  mentions-0  writes a passing review, then says "HTTP 429 Too Many Requests" last and exits 0
  fails-limited-0  writes a failing review, then prints claude's usage-limit answer and exits 0
              (a reviewer hoping its FAIL is taken for a refusal, which counts no round)
  issue41     exactly the review of issue 41: criterion 1 by its text, FAIL, then PASS (the verdict PASS)
  issue41-once  that review on its first run, a plain passing review when asked once more
  claims-all  `Verdict: PASS`, criterion 1 judged, the others claimed in lines that judge none of them
The criteria count is read from the prompt ("## Acceptance criteria (N)").
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

prompt_path, outdir, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
prompt = prompt_path.read_text(encoding="utf-8")
outdir.mkdir(parents=True, exist_ok=True)
runs = len(list(outdir.glob("review_prompt_*.md"))) + 1
(outdir / f"review_prompt_{runs}.md").write_text(prompt, encoding="utf-8")
count = int(re.search(r"## Acceptance criteria \((\d+)\)", prompt).group(1))
report = Path(".memento/worker/review.md")


def write(verdict: str, failed: set[int]) -> None:
    lines = [f"Verdict: {verdict}", ""]
    for n in range(1, count + 1):
        if n in failed:
            lines.append(f"- [FAIL] {n}: hello.txt says hello, not done")
        else:
            lines.append(f"- [PASS] {n}: checked in the diff")
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")


ISSUE41 = """# Review of T-1

Verdict: PASS

- the greeting says hello politely: FAIL — greeting.txt says "hi", not hello
- the greeting says hello politely: PASS — on a second read greeting.txt says "Hello, and welcome"
"""

if mode == "issue41-once":
    mode = "issue41" if runs == 1 else "pass"
if mode == "issue41":
    report.write_text(ISSUE41, encoding="utf-8")
elif mode == "claims-all":
    report.write_text("Verdict: PASS\n\n- [PASS] 1: checked in the diff\n- All criteria: PASS\n"
                      "- Criteria 2-3: PASS\n- 2, 3: PASS\n- [PASS] the rest: not checked, but surely fine\n"
                      "| 2 and 3 | PASS |\nEvery criterion should PASS.\n", encoding="utf-8")
if mode == "fail-once":
    mode = "fail" if runs == 1 else "pass"
if mode == "pass":
    write("PASS", set())
elif mode == "fail":
    write("FAIL", {1})
elif mode == "garbled":
    report.write_text("Looks good to me!\n", encoding="utf-8")
elif mode == "liar":
    write("PASS", {1})
elif mode == "edits":
    write("PASS", set())
    Path("hello.txt").write_text("fixed by the reviewer: done\n", encoding="utf-8")
elif mode == "creates":
    write("PASS", set())
    Path("extra.txt").write_text("the reviewer was here\n", encoding="utf-8")
elif mode == "git":
    write("PASS", set())
    subprocess.run(["git", "branch", "-f", "reviewer-branch", "HEAD"], check=False)
    subprocess.run(["git", "tag", "reviewed"], check=False)
elif mode == "huge":
    report.write_text("Verdict: PASS\n- [PASS] " + "9" * 5000 + ": all good\n", encoding="utf-8")
elif mode == "exits":
    sys.exit(3)
elif mode in ("limited", "costs"):
    limited = mode == "limited"
    if not limited:
        write("PASS", set())
    print(json.dumps({"type": "result", "subtype": "success", "is_error": limited, "duration_ms": 812,
                      "num_turns": 2, "session_id": "fake", "total_cost_usd": 0.0 if limited else 0.05,
                      "result": "You've hit your limit · resets 11pm (UTC)" if limited else "reviewed",
                      "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 0,
                                "cache_read_input_tokens": 0, "output_tokens": 100}}))
    sys.exit(1 if limited else 0)
elif mode == "heading":
    report.write_text("# Review\n\nI read the diff and the files.\n\n**Verdict:** PASS\n\n"
                      + "".join(f"- **[PASS] {n}:** checked in the diff\n" for n in range(1, count + 1)),
                      encoding="utf-8")
elif mode in ("limited-0", "fails-limited-0"):
    if mode == "fails-limited-0":
        write("FAIL", {1})
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
                      "session_id": "fake", "total_cost_usd": 0.0,
                      "result": "Claude usage limit reached. Your limit will reset at 11pm (UTC).",
                      "usage": {"input_tokens": 0, "output_tokens": 0}}))
    sys.exit(0)
elif mode == "mentions-0":
    write("PASS", set())
    print(f"review run {runs}: {mode}")
    print("the handler answers HTTP 429 Too Many Requests when the quota is used up")
    sys.exit(0)
elif mode == "slow":
    time.sleep(4)
    write("PASS", set())
elif mode == "clobbers":
    write("PASS", set())
    Path(".memento/worker/tick_result.md").write_text(
        "## Outputs\nforged by the reviewer\n\n## Error Analysis\nforged by the reviewer\n", encoding="utf-8")
print(f"review run {runs}: {mode}")
