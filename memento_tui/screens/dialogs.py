"""Small modal dialogs: confirm, ask for a line of text, compose a note, answer a worker's question."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static, TextArea

from ..literal import literal


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("escape,n", "answer(False)", "No"),
        Binding("y", "answer(True)", "Yes"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "Cancel") -> None:
        super().__init__(classes="dialog-screen")
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(literal(self.question))
            with Horizontal(classes="dialog-buttons"):
                yield Button(Text(f"{self.yes} (y)"), id="yes", variant="error", compact=True)
                yield Button(Text(f"{self.no} (n)"), id="no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


def cancel_or_ask(screen: ModalScreen, typed: str, what: str) -> None:
    """Escape on a composer: close at once when nothing was typed, else ask before the text is
    thrown away (in tmux a ctrl+enter arrives as enter and a slip of the finger is escape: one
    key must not lose a note). The answer's default is to keep writing."""
    if not typed.strip():
        screen.dismiss(None)
        return

    def answered(discard: bool | None) -> None:
        if discard:
            screen.dismiss(None)

    screen.app.push_screen(ConfirmScreen(f"Discard the {what} you typed? It is not saved anywhere.",
                                         yes="Discard", no="Keep writing"), answered)


class AskScreen(ModalScreen[str | None]):
    """One line of text: a skip reason, an interval."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, *, value: str = "", placeholder: str = "", hint: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(literal(self.title_text, "bold"))
            yield Input(value=self.value, placeholder=self.placeholder, id="ask-input")
            yield Static(Text((self.hint + " · " if self.hint else "") + "enter: OK · escape: cancel "
                              "(asks first when you typed something)", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value:
            self.dismiss(value)

    def action_cancel(self) -> None:
        value = self.query_one(Input).value
        cancel_or_ask(self, "" if value.strip() == self.value.strip() else value, "text")


class NoteComposer(ModalScreen[tuple[str, str] | None]):
    """Target (global or the selected task) and the note's text, several lines; F2 sends.

    F2 comes first everywhere it is named: tmux (and many terminals) deliver ctrl+enter as a
    plain enter, which is a new line here; ctrl+enter and alt+enter still send where they
    arrive as themselves. Escape asks before it throws typed text away."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+t", "toggle_target", "Switch target"),
        Binding("f2,ctrl+enter,alt+enter", "send", "Send", priority=True),
    ]

    def __init__(self, task_id: str | None, task_title: str = "", warning: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.task_id = task_id
        self.task_title = task_title
        self.warning = warning  # overview.note_warning: the task is done or skipped

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="note-dialog"):
            yield Label(Text("New note for the worker", style="bold"))
            with RadioSet(id="note-target"):
                if self.task_id:
                    label = Text(f"task {self.task_id} ")
                    label.append_text(literal(self.task_title, "dim", one_line=True))
                    yield RadioButton(label, value=True, id="target-task")
                yield RadioButton(Text("global (every task)"), value=not self.task_id, id="target-global")
            yield Static(literal(self.warning, "bold yellow"), id="note-warning")
            yield TextArea(id="note-input", soft_wrap=True, show_line_numbers=False)
            hint = "ctrl+t: switch task/global · " if self.task_id else ""
            yield Static(Text("F2: send · enter: new line · " + hint + "escape: cancel", style="dim"),
                         id="note-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button(Text("Send (F2)"), id="send", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
        self._show_warning()

    def _show_warning(self) -> None:
        self.query_one("#note-warning", Static).display = bool(self.warning) and self.target() != "global"

    @on(RadioSet.Changed)
    def _target_changed(self, _event: RadioSet.Changed) -> None:
        self._show_warning()

    def action_toggle_target(self) -> None:
        """Switch between the task and global without leaving the text field."""
        if not self.task_id:
            return
        task_button = self.query_one("#target-task", RadioButton)
        other = self.query_one("#target-global", RadioButton)
        (other if task_button.value else task_button).value = True

    def target(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        if self.task_id and pressed is not None and pressed.id == "target-task":
            return self.task_id
        return "global"

    def action_send(self) -> None:
        """Send once the text field has taken every key and paste that came before this one.

        F2 is a priority binding: the App runs it as soon as it reads the key, while the keys
        typed (or pasted) just before it still wait in the text field's queue. Reading the
        text now would cut the end of a note typed fast; a callback queued behind them reads
        it whole."""
        self.query_one(TextArea).call_later(self._send_now)

    def _send_now(self) -> None:
        text = self.query_one(TextArea).text
        if text.strip() and self.is_active:
            self.dismiss((self.target(), text))

    @on(Button.Pressed, "#send")
    def _send_pressed(self, _event: Button.Pressed) -> None:
        self.action_send()

    def action_cancel(self) -> None:
        # Read the text behind the keys still queued for the field, as action_send does.
        area = self.query_one(TextArea)
        area.call_later(lambda: self.is_active and cancel_or_ask(self, area.text, "note"))


class AnswerComposer(ModalScreen[tuple[int | None, str] | None]):
    """A worker's question (SPEC §18) and the person's answer: its choices to pick (1–9 or the
    arrows), or a text; F2 sends ``(choice, "")`` or ``(None, text)``. A typed text wins over a
    picked choice. Escape asks before it throws typed text away."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("f2,ctrl+enter,alt+enter", "send", "Send", priority=True),
        # A digit picks that choice while the choices have the focus (in the text field it is text).
        *(Binding(str(n), f"pick({n})", f"Choice {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(self, question) -> None:
        super().__init__(classes="dialog-screen")
        self.question = question  # memento_core.questions.Question

    def compose(self) -> ComposeResult:
        q = self.question
        with Vertical(classes="dialog", id="answer-dialog"):
            title = Text(f"{q.task_id} asks", style="bold")
            title.append("  ")
            title.append_text(literal(q.title, "dim", one_line=True))
            yield Label(title)
            from memento_core.questions import without_choices

            yield Static(literal(without_choices(q.text) if q.choices else q.text), id="answer-question")
            if q.choices:
                with RadioSet(id="answer-choices"):
                    for n, choice in enumerate(q.choices, 1):
                        label = Text(f"{n}. ")
                        label.append_text(literal(choice, one_line=True))
                        yield RadioButton(label, value=n == 1, id=f"choice-{n}")
            yield TextArea(id="answer-input", soft_wrap=True, show_line_numbers=False)
            hint = "pick a choice (its number, or the arrows and enter) or write an answer · " if q.choices \
                else "write your answer · "
            yield Static(Text(hint + "F2: send · escape: cancel", style="dim"), id="answer-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button(Text("Answer (F2)"), id="send", variant="primary", compact=True)

    def on_mount(self) -> None:
        if self.question.choices:
            self.query_one(RadioSet).focus()
        else:
            self.query_one(TextArea).focus()

    def action_pick(self, n: int) -> None:
        if 1 <= n <= len(self.question.choices):
            self.query_one(f"#choice-{n}", RadioButton).value = True

    def choice(self) -> int | None:
        if not self.question.choices:
            return None
        pressed = self.query_one(RadioSet).pressed_index
        return pressed + 1 if pressed >= 0 else None

    def action_send(self) -> None:
        self.query_one(TextArea).call_later(self._send_now)  # as NoteComposer: after the queued keys

    def _send_now(self) -> None:
        if not self.is_active:
            return
        text = self.query_one(TextArea).text
        if text.strip():
            self.dismiss((None, text))
        elif self.choice() is not None:
            self.dismiss((self.choice(), ""))

    @on(Button.Pressed, "#send")
    def _send_pressed(self, _event: Button.Pressed) -> None:
        self.action_send()

    def action_cancel(self) -> None:
        area = self.query_one(TextArea)
        area.call_later(lambda: self.is_active and cancel_or_ask(self, area.text, "answer"))
