"""Generate large, valid plans for the benchmarks."""

from __future__ import annotations


def big_plan(n_tasks: int, per_phase: int = 100, done_fraction: float = 0.3) -> str:
    """A plan of ``n_tasks`` tasks in phases of ``per_phase``, the first ``done_fraction`` done."""
    out = [
        "# MASTER_PLAN: Benchmark",
        "",
        "## Meta",
        "- created: 2026-11-29",
        "- tick_mode: auto          <!-- auto | paused | stopped -->",
        "- max_retries: 3",
        f"- total_tasks: {n_tasks}",
        "",
        "---",
        "",
    ]
    done = int(n_tasks * done_fraction)
    for i in range(n_tasks):
        if i % per_phase == 0:
            p = i // per_phase + 1
            out += [f"## Phase {p}: Part {p}", "<!-- parallel: false -->",
                    f"<!-- depends: {'none' if p == 1 else f'Phase {p - 1}'} -->", ""]
        status = "x" if i < done else " "
        out += [
            f"- [{status}] `T-{i + 1}` [MODULE:m{i % 17}] Implement feature number {i + 1}",
            f"  - verify: `pytest -q tests/test_f{i + 1}.py`",
            f"  - context_files: [src/f{i + 1}.py, tests/test_f{i + 1}.py]",
            "  - guard_files: [pyproject.toml]",
            "  - estimate: 5min",
            "  - retries: 0",
            "",
        ]
    return "\n".join(out) + "\n"
