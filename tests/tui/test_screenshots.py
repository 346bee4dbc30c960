"""screenshots.py: `python -m memento_tui.screenshots --out DIR` runs real ticks on the demo until T-304
blocks and saves each view the README shows, on a machine with no git identity of its own (slow tier:
twelve real ticks)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What each screenshot must show: the view it is named after, at its size (a line per terminal row,
# and one for the window's title).
VIEWS = {
    "main": (41, "Needs you ✖ T-304 blocked after 3 retries"),
    "blocked-task": (41, "Traceback (most recent call last):"),
    "tick-log": (41, "task T-304 [MODULE:quantum] Factor numbers with a quantum computer"),
    "diff": (41, "Diff "),
    "notes-composer": (41, "factor() needs a quantum computer: skip this one"),
    "report": (41, "Report — the last 24h"),
    "help": (41, "Memento dashboard — keys"),
    "plan-draft": (41, "Proposed: 2 new task(s) T-401, T-402"),
    "main-80x24": (25, "Needs you ✖ T-304 blocked"),
    "answer-composer": (41, "1. raise ZeroDivisionError (the CLI prints it)"),
}


def svg_rows(path: Path) -> list[str]:
    """The screenshot's text, one string per row (an SVG of Textual's holds one <text> per run)."""
    rows: dict[float, list[str]] = {}
    for y, text in re.findall(r'<text [^>]*?y="([\d.]+)"[^>]*>([^<]*)</text>', path.read_text(encoding="utf-8")):
        rows.setdefault(float(y), []).append(html.unescape(text).replace("\xa0", " "))
    return ["".join(parts) for _, parts in sorted(rows.items())]


@pytest.mark.slow
def test_every_view_is_saved_from_the_real_app_without_a_git_identity(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(tmp_path / "home"), GIT_CONFIG_NOSYSTEM="1", PYTHONPATH=str(ROOT))
    (tmp_path / "home").mkdir()
    out = tmp_path / "shots"
    done = subprocess.run([sys.executable, "-m", "memento_tui.screenshots", "--out", str(out)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.stem for p in out.glob("*.svg")) == sorted(VIEWS)
    assert done.stdout.splitlines() == [f"[ok] {out / name}.svg" for name in VIEWS]
    for name, (lines, words) in VIEWS.items():
        rows = svg_rows(out / f"{name}.svg")
        assert len(rows) == lines and any(words in row for row in rows), (name, rows)
    diff = svg_rows(out / "diff.svg")
    assert diff[0].startswith("Diff ") and "T-202 Evaluate simple expressions" in diff[0]
    assert any("Author: Memento Demo <demo@memento.invalid>" in row for row in diff)  # the identity it set


async def test_settle_counts_a_worker_its_exclusive_group_replaced_as_done():
    """The CI failure of stop 54: a worker cancelled by a newer one of its group made textual's
    ``wait_for_complete`` raise, and the screenshots stopped; ``settle`` waits for the newer one."""
    import asyncio
    import threading

    from textual.app import App

    from memento_tui.screenshots import settle

    release = threading.Event()
    finished: list[str] = []

    class Two(App):
        def work(self, name: str) -> None:
            release.wait(10)
            finished.append(name)

    app = Two()
    async with app.run_test() as pilot:
        first = app.run_worker(lambda: app.work("first"), thread=True, exclusive=True, group="g")
        waiting = asyncio.create_task(settle(app, pilot))
        await asyncio.sleep(0.05)  # settle now waits on the first worker
        second = app.run_worker(lambda: app.work("second"), thread=True, exclusive=True, group="g")
        release.set()
        await waiting
        assert first.is_cancelled and second.state.name == "SUCCESS"
        assert finished.count("second") == 1
