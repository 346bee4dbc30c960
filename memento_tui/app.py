"""memento-tui: the App (thin), its refresh and tick machinery, and the command line.

The App owns what is app-wide: the workspace, the watcher, the current
snapshot (refreshed part by part in a thread worker, never two at once, like
dolphie's refresh loop), the tick worker and the auto-tick countdown. What
several widgets show is a reactive here (``snapshot``, ``ticking``,
``auto_tick``, ``next_tick_at``, ``now``; see app_state.py) that they watch,
so the App never calls into a screen. Panes and actions live in screens/ and
widgets/.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import App
from textual.reactive import var

from memento_core import __version__
from memento_core.errors import MementoError
from memento_core.tick.__main__ import preload, run_tick
from memento_core.workspace import Workspace

from . import snapshot as snapshots
from .chat_reader import ChatReader
from .commands import MementoCommands
from .keymap import APP_KEYS, bindings, conflicts, key_line, user_keymap
from .literal import clean_line
from .messages import (
    ActionDone,
    FilesChanged,
    SnapshotLoaded,
    TickFinished,
    WatcherTrouble,
)
from .screens.dashboard import DashboardScreen
from .screens.help import HelpScreen
from .snapshot import ALL_PARTS, CHECKPOINT, CONFIG, Snapshot
from .watcher import WorkspaceWatcher

DEMO_INTERVAL = 3.0


class MementoApp(App[None]):
    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "Memento"
    BINDINGS = bindings(APP_KEYS)
    COMMANDS = App.COMMANDS | {MementoCommands}

    # Shared state (app_state.AppState): the header, the controls and the panes watch these.
    # Every snapshot is news (only its parts_read were read again), so no equality check.
    snapshot: var[Snapshot | None] = var(None, always_update=True)
    ticking: var[bool] = var(False)
    auto_tick: var[bool] = var(False)
    next_tick_at: var[float | None] = var(None)
    now: var[float] = var(0.0)

    def __init__(
        self,
        root: Path | str,
        *,
        auto_tick: bool = False,
        auto_interval: float | None = None,
        watch: bool = True,
        polling: bool = False,
        show_clock: bool = True,
        clock: Callable[[], float] = time.monotonic,
        served: bool = False,
    ):
        super().__init__()
        self.quit_requested = False
        self.served = served  # run by `--serve` for a web browser: a person's answer comes "from browser"
        self.ws = Workspace(Path(root).resolve())
        self.auto_tick = auto_tick
        self.auto_interval = auto_interval  # seconds; None: memento.toml [schedule] every
        self.watch_files = watch
        self.polling = polling
        self.show_clock = show_clock
        self.clock = clock
        self.started_at = clock()
        self.now = self.started_at
        self.watcher: WorkspaceWatcher | None = None
        self.keymap_overrides: dict[str, str] = {}
        self.refreshes = 0  # snapshots applied (tests count them)
        self.first_paint_at: float | None = None  # perf_counter when the first snapshot was painted
        self.last_outcome = None
        self._dirty: set[str] = set()
        self._loading = False
        self._keys_from: dict[str, str] | None = None
        self._reschedule = False
        self._tick_thread: threading.Thread | None = None  # the thread of a tick started here
        self._hangup_before = None  # SIGHUP's handler before this app's (restored at unmount)
        self.chat = ChatReader(self)  # [chat]: replies and commands read while the dashboard runs

    # ------------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        self.push_screen(DashboardScreen())
        if self.watch_files:
            self.watcher = WorkspaceWatcher(
                self.ws,
                on_change=lambda parts: self.post_message(FilesChanged(set(parts))),
                on_error=lambda text: self.post_message(WatcherTrouble(text)),
                polling=self.polling,
            )
            try:
                self.watcher.start()
            except Exception as exc:  # never fatal: the dashboard still refreshes after its own edits
                self.notify(f"file watcher unavailable: {exc}", severity="error")
                self.watcher = None
        self.request_refresh(ALL_PARTS)
        self.set_interval(1.0, self.every_second)
        self._catch_hangup()

    # The terminal goes away (SSH dropped, the tmux window killed) at any moment: while the
    # dashboard runs, or after q while it shuts down. A hung-up terminal fails every write
    # (Textual's writer thread dies on EIO and the next 30 writes block the event loop
    # forever) and reads as endless EOF (its input thread spins): an asyncio signal callback
    # would never run, and the process would linger with PPID 1 burning CPU. So SIGHUP gets a
    # plain signal handler, which runs even while the loop is blocked: the terminal's
    # descriptors are swapped for harmless ones, the app is asked to exit, and a watchdog
    # ends the process if it has not gone within HANGUP_GRACE seconds (a tick the dashboard
    # started is let finish first, as after q). From Unmount on, SIGHUP's default applies
    # (the kernel ends the process): nothing is left to save by then.
    HANGUP_GRACE = 3.0

    def _catch_hangup(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self._loop = asyncio.get_running_loop()
        self._hangup_before = signal.signal(signal.SIGHUP, self._on_sighup)

    def _on_sighup(self, _signum, _frame) -> None:
        """SIGHUP, in the main thread between two bytecodes (even inside a blocked queue.put)."""
        if not self.is_headless:
            leave_the_terminal()
            threading.Thread(target=self._exit_when_done, name="memento-hangup", daemon=True).start()
        self._loop.call_soon_threadsafe(self._hangup)

    def _hangup(self) -> None:
        """The terminal went away: leave, do not linger burning CPU."""
        self.exit(return_code=129)

    def _exit_when_done(self) -> None:
        """The watchdog: once a tick this dashboard started has finished, HANGUP_GRACE seconds
        for the exit to complete, then the process ends whatever blocks it."""
        deadline = time.monotonic() + self.HANGUP_GRACE
        while True:
            time.sleep(0.1)
            tick = self._tick_thread
            if tick is not None and tick.is_alive():
                deadline = time.monotonic() + self.HANGUP_GRACE
            elif time.monotonic() > deadline:
                os._exit(129)

    def on_unmount(self) -> None:
        self.stop_watcher()
        if getattr(self, "_hangup_before", None) is not None:
            signal.signal(signal.SIGHUP, self._hangup_before)
            self._hangup_before = None

    def stop_watcher(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    # ------------------------------------------------------------------ refresh

    def request_refresh(self, parts: frozenset[str] | set[str]) -> None:
        """Read ``parts`` again; while a refresh runs, changes wait and are read right after it."""
        self._dirty |= set(parts)
        if self._loading or not self._dirty:
            return
        self._loading = True
        wanted, self._dirty = frozenset(self._dirty), set()
        self._load(wanted, self.snapshot)

    @work(thread=True, group="refresh", exit_on_error=False, description="read the workspace files")
    def _load(self, parts: frozenset[str], previous: Snapshot | None) -> None:
        try:
            snap = snapshots.load(self.ws, parts, previous)
        except Exception as exc:
            self.post_message(WatcherTrouble(f"could not read the workspace: {type(exc).__name__}: {exc}"))
            if previous is not None:
                snap = replace(previous, parts_read=frozenset(parts))
            else:
                snap = Snapshot(self.ws, plan_error=str(exc))
        self.post_message(SnapshotLoaded(snap))

    def on_snapshot_loaded(self, message: SnapshotLoaded) -> None:
        snap = message.snapshot
        self.refreshes += 1
        if CONFIG in snap.parts_read:
            self._apply_keymap(snap)
        self.snapshot = snap  # the dashboard screen, the header and the controls redraw from it
        self._follow_schedule(snap)
        self._loading = False
        if self.refreshes == 1:
            self.call_after_refresh(self._painted)
        if self._dirty:
            self.request_refresh(set())

    def _follow_schedule(self, snap: Snapshot) -> None:
        """Start or stop the countdown as the pipeline can or cannot tick; restart it on a new interval."""
        if not self.auto_tick or self.ticking:
            return
        if not self.can_auto_tick():
            self.next_tick_at = None  # blocked, paused, complete: no countdown to a tick that does nothing
        elif self.next_tick_at is None or (self._reschedule and CONFIG in snap.parts_read):
            self._schedule_next_tick()
        if CONFIG in snap.parts_read:
            self._reschedule = False

    def _painted(self) -> None:
        self.first_paint_at = time.perf_counter()
        # The tick's modules, imported here before a tick's thread or the doctor's needs them:
        # two threads importing one package at once can meet each other's half-made modules.
        preload()
        self.request_refresh({CHECKPOINT})  # the doctor, deferred past the first paint

    def on_files_changed(self, message: FilesChanged) -> None:
        self.request_refresh(message.parts)

    def on_watcher_trouble(self, message: WatcherTrouble) -> None:
        self.notify(message.text, severity="warning", timeout=8)

    def on_action_done(self, message: ActionDone) -> None:
        self.notify(message.text, severity="error" if message.error else "information",
                    timeout=6 if message.error else 3)

    def _apply_keymap(self, snap: Snapshot) -> None:
        keys = snap.config.keys
        if keys == self._keys_from:
            return
        self._keys_from = dict(keys)
        from memento_core.config.lint import key_problem

        keymap, unknown = user_keymap(keys)
        try:
            toml = self.ws.config_path.read_text(encoding="utf-8")
        except OSError:
            toml = ""
        for action in [a for a in keymap if key_problem(keymap[a])]:  # not a key, or tmux's / the terminal's
            line = key_line(toml, action)
            where = f"{self.ws.config_path}:{line}" if line else str(self.ws.config_path)
            self.notify(f"{where}: [keys] {action} = {keymap.pop(action)!r} is refused: {key_problem(keys[action])}; "
                        f"{action} keeps its own key", severity="error", timeout=15)
        refused = conflicts(keymap)
        keymap = {action: key for action, key in keymap.items() if action not in refused}
        self.keymap_overrides = keymap
        self.set_keymap(keymap)
        if unknown:
            self.notify("memento.toml [keys]: unknown action(s) " + ", ".join(sorted(unknown)),
                        severity="warning")
        if refused:
            for action, other in refused.items():
                line = key_line(toml, action)
                where = f"{self.ws.config_path}:{line}" if line else str(self.ws.config_path)
                self.notify(f"{where}: [keys] {action} = {keys[action]!r} is refused: that key is {other}'s "
                            f"(it would lose {other}); {action} keeps its own key", severity="error", timeout=15)

    # ------------------------------------------------------------------ clock

    def interval(self) -> float:
        """Seconds between auto-ticks: --demo's until a person sets one, else memento.toml [schedule] every."""
        if self.auto_interval is not None:
            return self.auto_interval
        return self.snapshot.config.schedule_every if self.snapshot else 300.0

    def interval_text(self) -> str:
        """The interval the Controls show: the one the countdown uses."""
        if self.auto_interval is not None:
            from memento_core.durations import format_duration

            return format_duration(self.auto_interval)
        return self.snapshot.config.schedule_every_text if self.snapshot else "5min"

    def interval_changed(self) -> None:
        """A person set the interval (memento.toml): it replaces --demo's, and the countdown restarts."""
        self.auto_interval = None
        self._reschedule = True
        self.request_refresh({CONFIG})

    def tick_interval(self) -> float | None:
        """Seconds between the ticks that will really run: cron's schedule, auto-tick's, or None."""
        snap = self.snapshot
        if snap is None:
            return None
        if snap.cron_installed and snap.cron_daemon:
            from memento_core.cron import schedule_for
            from memento_core.errors import MementoError

            try:
                return float(schedule_for(snap.config.schedule_every_text).seconds)
            except MementoError:
                return snap.config.schedule_every
        return self.interval() if self.auto_tick else None

    def until_next_tick(self) -> float:
        """Seconds until the next tick starts: 0 while one runs, the countdown's rest under auto-tick,
        a whole interval under cron (its minute is not known here)."""
        snap = self.snapshot
        if self.ticking or snap is None:
            return 0.0
        if snap.cron_installed and snap.cron_daemon:
            return self.tick_interval() or 0.0
        if self.auto_tick and self.next_tick_at is not None:
            return max(0.0, self.next_tick_at - self.clock())
        return 0.0

    def can_auto_tick(self) -> bool:
        """Auto-tick runs only when a tick could do work: not blocked, paused, stopped, complete or invalid."""
        snap = self.snapshot
        if snap is None or not snap.summary:
            return False
        if snap.cron_installed and snap.cron_daemon:
            return False  # the cron entry runs the ticks
        return snap.summary.get("plan_state") == "RUNNING"

    def every_second(self) -> None:
        """The beat: keep the watcher alive, move the clock the header shows, start a due auto-tick."""
        if self.watcher is not None:
            self.watcher.ensure_alive()
        self.now = self.clock()
        self.maybe_auto_tick()
        self.chat.beat()

    # ------------------------------------------------------------------ ticks

    def toggle_auto_tick(self) -> None:
        snap = self.snapshot
        if snap is not None and snap.cron_installed and snap.cron_daemon and not self.auto_tick:
            self.notify("a cron entry runs the ticks; the dashboard does not tick by itself", severity="warning")
            return
        self.auto_tick = not self.auto_tick
        self.next_tick_at = None
        if self.auto_tick and self.can_auto_tick():
            self._schedule_next_tick()
        self.notify(f"auto-tick {'on' if self.auto_tick else 'off'}", timeout=2)

    def _schedule_next_tick(self) -> None:
        self.next_tick_at = self.clock() + self.interval()

    def maybe_auto_tick(self) -> None:
        if not self.auto_tick or self.ticking or self.next_tick_at is None:
            return
        if not self.can_auto_tick():
            return
        if any(getattr(screen, "HOLDS_AUTO_TICK", False) for screen in self.screen_stack):
            return  # a plan draft is being written or read: its dry run needs the tick lock
        if self.clock() >= self.next_tick_at:
            self.start_tick()

    def start_tick(self) -> bool:
        """Run one tick in a thread worker; False when one is already running."""
        if self.ticking:
            self.notify("a tick is already running", severity="warning", timeout=2)
            return False
        preload()  # in this thread, before the tick's (a tick pressed before the first paint)
        self.ticking = True
        self.next_tick_at = None  # the countdown restarts only after this tick finishes
        self._tick()
        return True

    @work(thread=True, exclusive=True, group="tick", exit_on_error=False, description="run one tick")
    def _tick(self) -> None:
        self._tick_thread = threading.current_thread()
        try:
            outcome = run_tick(self.ws.root)
        except Exception as exc:  # the tick reports through outcomes; anything else is shown
            self.post_message(TickFinished(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(TickFinished(outcome))

    def notify(self, message: str, *, title: str = "", severity="information", timeout: float | None = None,
               markup: bool = False) -> None:
        """Every notice is literal text: messages carry plan titles, ids like ``[x]`` and paths."""
        super().notify(clean_line(message), title=title, severity=severity, timeout=timeout, markup=False)

    async def action_quit(self) -> None:
        """Quit; while a tick runs, stay on screen until it has finished (q again: quit now)."""
        if self.ticking and not self.quit_requested:
            self.quit_requested = True
            self.notify("a tick is running: the dashboard closes when it has finished "
                        "(q again closes now; the tick finishes first, and the terminal says so)",
                        severity="warning", timeout=10)
            return
        if self.ticking:
            # The tick's thread still runs, and the process waits for it after the screen is gone:
            # say so on the terminal, not on a blank screen.
            self.exit(message=Text(f"memento-tui: the dashboard closed; the tick it started in {self.ws.root} "
                                   "is finishing, and this command returns when it has (logs/ has its log)"))
            return
        self.exit()

    def action_help_quit(self) -> None:
        """ctrl+c does not quit (in a text field it copies): say which key does, in plain words."""
        quits = [active.binding for active in self.active_bindings.values()
                 if active.binding.action in ("quit", "app.quit")]
        quits.sort(key=lambda binding: binding.id != "quit")  # ours (q, or its [keys] remap) before ctrl+q
        if quits:
            self.notify(f"press {self.get_key_display(quits[0])} to quit the dashboard", title="Do you want to quit?")

    def on_tick_finished(self, message: TickFinished) -> None:
        self.ticking = False
        if self.quit_requested:
            self.exit()
            return
        previous, self.last_outcome = self.last_outcome, message.outcome
        if message.outcome is None:
            self.notify(f"tick failed: {message.error}", severity="error")
        else:
            o = message.outcome
            # An idle auto-tick that has nothing new to say (still blocked, paused,
            # complete) stays quiet: the header and the timeline already say it.
            repeat = previous is not None and previous.message == o.message and not o.results
            if not repeat:
                self.notify(o.message, severity="information" if o.exit_code == 0 else "warning", timeout=4)
        if self.auto_tick:
            self._schedule_next_tick()  # the snapshot read next stops it when nothing can tick
        self.request_refresh(ALL_PARTS)

    # ------------------------------------------------------------------ app actions

    def action_report(self) -> None:
        from .screens.report import ReportScreen

        if not isinstance(self.screen, ReportScreen):
            self.push_screen(ReportScreen())

    def action_help(self) -> None:
        """The keys of the screen on top: the dashboard's, or the log or diff screen's own."""
        if isinstance(self.screen, HelpScreen):
            return
        rows = getattr(self.screen, "HELP", None)
        title = getattr(self.screen, "HELP_TITLE", "Log screen — keys")
        self.push_screen(HelpScreen(self.keymap_overrides, rows=rows, title=title))


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    from memento_core.durations import parse_duration

    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"an interval is more than 0 seconds, got {text!r}")
    return seconds


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="memento-tui", description="The Memento dashboard.")
    parser.add_argument("dir", nargs="?", metavar="DIR", help="the workspace (default: search upwards from here)")
    parser.add_argument("--project", metavar="DIR", help="the workspace, as for `memento`")
    parser.add_argument("--demo", action="store_true",
                        help="create the demo project in a fresh temporary folder and watch it run")
    parser.add_argument("--auto-tick", action="store_true", help="tick on the memento.toml interval")
    parser.add_argument("--polling", action="store_true", help="poll for file changes (no inotify)")
    parser.add_argument("--serve", action="store_true",
                        help="serve the dashboard to a web browser instead of this terminal")
    parser.add_argument("--host", default=None,
                        help="with --serve: the address to listen on (default 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=_port, default=None, help="with --serve: the port (default 8566)")
    parser.add_argument("--token-file", metavar="FILE", default=None,
                        help="with --serve: read the page's secret token from FILE (default: a new one, printed)")
    # The dashboards `--serve --demo` starts tick on the demo's interval (not memento.toml's).
    parser.add_argument("--interval", type=_seconds, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--in-browser", action="store_true", help=argparse.SUPPRESS)  # a dashboard --serve started
    parser.add_argument("--version", action="version", version=f"memento-tui {__version__}")
    args = parser.parse_args(argv)
    if not args.serve and (args.host is not None or args.port is not None or args.token_file is not None):
        parser.error("--host, --port and --token-file go with --serve")
    return args


def leave_the_terminal() -> None:
    """Point the standard descriptors away from a hung-up terminal: output to /dev/null (writes
    succeed, nothing blocks), input to a pipe nobody writes (never readable: no EOF to spin on)."""
    read_end, _write_end = os.pipe()  # the write end stays open: the pipe never reads as EOF
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd, target in ((0, read_end), (1, devnull), (2, devnull)):
        try:
            os.dup2(target, fd)
        except OSError:
            pass


def trust_the_terminal_size() -> None:
    """Forget ``COLUMNS``/``LINES`` left in the environment when the terminal can say its own size.

    An earlier shell's export (a common leftover in tmux over SSH) would otherwise win:
    Textual asks shutil.get_terminal_size, which reads them first, and a 120-column
    terminal gets a 160-column screen whose right side is never seen. A dashboard
    textual-serve starts has no terminal: the page's size comes in COLUMNS, and stays."""
    try:
        os.get_terminal_size(sys.__stdout__.fileno())
    except (AttributeError, OSError, ValueError):
        return
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    if args.serve:
        from .serve import serve_from_args

        return serve_from_args(args, DEMO_INTERVAL)
    try:
        if args.demo:
            from memento_core.demo import create_demo

            root = create_demo(Path(tempfile.mkdtemp(prefix="memento-demo-")) / "calc")
            app = MementoApp(root, auto_tick=True, auto_interval=DEMO_INTERVAL, polling=args.polling,
                             served=args.in_browser)
        else:
            ws = Workspace.find(args.project or args.dir or None)
            app = MementoApp(ws.root, auto_tick=args.auto_tick, auto_interval=args.interval, polling=args.polling,
                             served=args.in_browser)
    except MementoError as exc:
        print(f"[error] {exc}", file=sys.stderr)
        return 2
    trust_the_terminal_size()
    app.run()
    if args.demo:
        forget_the_demo(app)
    return app.return_code or 0


def forget_the_demo(app: MementoApp) -> None:
    """`--demo`'s folder goes with its dashboard (one run must not leave a folder in /tmp behind),
    once a tick it started has finished; `memento demo DIR` makes a demo to keep."""
    import shutil

    tick = app._tick_thread
    if tick is not None:
        tick.join()
    shutil.rmtree(app.ws.root.parent, ignore_errors=True)  # the mkdtemp folder holding calc/
    print(f"[ok] the demo's folder {app.ws.root.parent} is removed (`memento demo DIR` makes one to keep)")


if __name__ == "__main__":
    raise SystemExit(main())
