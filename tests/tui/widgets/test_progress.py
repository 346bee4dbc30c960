"""widgets/progress.py: the bars agree with the list, the time left counts the interval, and each phase shows
its pull request (SPEC §19): its number, its checks and its review; a failing check is in "Needs you" with its
name and pull request; GitHub refusing the token too. Read from `.memento/forge_pulls.json` as the tick
writes it."""

from __future__ import annotations

from memento_core.forge import pulls
from memento_core.forge.pulls import Check, PullRecord
from memento_core.locks import atomic_write_text
from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from tests.tui.pilot import screen_text, settle, wait_for
from tests.tui.snaps import make, ready


def with_pulls(root) -> None:
    pulls.save(Workspace(root), {
        "Phase 1": PullRecord("Phase 1", "memento/foundation", "main", number=12,
                              url="https://github.com/octo-org/calc/pull/12", head="a" * 40, state="merged",
                              checks="passing", review="approved"),
        "Phase 2": PullRecord("Phase 2", "memento/features", "main", number=13,
                              url="https://github.com/octo-org/calc/pull/13", head="b" * 40, state="open",
                              checks="failing", failing=(Check("ci / [bold]test[/]", "https://ci.example/run/7"),),
                              review="changes_requested"),
    })


async def test_each_phase_shows_its_pull_request_and_a_failing_check_needs_you(scripted):
    with_pulls(scripted)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        phase1 = next(line for line in text.splitlines() if "Phase 1" in line and "%" in line)
        phase2 = next(line for line in text.splitlines() if "Phase 2" in line and "%" in line)
        assert "PR #12 merged checks ✓ approved" in phase1
        assert "PR #13 checks ✖ changes requested" in phase2
        assert "Phase 3" in text and "PR #14" not in text
        # The failing check is a needs-you item, its name shown literally (no markup applied).
        assert "✖ check ci / [bold]test[/] fails on pull request #13" in " ".join(text.split())


async def test_compact_progress_still_says_the_pull_request(scripted):
    with_pulls(scripted)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        line = next(ln for ln in screen_text(app).splitlines() if "Phase 1" in ln and "%" in ln)
        assert "#12✓" in line and "#13✖" in line


async def test_a_refused_token_needs_you(scripted):
    atomic_write_text(scripted / ".memento" / "forge_trouble.json",
                      '{"refused": {"since": "2026-11-29T14:05:00Z", "source": "GITHUB_TOKEN", '
                      '"doing": "following the pull requests of 1 phase(s)", "message": "HTTP 401"}}\n')
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: "GitHub refuses the token from GITHUB_TOKEN"
                              in " ".join(screen_text(app).split()))


async def test_a_record_the_tick_writes_shows_without_a_key(scripted):
    app = MementoApp(scripted, show_clock=False)  # watching .memento/, as a person runs it
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert "PR #13" not in screen_text(app)
        with_pulls(scripted)  # what a tick's follow step writes
        assert await wait_for(pilot, lambda: "PR #13 checks ✖" in screen_text(app), tries=200)


async def test_progress_and_the_list_agree_on_a_plan_with_a_duplicate_id(scripted):
    plan = scripted / "docs" / "MASTER_PLAN.md"
    text = plan.read_text()
    block = text[text.index("- [ ] `T-303`"):text.index("- [ ] `T-304`")]
    atomic_write_text(plan, text.replace(block, block + block.replace("Usage notes", "Usage notes again")))
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        total = app.snapshot.summary["counts"]["total"]
        assert f"Tasks ({total})" in screen_text(app) and f"/{total}" in screen_text(app)
        assert "Usage notes again" in screen_text(app)


async def test_the_eta_counts_the_interval_and_the_glyphs_render(scripted):
    app = MementoApp(scripted, auto_tick=True, auto_interval=360, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "left: ~" in text and "(a tick every 6m00s)" in text
        assert "left: ~5m06s" not in text  # the work alone; 5 tasks at one a tick take 24 min or more
        assert "⏸" not in text and "⏹" not in text and "‖ Pause" in text and "■ Stop" in text


def test_main_view_with_pull_requests(scripted, snap_compare):
    """Each phase's pull request beside its bar, a failing check under "Needs you" (SPEC §19)."""
    from tests.tui.widgets.test_progress import with_pulls

    with_pulls(scripted)
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready())
