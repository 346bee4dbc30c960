"""Progress: the overall bar, one bar per phase (with its pull request, SPEC §19), blocked count and
estimated time left."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from memento_core.durations import format_duration

from ..literal import literal
from ..snapshot import Snapshot


def bar(done: int, total: int, width: int) -> Text:
    width = max(4, width)
    filled = round(width * done / total) if total else 0
    out = Text("█" * filled, style="green")
    out.append("░" * (width - filled), style="dim")
    return out


_CHECKS = {"passing": ("checks ✓", "green"), "failing": ("checks ✖", "bold red"),
           "pending": ("checks …", "yellow"), "none": ("", "")}
_REVIEWS = {"approved": ("approved", "green"), "changes_requested": ("changes requested", "bold yellow"),
            "commented": ("commented", "dim"), "none": ("", "")}


def pull_label(pr: dict | None, compact: bool = False) -> Text:
    """A phase's pull request as the progress pane shows it: ``PR #4 checks ✖ changes requested``
    (``#4✖`` when compact); empty without one."""
    out = Text(no_wrap=True, overflow="ellipsis")
    if not pr or not pr.get("number"):
        return out
    checks, checks_style = _CHECKS.get(pr.get("checks"), ("", ""))
    if compact:
        out.append(f" #{int(pr['number'])}", style="bold")
        out.append(checks[-1:] if checks else "", style=checks_style)
        return out
    out.append(f" PR #{int(pr['number'])}", style="bold")
    if pr.get("state") in ("merged", "closed"):
        out.append(f" {pr['state']}", style="dim")
    if checks:
        out.append(f" {checks}", style=checks_style)
    review, review_style = _REVIEWS.get(pr.get("review"), ("", ""))
    if review:
        out.append(f" {review}", style=review_style)
    return out


class ProgressPane(Widget):
    """Renders at its current width, so bars always fit."""

    DEFAULT_CSS = "ProgressPane { height: auto; }"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.summary: dict = {}
        self.eta: float | None = None
        self.refused: list[str] = []  # paths of a dirty tree the last tick refused
        self.interval: float | None = None
        self.border_title = "Progress"

    def show(self, snap: Snapshot, interval: float | None = None, until_next: float = 0.0) -> None:
        """``interval``: seconds between the ticks that will run (None: nothing ticks by itself);
        ``until_next``: seconds until the next of them starts."""
        from memento_core.overview import eta_with_interval

        self.summary = snap.summary
        self.refused = snap.state.dirty_signature.splitlines()
        per_tick = snap.plan.meta.max_tasks_per_tick if snap.plan is not None else 1
        self.eta = (eta_with_interval(snap.summary, interval, per_tick, until_next)
                    if snap.summary else None)
        self.interval = interval
        self.refresh(layout=True)

    COMPACT_BELOW = 90  # columns: phases share one line

    def get_content_height(self, container, viewport, width: int) -> int:
        if width < self.COMPACT_BELOW:
            return 3
        return 3 + len(self.summary.get("phases", []))

    def render(self) -> Text:
        s = self.summary
        if not s:
            return Text("no plan loaded", style="dim")
        width = self.content_size.width or 40
        counts = s["counts"]
        out = Text()
        label = f" {counts['done']}/{counts['total']}"
        out.append_text(bar(counts["done"], counts["total"], width - len(label) - 1))
        out.append(label + "\n", style="bold")
        info = Text()
        if counts["blocked"]:
            info.append(f"blocked: {counts['blocked']} ⚠", style="bold red")
        else:
            info.append("blocked: 0", style="dim")
        info.append(f"  pending: {counts['pending']}  skipped: {counts['skipped']}", style="dim")
        eta = self.eta
        info.append("  left: ")
        info.append(f"~{format_duration(eta)}" if eta is not None else "—")
        if eta is not None and self.interval:
            info.append(f" (a tick every {format_duration(self.interval)})", style="dim")
        out.append_text(info)
        out.append("\n")
        phases = s.get("phases", [])
        pulls = {pr.get("phase"): pr for pr in s.get("pull_requests") or []}  # SPEC §19: each phase's PR
        if width < self.COMPACT_BELOW:
            line = Text(no_wrap=True, overflow="ellipsis")
            for p in phases:
                total = p["total"]
                pct = round(100 * p["done"] / total) if total else 100
                line.append_text(literal(p["id"], "bold" if p["open"] else "dim", one_line=True))
                line.append(f" {pct}%", style="green" if pct == 100 else "")
                if p["blocked"]:
                    line.append(" ✖", style="bold red")
                line.append_text(pull_label(pulls.get(p["id"]), compact=True))
                line.append("  ")
            out.append_text(line)
            out.append("\n")
            out.append_text(self._verdict(s, self.refused))
            return out
        name_width = min(14, max((len(p["id"]) for p in phases), default=7))
        for p in phases:
            total = p["total"]
            pct = f" {round(100 * p['done'] / total) if total else 100:3d}%"
            name = literal(p["id"][:name_width].ljust(name_width) + " ", "bold" if p["open"] else "dim",
                           one_line=True)
            pr = pull_label(pulls.get(p["id"]))
            out.append_text(name)
            out.append_text(bar(p["done"], total, width - name_width - 1 - len(pct) - 3 - pr.cell_len))
            out.append(pct)
            if p["blocked"]:
                out.append(" ✖", style="bold red")
            out.append_text(pr)
            out.append("\n")
        out.append_text(self._verdict(s, self.refused))
        return out

    @staticmethod
    def _verdict(s: dict, refused: list[str] = ()) -> Text:
        """The line that says what happens next: the first plan error, a refused tree, else the next task."""
        errors = s.get("plan_errors") or []
        if errors:
            more = f" (+{len(errors) - 1} more: memento lint)" if len(errors) > 1 else ""
            return literal(errors[0] + more, "bold red", one_line=True)
        if refused and s.get("plan_state") == "RUNNING":
            return literal("no task runs: the tick refuses uncommitted changes in " + ", ".join(refused[:3]),
                           "bold red", one_line=True)
        return literal(s.get("next", {}).get("message", ""), "dim", one_line=True)
