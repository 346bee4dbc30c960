"""Drafting the plan (SPEC §17) from the dashboard: a brief composer, a dry run, its diff and checks, kept on `y`.

The dry run is memento_core's (``draft_plan(dry_run=True)``: everything put back
afterwards, the red-first verifies run); `y` keeps exactly what it showed
(``apply_draft``, checked again under the tick lock, the drafter not run a
second time). A refused draft shows its reasons and cannot be kept. The
screens never edit a file themselves.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Label, Static, TextArea

from ..literal import literal
from ..messages import ActionDone, FilesChanged
from ..snapshot import PLAN, STATE, STATUS
from .diff import diff_syntax

MAX_DIFF_LINES = 5_000
BRIEF_NAME = "the dashboard"  # the commit says "memento: plan drafted from the dashboard"


class BriefComposer(ModalScreen[str | None]):
    """A multi-line brief: what the person wants built; F2 drafts it (ctrl+enter too, outside tmux);
    escape asks before it throws a typed brief away."""

    HOLDS_AUTO_TICK = True

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("f2,ctrl+enter,alt+enter", "submit", "Draft", priority=True),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="brief-dialog"):
            yield Label(Text("Draft the plan: what do you want built?", style="bold"))
            yield Static(Text("The architect turns this brief into new tasks, each with a verify; you see "
                              "the diff and the checks before anything is kept.", style="dim"))
            yield TextArea(id="brief-input", soft_wrap=True, show_line_numbers=False)
            yield Static("", id="brief-error")
            yield Static(Text("F2: draft (a dry run) · enter: new line · escape: cancel", style="dim"),
                         id="brief-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button(Text("Draft (F2)"), id="draft", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_submit(self) -> None:
        # As the note composer does: read the text after the keys typed before F2 have reached it.
        self.query_one(TextArea).call_later(self._submit_now)

    def _submit_now(self) -> None:
        if not self.is_active:
            return
        text = self.query_one(TextArea).text
        if not text.strip():
            self.query_one("#brief-error", Static).update(
                Text("the brief is empty: write what you want built, one wish a line", style="bold red"))
            return
        self.dismiss(text)

    @on(Button.Pressed, "#draft")
    def _draft_pressed(self, _event: Button.Pressed) -> None:
        self.action_submit()

    def action_cancel(self) -> None:
        from .dialogs import cancel_or_ask

        area = self.query_one(TextArea)
        area.call_later(lambda: self.is_active and cancel_or_ask(self, area.text, "brief"))


class DraftScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,n", "cancel", "Drop"),
        Binding("y", "keep", "Keep"),
        Binding("q", "quit", "Quit"),  # the app's quit, which waits for a running draft
    ]
    HOLDS_AUTO_TICK = True  # the dashboard's auto-tick waits while a draft is open (it needs the tick lock)
    HELP_TITLE = "Plan draft — keys"
    HELP = (
        ("y", "keep the draft shown (one commit; the plan is left paused until you resume)"),
        ("escape, n", "drop it: back to the dashboard, nothing changes"),
        ("↑ ↓ pgup pgdn", "scroll the checks and the diff"),
        ("q", "quit; while the draft runs, the dashboard closes once it has put everything back"),
        ("?", "this help"),
    )

    class Progress(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Proposed(Message):
        def __init__(self, result, error: str) -> None:
            super().__init__()
            self.result = result
            self.error = error

    def __init__(self, ws, brief: str) -> None:
        super().__init__()
        self.ws = ws
        self.brief = brief
        self.result = None  # the dry run's DraftResult, whatever its outcome
        self.proposal = None  # the result when it can be kept
        self.keeping = False
        self.started = False
        self.quit_requested = False
        self.failed = False  # the dry run raised (shown); nothing runs any more

    def compose(self) -> ComposeResult:
        yield Static(Text("Plan draft (dry run): the brief → new tasks, checked red first", style="bold"),
                     classes="screen-title")
        yield Static(Text("drafting… (nothing changes until you press y)", style="dim"), id="draft-status")
        yield Static("", id="draft-progress")
        with VerticalScroll(id="draft-scroll"):
            yield Static("", id="draft-checks")
            yield Static("", id="draft-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#draft-progress", Static).display = False  # until the first progress line
        self.query_one("#draft-scroll").focus()
        if getattr(self.app, "ticking", False):
            # The tick holds the tick lock the draft needs: start when it has finished, not refuse.
            self.query_one("#draft-status", Static).update(
                Text("a tick is running: the draft starts when it has finished (escape: back)", style="yellow"))
            self.watch(self.app, "ticking", self._ticking_changed, init=False)
        else:
            self._start()

    def _ticking_changed(self, ticking: bool) -> None:
        if not ticking and not self.started:
            self._start()

    def _start(self) -> None:
        self.started = True
        self.query_one("#draft-status", Static).update(
            Text("drafting… (nothing changes until you press y)", style="dim"))
        self._dry_run()

    @work(thread=True, exclusive=True, group="draft", exit_on_error=False, description="plan draft dry run")
    def _dry_run(self) -> None:
        from memento_core.tick.architect.draft import draft_plan

        def progress(text: str) -> None:
            self.post_message(self.Progress(str(text)))

        try:
            result = draft_plan(self.ws, self.brief, brief_name=BRIEF_NAME, dry_run=True, on_progress=progress)
        except Exception as exc:  # MementoError included (no preset, a bad brief): shown, never fatal
            self.post_message(self.Proposed(None, str(exc) or type(exc).__name__))
            return
        self.post_message(self.Proposed(result, ""))

    def on_draft_screen_progress(self, message: Progress) -> None:
        if self.result is None:
            line = self.query_one("#draft-progress", Static)
            line.update(literal(message.text, "cyan", one_line=True))
            line.display = True

    def running(self) -> bool:
        """A dry run or a keep is under way (the tick lock held, the documents not yet put back)."""
        return self.keeping or (self.started and self.result is None and not self.failed)

    def action_quit(self) -> None:
        """Quit; while the draft runs, stay until it has put everything back (q again: close now)."""
        if not self.running():
            self.app.exit()
        elif not self.quit_requested:
            self.quit_requested = True
            self.notify("the draft is running: the dashboard closes when it has finished and put everything "
                        "back (q again closes now; the draft still finishes first, and the terminal says so)",
                        severity="warning", timeout=10)
        else:
            self.app.exit(message=Text(f"memento-tui: the dashboard closed; the plan draft it started in "
                                       f"{self.ws.root} is finishing, and this command returns when it has"))

    def on_draft_screen_proposed(self, message: Proposed) -> None:
        from memento_core.tick.architect.draft import PROPOSED

        if self.quit_requested:
            self.app.exit()
            return
        status = self.query_one("#draft-status", Static)
        self.query_one("#draft-progress", Static).display = False
        result = message.result
        if message.error or result is None:
            self.failed = True
            status.update(literal(f"the draft could not run: {message.error}  (escape: back)", "bold red"))
            return
        self.result = result
        self.query_one("#draft-checks", Static).update(checks_text(result))
        if result.diff:
            self.query_one("#draft-diff", Static).update(diff_syntax(result.diff, MAX_DIFF_LINES))
        if result.outcome != PROPOSED:
            word = "Refused" if result.outcome == "refused" else "Could not draft"
            line = Text(f"{word}: ", style="bold red")
            line.append("the draft cannot be kept; the reasons are below", style="red")
            if getattr(result, "log", None):
                line.append_text(literal(f" (log: {result.log})", "dim", one_line=True))
            line.append("  ·  escape: back", style="dim")
            status.update(line)
            return
        self.proposal = result
        ids = ", ".join(result.new_ids) or "none"
        line = Text("Proposed: ", style="bold")
        line.append_text(literal(f"{len(result.new_ids)} new task(s) {ids}", "cyan", one_line=True))
        if result.warnings:
            line.append(f"  ·  {len(result.warnings)} warning(s)", style="bold yellow")
        line.append("  ·  y: keep  ·  n/escape: drop", style="dim")
        status.update(line)

    def action_cancel(self) -> None:
        if not self.keeping:
            self.dismiss(None)

    def action_keep(self) -> None:
        if self.proposal is None or self.keeping:
            refused = self.result is not None
            self.notify("a refused draft cannot be kept" if refused else "nothing to keep yet",
                        severity="warning", timeout=2)
            return
        self.keeping = True
        self.query_one("#draft-status", Static).update(Text("keeping the draft…", style="dim"))
        self._keep(self.proposal)

    @work(thread=True, exclusive=True, group="draft", exit_on_error=False, description="keep the plan draft")
    def _keep(self, proposal) -> None:
        from memento_core.tick.architect.draft import KEPT, apply_draft

        app = self.app
        try:
            result = apply_draft(self.ws, proposal)
        except Exception as exc:
            app.post_message(ActionDone(f"plan draft: {exc}", error=True))
        else:
            if result.outcome == KEPT:
                app.post_message(ActionDone(f"plan drafted: {', '.join(result.new_ids)} added; the plan is "
                                            "paused until you resume"))
            else:
                why = "; ".join(result.reasons) or result.outcome
                app.post_message(ActionDone(f"plan draft not kept: {why}", error=True))
        app.post_message(FilesChanged({PLAN, STATUS, STATE}))
        app.call_from_thread(self._kept)

    def _kept(self) -> None:
        self.keeping = False
        if self.quit_requested:
            self.app.exit()
        else:
            self.dismiss(None)


def checks_text(result) -> Group:
    """The checks of a draft: its reasons (refused), its warnings, then each new task's red-first verify."""
    parts: list[Text] = []
    if result.reasons:
        heading = "Reasons (the draft is refused)" if result.outcome == "refused" else "Why it could not draft"
        parts.append(Text(heading, style="bold red"))
        parts += [_item("✗ ", reason, "red") for reason in result.reasons]
    if result.warnings:
        parts.append(Text("\nWarnings" if parts else "Warnings", style="bold yellow"))
        parts += [_item("⚠ ", warning, "yellow") for warning in result.warnings]
    if result.red:
        title = "Red first: each new task's verify, run once on the current tree"
        parts.append(Text("\n" + title if parts else title, style="bold"))
        for check in result.red:
            why = check.detail.strip() or ("timed out" if check.exit_code is None else f"exit code {check.exit_code}")
            if check.passed:
                parts.append(_item("⚠ ", f"{check.task_id} passes already ({why}): it proves nothing", "yellow"))
            else:
                parts.append(_item("✓ ", f"{check.task_id} fails as it should ({why})", "green"))
    if not parts:
        parts.append(Text("no checks to show", style="dim"))
    parts.append(Text(""))
    return Group(*parts)


def _item(mark: str, text: str, style: str) -> Text:
    row = Text(mark, style=f"bold {style}")
    row.append_text(literal(text, style))
    return row
