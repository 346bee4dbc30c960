"""fleet/plan_merge.py (SPEC §12 "Across machines"): the plan's three-way merge when a host's commits are rebased onto the remote's.

The fleets are those of tests/core/test_fleet.py: clones of one bare remote, real ticks.
"""

from __future__ import annotations

from memento_core import fleet
from memento_core.fleet import docs  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.plan.scan import parse_plan_text

from ..test_fleet import plan_text


def _with(text: str, task: str, status: str, retries: int | None = None) -> str:
    lines = text.splitlines(keepends=True)
    out, current = [], None
    for line in lines:
        if f"`{task}`" in line and line.startswith("- ["):
            line = f"- [{status}]" + line[5:]
            current = task
        elif line.startswith("- ["):
            current = None
        if current == task and retries is not None and line.strip().startswith("- retries:"):
            line = f"  - retries: {retries}\n"
        out.append(line)
    return "".join(out)


def test_the_plan_merge_reapplies_this_hosts_edits_only_where_the_remote_left_them():
    base = plan_text(3).replace("- [ ] `T-1`", "- [~] `T-1`").replace("- [ ] `T-2`", "- [~] `T-2`")
    mine = _with(_with(base, "T-1", "x"), "T-2", " ", retries=1)  # T-1 passed here; T-2 reset here
    upstream = _with(base, "T-2", "x", retries=1)  # another host took T-2 over and did it
    upstream = _with(upstream, "T-3", "~").replace("max_retries: 3", "max_retries: 5")  # a person's Meta edit
    merged = parse_plan_text(fleet.docs.merge_plan(None, base.encode(), upstream.encode(), mine.encode()).decode())
    assert [(t.id, t.status, t.retries) for t in merged.tasks] == [("T-1", "x", 0), ("T-2", "x", 1), ("T-3", "~", 0)]
    assert merged.meta.max_retries == 5 and merged.meta.completed_tasks == 2


def _merged(base: str, upstream: str, mine: str):
    notes: list[str] = []
    from memento_core.fleet import plan_merge
    data = plan_merge.merge_plan(base.encode(), upstream.encode(), mine.encode(), notes)
    return (parse_plan_text(data.decode()) if data is not None else None), notes


def test_the_plan_merge_keeps_an_architects_task_edits_and_split_when_the_remote_left_them():
    base = plan_text(3)
    # Here: the architect changed T-2's verify and split T-3 into T-4, T-5 (T-3 removed).
    mine = base.replace("grep -q T-2 out/2.txt", "test -s out/2.txt")
    split = ("- [ ] `T-4` First half\n  - verify: `true`\n  - context_files: [a.txt]\n"
             "- [ ] `T-5` Second half\n  - verify: `true`\n  - context_files: [b.txt]\n")
    start = mine.index("- [ ] `T-3`")
    mine = mine[:start] + split
    # There: another host did T-1 and T-2 (statuses only), a person raised max_retries.
    upstream = _with(_with(base, "T-1", "x"), "T-2", "x", retries=1).replace("max_retries: 3", "max_retries: 5")
    merged, notes = _merged(base, upstream, mine)
    assert [(t.id, t.status, t.retries) for t in merged.tasks] == [
        ("T-1", "x", 0), ("T-2", "x", 1), ("T-4", " ", 0), ("T-5", " ", 0)]
    assert merged.task("T-2").verify == "test -s out/2.txt"
    assert merged.task("T-5").context_files == ("b.txt",)
    assert merged.meta.max_retries == 5 and merged.meta.total_tasks == 4 and merged.meta.completed_tasks == 2
    assert notes == [] and not merged.plan_errors


def test_the_plan_merge_lets_the_remote_win_where_both_changed_a_task_and_says_so():
    base = plan_text(3)
    mine = base.replace("grep -q T-2 out/2.txt", "test -s out/2.txt")  # edited here
    mine = mine[:mine.index("- [ ] `T-3`")]  # T-3 removed here ...
    upstream = base.replace("grep -q T-2 out/2.txt", "false")  # ... T-2 edited there too
    upstream = _with(upstream, "T-3", "x")  # ... and T-3 done there
    merged, notes = _merged(base, upstream, mine)
    assert merged.task("T-2").verify == "false"
    assert merged.task("T-3").status == "x"
    assert len(notes) == 2 and notes[0].startswith("T-2:") and notes[1].startswith("T-3:")


def test_the_plan_merge_of_a_meta_key_both_sides_changed_keeps_the_remotes_and_says_so():
    base = plan_text(2)
    # Here: max_retries 3 -> 4, circuit_breaker_threshold 50 -> 7 (the remote left it), stale as there.
    mine = (base.replace("max_retries: 3", "max_retries: 4").replace("circuit_breaker_threshold: 50",
            "circuit_breaker_threshold: 7").replace("stale_lock_timeout: 15min", "stale_lock_timeout: 1h"))
    # There: max_retries 3 -> 5 (the same key, another value), stale_lock_timeout to the same 1h.
    upstream = base.replace("max_retries: 3", "max_retries: 5").replace("stale_lock_timeout: 15min",
                                                                          "stale_lock_timeout: 1h")
    merged, notes = _merged(base, upstream, mine)
    assert merged.meta.max_retries == 5  # both changed it: the remote's word
    assert merged.meta.circuit_breaker_threshold == 7  # only here: kept
    assert merged.meta.stale_lock_timeout == 3600
    assert notes == ["Meta max_retries: set to '4' here and to '5' on the remote; the remote's stands"]
    # The same edit on both sides is no loss; a key left alone here takes the remote's.
    merged, notes = _merged(base, upstream, upstream)
    assert merged.meta.max_retries == 5 and notes == []
    merged, notes = _merged(base, upstream, base)
    assert merged.meta.max_retries == 5 and merged.meta.circuit_breaker_threshold == 50 and notes == []


def test_the_plan_merge_adds_a_phase_added_here_at_the_end():
    base = plan_text(1)
    mine = base + "\n## Phase 2: More\n<!-- depends: Phase 1 -->\n\n- [ ] `T-9` Later\n  - verify: `true`\n"
    merged, notes = _merged(base, _with(base, "T-1", "x"), mine)
    assert [(t.id, t.status, t.phase) for t in merged.tasks] == [("T-1", "x", "Phase 1"), ("T-9", " ", "Phase 2")]
    assert not merged.plan_errors and notes == []
