"""fleet/docs.py (SPEC §12 "Across machines"): Memento's documents merged across hosts (status log, notes) and the commit ids a rebase moves.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import docs  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.scaffold import init_workspace
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace

from ..test_fleet import context, git, make_fleet


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


def _changed(root) -> list[str]:
    return sorted(line[3:] for line in git(root, "status", "--porcelain").splitlines())


def test_own_documents_are_committed_the_plan_left_out_when_asked_and_the_state_alone_put_back(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    start = git(root, "rev-parse", "HEAD")
    state = root / "docs" / "CURRENT_STATE.md"
    committed_state = state.read_bytes()
    state.write_text("rewritten by this tick\n")
    fleet.docs.commit_own_docs(a)  # the state alone: put back as committed, no commit
    assert git(root, "rev-parse", "HEAD") == start
    assert state.read_bytes() == committed_state and _changed(root) == []

    plan, notes = root / "docs" / "MASTER_PLAN.md", root / "docs" / "HUMAN_NOTES.md"
    plan.write_text(plan.read_text().replace("max_retries: 3", "max_retries: 4"))
    notes.write_text(notes.read_text() + "\nA line this host wrote.\n")
    fleet.docs.commit_own_docs(a, plan=False)  # HEAD holds a claim the work tree's plan has not
    assert git(root, "log", "-1", "--format=%s").strip() == "memento: sync docs"
    assert git(root, "show", "--format=", "--name-only", "HEAD").split() == ["docs/HUMAN_NOTES.md"]
    assert _changed(root) == ["docs/MASTER_PLAN.md"]

    state.write_text("rewritten again\n")
    fleet.docs.commit_own_docs(a)  # the plan by default, and the state beside it is worth the commit
    assert git(root, "show", "--format=", "--name-only", "HEAD").split() == ["docs/CURRENT_STATE.md",
                                                                            "docs/MASTER_PLAN.md"]
    assert _changed(root) == [] and state.read_text() == "rewritten again\n"


def test_a_verify_acknowledged_here_is_committed_alone_saying_so_and_leaves_the_acked_list(tmp_path, monkeypatch):
    from memento_core import verify_changes as vc

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    a.number, a.number_saved = 1, True
    change = vc.VerifyChange("T-1", "grep -q T-1 out/1.txt", "true", "2026-12-07T00:00:00Z")
    vc.record(a.ws, [change])
    assert vc.acknowledge(a.ws, ["T-1"], publish=True) == [change]
    start = git(root, "rev-parse", "HEAD").strip()
    fleet.docs.commit_own_docs(a)
    assert git(root, "log", "--format=%s", f"{start}..HEAD").splitlines() == [
        "memento: a person acknowledged the verify of T-1"]
    assert f"Memento-Verify-Ack: T-1 {vc.digest('true')}" in git(root, "log", "-1", "--format=%B")
    assert git(root, "show", "--format=", "--name-only", "HEAD").split() == ["docs/TICK_STATUS.md"]
    assert "VERIFY CHECKED — T-1" in (root / "docs" / "TICK_STATUS.md").read_text()
    assert "`grep -q T-1 out/1.txt` → `true`" in (root / "docs" / "TICK_STATUS.md").read_text()
    assert vc.unpublished(a.ws) == []
    assert a.tick_commit is None  # its entry names it by sha: the tick's documents never folded into it
    fleet.docs.commit_own_docs(a)  # published once: nothing more to commit
    assert git(root, "log", "--format=%s", f"{start}..HEAD").splitlines() == [
        "memento: a person acknowledged the verify of T-1"]


def _status(*entries: tuple[int, str]) -> bytes:
    from memento_core import status_log

    data = b""
    for n, event in entries:
        data = status_log.with_entry(data, status_log.format_entry(f"2026-12-01T00:00:0{n}Z", n, [("Event", event)]),
                                     None)
    return data


def test_a_conflicted_document_is_resolved_in_the_work_tree_only_by_its_resolver_and_all_three_stages(
        tmp_path, monkeypatch):
    from memento_core import status_log

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    status = root / "docs" / "TICK_STATUS.md"
    before = status.read_bytes()
    # The remote archived e1 (the base's); this side appended e3 after it.
    base, upstream, mine = _status((1, "e1")), _status((2, "e2")), _status((1, "e1"), (3, "e3"))
    for stages in ({1: base, 3: mine}, {1: base, 2: upstream}):  # a side missing (added or deleted there)
        assert fleet.docs._resolve(a, "docs/TICK_STATUS.md", stages) is False
    assert fleet.docs._resolve(a, "src/a.py", {1: b"a\n", 2: b"b\n", 3: b"c\n"}) is False
    assert status.read_bytes() == before
    assert fleet.docs._resolve(a, "docs/TICK_STATUS.md", {1: base, 2: upstream, 3: mine}) is True
    events = [dict(e.fields)["Event"] for e in status_log.parse_status_text(status.read_text())]
    assert events == ["e2", "e3"]  # the base's e1 stays archived; this side's e3 is kept
    # With no base, every entry of this side the remote lacks is kept.
    assert fleet.docs._resolve(a, "docs/TICK_STATUS.md", {2: upstream, 3: mine}) is True
    assert [dict(e.fields)["Event"] for e in status_log.parse_status_text(status.read_text())] == ["e2", "e1", "e3"]


def test_a_document_its_resolver_cannot_merge_is_left_to_the_person(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    plan, notes = root / "docs" / "MASTER_PLAN.md", root / "docs" / "HUMAN_NOTES.md"
    text = plan.read_bytes()
    assert fleet.docs._resolve(a, "docs/MASTER_PLAN.md", {1: text, 2: b"\xff\xfe not utf-8\n", 3: text}) is False
    assert plan.read_bytes() == text
    was = notes.read_bytes()
    new = b"### [NOTE] 2026-12-01T09:00:00 \xe2\x86\x92 T-1\na person's note made here\n"
    assert fleet.docs._resolve(a, "docs/HUMAN_NOTES.md", {1: was, 2: was, 3: was + b"\n" + new}) is False
    assert notes.read_bytes() == was


def test_the_plan_merge_keeps_what_this_host_lost_for_the_status_log(tmp_path, monkeypatch):
    from memento_core import status_log

    from ..test_fleet import plan_text

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    a.number, a.number_saved = 1, True
    base = plan_text(1)
    mine, upstream = base.replace("max_retries: 3", "max_retries: 4"), base.replace("max_retries: 3", "max_retries: 5")
    lost = "Meta max_retries: set to '4' here and to '5' on the remote; the remote's stands"
    alone = fleet.docs.merge_plan(None, base.encode(), upstream.encode(), mine.encode())  # no tick to tell
    assert b"max_retries: 5" in alone
    merged = fleet.docs.merge_plan(a, base.encode(), upstream.encode(), mine.encode())
    assert merged == alone and a.fleet.plan_notes == [lost]
    fleet.docs._say_plan_notes(a)
    assert a.fleet.plan_notes == []
    said = status_log.parse_status_text(a.ws.status_path.read_text())[-1]
    assert dict(said.fields)["Event"] == "⚠️ PLAN MERGE — the remote's plan kept over 1 edit(s) made here"
    assert dict(said.fields)["Reason"] == lost
    entries = a.ws.status_path.read_text()
    fleet.docs._say_plan_notes(a)  # nothing lost since: nothing said
    assert a.ws.status_path.read_text() == entries


def test_notes_merged_keep_the_remotes_file_and_refuse_only_a_note_neither_side_had(tmp_path, monkeypatch):
    from memento_core.notes import parse_notes_text

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    one = "### [NOTE] 2026-12-01T09:00:00 → T-1\nuse the pool\n"
    two = "\n### [NOTE] 2026-12-01T09:05:00 → T-1\nkeep the old API\n"
    read = one.replace("[NOTE]", "[NOTE:READ]")
    # The remote removed note one (a person's edit) and added two; this side read one: the remote's file.
    merged = fleet.docs.merge_notes(a, one.encode(), two.encode(), read.encode())
    assert [(n.text, n.read) for n in parse_notes_text(merged.decode())] == [("keep the old API", False)]
    # Two reached both sides (a person pushed it and this host pulled it): no conflict, read here stays read.
    mine = read + two.replace("[NOTE]", "[NOTE:READ]")
    merged = fleet.docs.merge_notes(a, one.encode(), (one + two).encode(), mine.encode())
    assert [(n.text, n.read) for n in parse_notes_text(merged.decode())] == [
        ("use the pool", True), ("keep the old API", False)]  # two was never unread in the base: not this host's
    assert fleet.docs.merge_notes(a, one.encode(), one.encode(), (one + two).encode()) is None


def test_a_full_commit_id_follows_a_rebase_too(tmp_path):
    root = tmp_path / "proj"
    init_workspace(root, project="p", commit=False)
    ctx = TickContext(Workspace(root))
    old, new = "a" * 40, "b" * 40
    status = ctx.ws.status_path
    status.write_text(f"- **Git Commit**: `{old}`\n- **Git Commit**: `{old[:7]}`\n")
    fleet.docs._fix_commit_shas(ctx, {old: new})
    assert status.read_text() == f"- **Git Commit**: `{new[:7]}`\n- **Git Commit**: `{new[:7]}`\n"


def test_the_state_replayed_is_this_hosts_newer_one(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    stages = {1: b"# state as both had it\n", 2: b"# the remote's state\n", 3: b"# this tick's state\n"}
    assert fleet.docs._resolve(a, "docs/CURRENT_STATE.md", stages) is True
    assert (clones["a"] / "docs" / "CURRENT_STATE.md").read_bytes() == b"# this tick's state\n"
