"""The watcher: real writes, rename-saves, bursts, hashes, errors, polling; and the app refreshing the right pane."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from memento_tui.messages import SnapshotLoaded
from memento_tui.snapshot import LOGS, NOTES, PLAN, STATE
from memento_tui.watcher import WorkspaceWatcher
from tests.tui.pilot import screen_text, settle, wait_for


class Recorder:
    def __init__(self):
        self.calls: list[frozenset[str]] = []
        self.errors: list[str] = []
        self.event = threading.Event()

    def on_change(self, parts):
        self.calls.append(parts)
        self.event.set()

    def on_error(self, text):
        self.errors.append(text)
        self.event.set()

    def wait(self, timeout: float = 10.0) -> bool:
        ok = self.event.wait(timeout)
        self.event.clear()
        return ok

    @property
    def parts(self) -> set[str]:
        return set().union(*self.calls) if self.calls else set()


@pytest.fixture(params=[False, True], ids=["inotify", "polling"])
def watched(request, demo):
    rec = Recorder()
    watcher = WorkspaceWatcher(Workspace(demo), rec.on_change, rec.on_error, debounce=0.05, max_delay=0.3,
                               polling=request.param)
    watcher.start()
    yield demo, watcher, rec
    watcher.stop()
    assert not watcher.alive


def test_a_real_write_is_reported_with_its_part(watched):
    root, _watcher, rec = watched
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text() + "\n")
    assert rec.wait()
    assert rec.calls[-1] == {PLAN}


def test_a_rename_save_is_seen(watched):
    root, _watcher, rec = watched
    notes = root / "docs" / "HUMAN_NOTES.md"
    tmp = root / "docs" / ".HUMAN_NOTES.md.swp"
    tmp.write_text(notes.read_text() + "\n### [NOTE] 2026-11-29T15:00:00 → global\nsaved by rename\n")
    os.replace(tmp, notes)
    assert rec.wait()
    assert NOTES in rec.parts


def test_same_bytes_refresh_nothing(demo):
    rec = Recorder()
    watcher = WorkspaceWatcher(Workspace(demo), rec.on_change, rec.on_error, debounce=0.05, max_delay=0.3)
    watcher.start()
    try:
        plan = demo / "docs" / "MASTER_PLAN.md"
        plan.write_bytes(plan.read_bytes())  # a touch, an editor saving unchanged text
        (demo / ".memento" / "claims").mkdir(parents=True, exist_ok=True)
        (demo / ".memento" / "claims" / "T-101.json").write_text("{}")  # a real change, as a marker
        assert rec.wait()
        assert rec.parts == {STATE}
    finally:
        watcher.stop()


def test_a_burst_of_100_writes_is_a_few_refreshes(demo):
    rec = Recorder()
    watcher = WorkspaceWatcher(Workspace(demo), rec.on_change, rec.on_error, debounce=0.05, max_delay=0.3)
    watcher.start()
    try:
        log = demo / "logs" / "tick_2026-11-29T140000Z.log"
        log.parent.mkdir(exist_ok=True)
        code = (f"import pathlib\np = pathlib.Path({str(log)!r})\n"
                "for i in range(100):\n    p.open('a').write(f'line {i}\\n')\n")
        subprocess.run([sys.executable, "-c", code], check=True)  # another process writes
        assert rec.wait()
        while rec.wait(timeout=1.0):  # until the burst has settled
            pass
        assert rec.parts == {LOGS}
        assert 1 <= len(rec.calls) <= 10
    finally:
        watcher.stop()


def test_a_handler_exception_is_reported_and_the_observer_survives(demo):
    rec = Recorder()
    boom = [True]

    def on_change(parts):
        if boom[0]:
            boom[0] = False
            raise RuntimeError("handler bug")
        rec.on_change(parts)

    watcher = WorkspaceWatcher(Workspace(demo), on_change, rec.on_error, debounce=0.05, max_delay=0.3)
    watcher.start()
    try:
        plan = demo / "docs" / "MASTER_PLAN.md"
        plan.write_text(plan.read_text() + "\n")
        assert rec.wait()
        assert any("handler bug" in e for e in rec.errors)
        assert watcher.alive
        plan.write_text(plan.read_text() + "\n\n")
        assert rec.wait()
        assert rec.calls == [{PLAN}]
    finally:
        watcher.stop()


def test_falls_back_to_polling_when_inotify_fails(demo, monkeypatch):
    import memento_tui.watcher as watcher_module

    def no_inotify():
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watcher_module, "Observer", no_inotify)
    rec = Recorder()
    watcher = WorkspaceWatcher(Workspace(demo), rec.on_change, rec.on_error, debounce=0.05)
    watcher.start()
    try:
        assert watcher.polling and watcher.alive
        assert any("polling" in e for e in rec.errors)
    finally:
        watcher.stop()


def _external_note(root: Path, text: str, rename: bool) -> None:
    """Another process adds a note: a plain write, or an editor's write-temp-then-rename."""
    code = (
        "import os, pathlib, sys\n"
        "p = pathlib.Path(sys.argv[1]); text = p.read_text() + sys.argv[2]\n"
        "if sys.argv[3] == '1':\n"
        "    t = p.with_name('.HUMAN_NOTES.md~'); t.write_text(text); os.replace(t, p)\n"
        "else:\n"
        "    p.write_text(text)\n"
    )
    note = f"\n### [NOTE] 2026-11-29T15:00:00 → global\n{text}\n"
    # Notes go in Active Notes: insert before the section break, as a person would.
    path = root / "docs" / "HUMAN_NOTES.md"
    body = path.read_text().replace("\n---\n\n## Archive", note + "\n---\n\n## Archive")
    subprocess.run([sys.executable, "-c", code.replace("p.read_text() + sys.argv[2]", "sys.argv[2]"),
                    str(path), body, "1" if rename else "0"], check=True)


async def test_a_change_by_another_process_updates_the_right_pane(demo):
    loaded: list[SnapshotLoaded] = []
    app = MementoApp(demo, show_clock=False)

    def hook(message):
        if isinstance(message, SnapshotLoaded):
            loaded.append(message)

    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#tabs").active = "tab-notes"
        await pilot.pause()
        _external_note(demo, "written by another process", rename=False)
        assert await wait_for(pilot, lambda: "written by another process" in screen_text(app))
        assert loaded[-1].parts == {NOTES}  # only the notes were read again
        _external_note(demo, "saved by an editor that renames", rename=True)
        assert await wait_for(pilot, lambda: "saved by an editor that renames" in screen_text(app))

        # the plan, edited outside: the task list follows
        plan = demo / "docs" / "MASTER_PLAN.md"
        subprocess.run([sys.executable, "-c",
                        "import pathlib,sys; p=pathlib.Path(sys.argv[1]); "
                        "p.write_text(p.read_text().replace('- [ ] `T-303`', '- [!] `T-303`'))", str(plan)],
                       check=True)
        assert await wait_for(pilot, lambda: "BLOCKED 0/3" in screen_text(app))

        # a burst of 100 writes: a bounded number of refreshes
        before = len(loaded)
        code = ("import pathlib,sys\np = pathlib.Path(sys.argv[1])\n"
                "for i in range(100):\n    p.write_text(p.read_text() + '\\n')\n")
        subprocess.run([sys.executable, "-c", code, str(plan)], check=True)
        await wait_for(pilot, lambda: len(loaded) > before)
        await wait_for(pilot, lambda: False, tries=10)  # let any trailing flush arrive
        assert 1 <= len(loaded) - before <= 10
    assert app.watcher is None  # stopped on exit
