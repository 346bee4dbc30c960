"""fleet/docs.py (SPEC §12 "Across machines"): Memento's documents merged across hosts (status log, notes) and the commit ids a rebase moves.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import docs  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.scaffold import init_workspace
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace

from ..test_fleet import context, make_fleet


def test_the_status_merge_keeps_both_sides_entries(tmp_path):
    from memento_core import status_log

    ws_root = tmp_path / "p"
    (ws_root / "docs").mkdir(parents=True)
    path = ws_root / "docs" / "TICK_STATUS.md"

    def entry(n: int, host: str) -> str:
        return status_log.format_entry(f"2026-12-01T00:00:0{n}Z", n, [("Event", f"e{n}"), ("Host", host)])

    status_log.append_entry(path, entry(1, "a"))
    base = path.read_bytes()
    status_log.append_entry(path, entry(2, "b"))
    upstream = path.read_bytes()
    path.write_bytes(base)
    status_log.append_entry(path, entry(3, "a"))
    mine = path.read_bytes()

    class Ctx:
        ws = Workspace(ws_root)

    merged = fleet.docs.merge_status(Ctx(), base, upstream, mine)
    events = [dict(e.fields).get("Event") for e in status_log.parse_status_text(merged.decode())]
    assert events == ["e1", "e2", "e3"]


def test_a_replayed_notes_file_marks_read_only_what_this_host_read(tmp_path, monkeypatch):
    # Both hosts had notes A and B unread; this host gave A to its worker (read here): the remote's
    # file comes back with A read and B still unread, for the host that works on B.
    from memento_core.notes import parse_notes_text

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    both = ("### [NOTE] 2026-12-01T09:00:00 → T-1\nuse the pool\n\n"
            "### [NOTE] 2026-12-01T09:05:00 → T-2\nkeep the old API\n")
    mine = both.replace("[NOTE] 2026-12-01T09:00:00", "[NOTE:READ] 2026-12-01T09:00:00")
    merged = fleet.docs.merge_notes(a, both.encode(), both.encode(), mine.encode())
    assert [(n.text, n.read) for n in parse_notes_text(merged.decode())] == [
        ("use the pool", True), ("keep the old API", False)]


def test_the_git_commit_fields_follow_a_rebase_and_a_missing_status_log_is_left_missing(tmp_path):
    root = tmp_path / "proj"
    init_workspace(root, project="p", commit=False)
    ctx = TickContext(Workspace(root))
    old, new = "a" * 40, "b" * 40
    status = ctx.ws.status_path
    status.write_text(f"## [x] Tick #1\n- **Git Commit**: `{old[:7]}`\n- **Git Commit**: `1234567`\n")
    fleet.docs._fix_commit_shas(ctx, {old: new})
    assert status.read_text() == f"## [x] Tick #1\n- **Git Commit**: `{new[:7]}`\n- **Git Commit**: `1234567`\n"
    status.unlink()
    fleet.docs._fix_commit_shas(ctx, {old: new})  # nothing to fix, nothing made
    assert not status.exists()
