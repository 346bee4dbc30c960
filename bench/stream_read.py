"""Benchmark: what reading a CLI's event stream live adds to an attempt's CPU (SPEC §20, budget ≤ 2 %).

A stand-in CLI prints a 50 MB claude stream-json (tool calls of ~1 KB, their
results of 100 B to 30 KB, as a long attempt prints them), serializing and
flushing each event as a real CLI does, through ``run_in_group`` into a tick
log, as the tick runs the agent: once copied into the log as printed (what
Memento did before, ``stream=None``), once read line by line into ``[tool]``
lines (agents/stream.py). Each run's CPU is Memento's (this process: the
copying thread) and the CLI's (its children); the rounds alternate, the medians
are compared. What the reading adds is Memento's CPU with the stream read minus
without, as a share of the whole attempt's CPU (CLI + Memento) without it. The
stand-in does only what any CLI does per event (``json.dumps`` and a write):
a real CLI also parses the model's answers and runs the tools, so the share
of a real attempt is smaller still.

Run: python bench/stream_read.py [--mb 50] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table import header, print_table  # noqa: E402

from memento_core.agents import run_in_group  # noqa: E402
from memento_core.agents.presets import claude  # noqa: E402
from memento_core.agents.stream import StreamLog  # noqa: E402

BUDGET = 0.02

# The stand-in CLI: every event of the file parsed first (not timed apart: it is the CLI's own
# work before it prints), then each serialized and written with a flush, as a CLI emits it.
CLI = """
import json, sys
events = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
out = sys.stdout
for event in events:
    out.write(json.dumps(event, separators=(",", ":")) + "\\n")
    out.flush()
"""


def make_stream(path: Path, mb: int) -> int:
    """A claude stream-json of ``mb`` MB; returns the number of tool calls in it."""
    rng = random.Random(41)
    size, n = 0, 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "system", "subtype": "init", "cwd": "/p", "tools": ["Bash", "Edit"]}) + "\n")
        while size < mb * 1024 * 1024:
            n += 1
            call = {"type": "assistant", "parent_tool_use_id": None, "session_id": "s",
                    "message": {"id": f"msg_{n}", "role": "assistant", "model": "claude", "content": [
                        {"type": "tool_use", "id": f"toolu_{n}", "name": rng.choice(["Bash", "Edit", "Read", "Grep"]),
                         "input": {"command": "pytest -q tests/test_x.py", "file_path": "/p/src/x.py",
                                   "old_string": "a" * 300, "new_string": "b" * 300}}],
                                "usage": {"input_tokens": 10, "output_tokens": 20}}}
            output = "a line of the tool's output\n" * rng.choice([4, 40, 400, 1100])
            result = {"type": "user", "parent_tool_use_id": None, "session_id": "s",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output}]}}
            for event in (call, result):
                line = json.dumps(event, separators=(",", ":")) + "\n"
                fh.write(line)
                size += len(line)
        fh.write(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                             "total_cost_usd": 1.0, "usage": {"input_tokens": 1, "output_tokens": 1}}) + "\n")
    return n


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def one(root: Path, stream_file: Path, read: bool) -> tuple[float, float, int]:
    """(Memento's CPU s, the CLI's CPU s, the log's size) of one attempt."""
    log = root / f"tick-{'read' if read else 'copy'}.log"
    log.unlink(missing_ok=True)
    stream = StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted, "/p") if read else None
    mine, theirs = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    result = run_in_group([sys.executable, "-c", CLI, str(stream_file)], cwd=root, log_path=log, timeout=600,
                          env=dict(os.environ), stream=stream)
    assert result.exit_code == 0, result
    return _cpu(resource.RUSAGE_SELF) - mine, _cpu(resource.RUSAGE_CHILDREN) - theirs, log.stat().st_size


def rows(mb: int = 50, rounds: int = 5) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        stream_file = root / "stream.jsonl"
        calls = make_stream(stream_file, mb)
        size = stream_file.stat().st_size
        copy, read = [], []
        for _ in range(rounds):
            copy.append(one(root, stream_file, False))
            read.append(one(root, stream_file, True))
    mine_copy = statistics.median(c[0] for c in copy)
    mine_read = statistics.median(r[0] for r in read)
    cli = statistics.median(c[1] for c in copy + read)
    added = mine_read - mine_copy
    share = added / (cli + mine_copy)
    return [
        (f"stream: {size / 1e6:.1f} MB, {calls} tool calls; cores (nproc)", str(os.cpu_count()), "", None),
        ("the stand-in CLI's CPU per attempt, median (s)", f"{cli:.2f}", "", None),
        ("Memento's CPU copying it into the log as printed, median (s)", f"{mine_copy:.3f}", "", None),
        ("Memento's CPU reading it into [tool] lines, median (s)", f"{mine_read:.3f}", "", None),
        ("log size: copied / read (MB)", f"{copy[0][2] / 1e6:.1f} / {read[0][2] / 1e6:.2f}", "", None),
        ("what reading the stream adds to the attempt's CPU", f"{share * 100:+.2f} %", f"≤ {BUDGET * 100:.0f} %",
         share <= BUDGET),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.mb, args.rounds)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
