"""The architect (SPEC §16) from the dashboard: a dry run in a worker, its diff shown, applied on `y`.

The dry run is memento_core's (``run_architect(dry_run=True)``: everything put
back afterwards); `y` keeps exactly what it showed (``apply_proposal``, checked
again under the tick lock, without running the agent a second time). The
screen never edits a file itself.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..literal import literal
from ..messages import ActionDone, FilesChanged
from ..snapshot import NOTES, PLAN, STATE, STATUS
from .diff import diff_syntax

MAX_DIFF_LINES = 5_000


class ArchitectScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,n", "cancel", "Cancel"),
        Binding("y", "apply", "Apply"),
    ]
    HELP_TITLE = "Architect — keys"
    HELP = (
        ("y", "apply the change shown (one commit, a 🏗 ARCHITECT entry)"),
        ("escape, n", "back to the dashboard; nothing changes"),
        ("↑ ↓ pgup pgdn", "scroll the diff"),
        ("?", "this help"),
    )

    class Proposed(Message):
        def __init__(self, result, error: str) -> None:
            super().__init__()
            self.result = result
            self.error = error

    def __init__(self, ws) -> None:
        super().__init__()
        self.ws = ws
        self.proposal = None
        self.applying = False

    def compose(self) -> ComposeResult:
        yield Static(Text("Architect (dry run): blocked tasks and notes → plan changes", style="bold"),
                     classes="screen-title")
        yield Static(Text("running the architect as a dry run… (nothing changes until you press y)", style="dim"),
                     id="architect-status")
        with VerticalScroll(id="architect-scroll"):
            yield Static("", id="architect-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#architect-scroll").focus()
        self._dry_run()

    @work(thread=True, exclusive=True, group="architect", exit_on_error=False, description="architect dry run")
    def _dry_run(self) -> None:
        from memento_core.tick.architect.run import run_architect

        try:
            result = run_architect(self.ws, dry_run=True)
        except Exception as exc:  # MementoError included: shown, never fatal
            self.post_message(self.Proposed(None, str(exc)))
            return
        self.post_message(self.Proposed(result, ""))

    def on_architect_screen_proposed(self, message: Proposed) -> None:
        from memento_core.tick.architect.run import CHANGED

        status = self.query_one("#architect-status", Static)
        result = message.result
        if message.error or result is None:
            status.update(literal(f"the architect could not run: {message.error}", "red"))
            return
        if result.outcome != CHANGED:  # changed nothing, rolled back (with its reasons), refused
            status.update(literal(f"{result.message}; nothing to apply (escape: back)", "yellow"))
            return
        self.proposal = result
        line = Text("Proposed: ", style="bold")
        line.append_text(literal(result.message, "cyan"))
        line.append("  ·  y: apply  ·  escape: cancel", style="dim")
        status.update(line)
        self.query_one("#architect-diff", Static).update(diff_syntax(result.diff, MAX_DIFF_LINES))

    def action_cancel(self) -> None:
        if not self.applying:
            self.dismiss(None)

    def action_apply(self) -> None:
        if self.proposal is None or self.applying:
            self.notify("nothing to apply yet", severity="warning", timeout=2)
            return
        self.applying = True
        self.query_one("#architect-status", Static).update(Text("applying…", style="dim"))
        self._apply(self.proposal)

    @work(thread=True, exclusive=True, group="architect", exit_on_error=False, description="apply the architect")
    def _apply(self, proposal) -> None:
        from memento_core.tick.architect.run import CHANGED, apply_proposal

        app = self.app
        try:
            result = apply_proposal(self.ws, proposal)
        except Exception as exc:
            app.post_message(ActionDone(f"architect: {exc}", error=True))
        else:
            ok = result.outcome == CHANGED
            app.post_message(ActionDone(f"architect: {result.message}", error=not ok))
        app.post_message(FilesChanged({PLAN, NOTES, STATUS, STATE}))
        app.call_from_thread(self.dismiss, None)
