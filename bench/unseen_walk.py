"""Benchmark: the walks below the work tree (tick/unseen.look), on a tree as big as a project's `.venv/`.

A tick walks the work tree three times an attempt: at the snapshot, after the agent and after
verify (nested repositories, paths too long for git: SPEC §13). A `.venv/` or a `node_modules/`
is most of a Python or JavaScript project's folders. Built here: ``--folders`` folders (as
site-packages lays them out, three files each) in a temporary folder, older than the walk by
more than the change-time window (unseen.RACY_NS is set to 0 after a clock tick, as a tree a
person made minutes before the tick is). Each figure is the median CPU of ``--runs`` walks:
- a whole walk, as every walk was before (the file system not trusted: unseen.LOCAL_FILE_SYSTEMS
  emptied for it);
- the snapshot's walk, which stats each folder too (its marks);
- a walk since the snapshot with nothing changed, and with one `.git` planted deep in it (what
  the walks after the agent and after verify cost).

No budget: the figures go to bench/README.md.

Run: python bench/unseen_walk.py [--folders 10000] [--runs 5] [--path DIR (an existing tree instead, only read)]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from table import header, print_table  # noqa: E402

from memento_core.tick import unseen  # noqa: E402


def build(root: Path, folders: int) -> None:
    """``folders`` folders, a package of ten subfolders per top-level one, three files in each."""
    made = 0
    package = 0
    while made < folders:
        top = root / ".venv" / "lib" / "site-packages" / f"package{package}"
        for sub in range(min(10, folders - made)):
            folder = top / f"module{sub}"
            folder.mkdir(parents=True)
            for name in ("__init__.py", "core.py", "util.py"):
                (folder / name).write_text("x = 1\n")
            made += 1
        package += 1


def cpu(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--path", type=Path, default=None, help="an existing tree to walk instead")
    args = parser.parse_args()
    made = None
    if args.path is None:
        made = Path(tempfile.mkdtemp(prefix="memento-unseen-"))
        build(made, args.folders)
    root = args.path or made
    try:
        time.sleep(0.05)  # a clock tick: every folder's ctime is older than the walks below
        unseen.RACY_NS = 0
        trusted = unseen.LOCAL_FILE_SYSTEMS
        unseen.LOCAL_FILE_SYSTEMS = frozenset()
        whole = cpu(lambda: unseen.look(root), args.runs)
        unseen.LOCAL_FILE_SYSTEMS = trusted
        snap = unseen.look(root)
        at_snapshot = cpu(lambda: unseen.look(root), args.runs)
        unchanged = cpu(lambda: unseen.look(root, snap), args.runs)
        changed = unchanged
        if made is not None:  # a tree of --path is only read
            deepest = max(snap.folders, key=lambda f: f.count("/"))
            (root / deepest / ".git").mkdir()
            planted = unseen.look(root, snap)
            assert f"{deepest}/.git" in planted.repos
            changed = cpu(lambda: unseen.look(root, snap), args.runs)
        print(header() + f"  folders: {len(snap.folders)}  marked: {len(snap.marks)}")
        rows = [
            ("a whole walk, as before (ms)", f"{whole * 1000:.0f}", "", None),
            ("the snapshot's walk, a stat more a folder (ms)", f"{at_snapshot * 1000:.0f}", "", None),
            ("a walk since the snapshot, nothing changed (ms)", f"{unchanged * 1000:.0f}", "", None),
            ("a walk since the snapshot, a .git planted deep (ms)",
             f"{changed * 1000:.0f}" if made is not None else "-", "", None),
            ("three walks of an attempt, before / now (ms)",
             f"{3 * whole * 1000:.0f} / {(at_snapshot + 2 * changed) * 1000:.0f}", "", None),
        ]
        return 0 if print_table(rows) else 1
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
