"""Continuity: CURRENT_STATE.md as written, and the doctor's findings."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..literal import literal
from ..snapshot import Snapshot

SEVERITY_STYLE = {"CRITICAL": "bold red", "WARNING": "yellow", "INFO": "cyan", "OK": "green"}


def checkpoint_text(text: str | None) -> Text:
    if text is None:
        return Text("docs/CURRENT_STATE.md does not exist yet (the first tick writes it)", style="dim")
    out = Text()
    for line in text.splitlines():
        if line.startswith("#"):
            out.append_text(literal(line, "bold"))
        elif line.startswith(">"):
            out.append_text(literal(line, "dim"))
        else:
            out.append_text(literal(line))
        out.append("\n")
    return out


def findings_text(snap: Snapshot) -> Text:
    out = Text("Doctor\n", style="bold underline")
    if snap.findings is None:
        out.append(f"doctor: {snap.findings_error or 'not run yet'}", style="dim")
        return out
    if snap.findings_error:
        out.append_text(literal(snap.findings_error, "red"))
        out.append("\n")
    for f in snap.findings:
        out.append(f"[{f.severity}] ", style=SEVERITY_STYLE.get(f.severity, ""))
        where = f"{f.path}:{f.line}: " if f.path and f.line else (f"{f.path}: " if f.path else "")
        out.append_text(literal(f"{where}{f.message}", one_line=True))
        out.append("\n")
    if not snap.findings and not snap.findings_error:
        out.append("no findings", style="dim")
    return out


class ContinuityPane(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(Text("a: acknowledge unsurfaced results", style="dim"), id="continuity-hint")
        yield Static(id="checkpoint")
        yield Static(id="findings")

    def show(self, snap: Snapshot) -> None:
        unsurfaced = len(snap.state.unsurfaced)
        hint = Text("a: acknowledge unsurfaced results", style="dim")
        if unsurfaced:
            hint = Text(f"{unsurfaced} unsurfaced result(s) — a: acknowledge", style="bold yellow")
        self.query_one("#continuity-hint", Static).update(hint)
        self.query_one("#checkpoint", Static).update(checkpoint_text(snap.checkpoint_text))
        self.query_one("#findings", Static).update(findings_text(snap))
