"""Every dashboard key as a Binding with an id, remappable through memento.toml ``[keys]``.

``[keys]`` maps an action name to a key (``tick = "f5"``), as Textual keymaps do
(posting's ``set_keymap``). Letters and F-keys only by default: ctrl+a/b/s/space
are tmux and terminal prefixes.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Key:
    id: str
    key: str
    action: str
    description: str
    help: str
    footer: bool = True


DASHBOARD_KEYS: tuple[Key, ...] = (
    Key("reset", "r", "reset", "Reset", "reset the selected task's retries: [!] → [ ] with retries 0"),
    Key("skip", "s", "skip", "Skip", "skip the selected task ([-]); asks for a reason"),
    Key("note", "n", "note", "Note", "write a note for the selected task (or global)"),
    Key("answer", "w", "answer", "Answer",
        "answer the question of the selected task [?] (else the first one waiting): shows the question and its "
        "choices", footer=False),
    # Pause, resume and stop are buttons in Controls (and in help): the footer keeps to 80 columns.
    Key("pause", "p", "pause", "Pause", "pause the pipeline (tick_mode: paused)", footer=False),
    Key("resume", "space", "resume", "Resume", "resume the pipeline (tick_mode: auto)", footer=False),
    Key("stop", "x", "stop", "Stop", "stop the pipeline (tick_mode: stopped); asks to confirm", footer=False),
    Key("tick", "t", "tick", "Tick", "run one tick now, in the background"),
    Key("interval", "i", "interval", "Interval", "set the tick interval (memento.toml and the cron entry)",
        footer=False),
    Key("auto_tick", "o", "auto_tick", "Auto", "let the dashboard tick by itself on the interval (when no cron entry)",
        footer=False),
    Key("filter", "f", "filter", "Filter", "cycle the task filter: All / Pending / Done / Blocked",
        footer=False),
    Key("expand", "enter", "expand", "Open", "expand the selected task, or open the selected tick's log", footer=False),
    Key("log", "l", "log", "Log", "open the tick log (of the selected tick, or the task's last tick)"),
    Key("diff", "d", "diff", "Diff", "show the commit diff of the selected tick or task"),
    Key("acknowledge", "a", "acknowledge", "Ack", "acknowledge unsurfaced results (continuity checkpoint)",
        footer=False),
    Key("verify_ack", "v", "acknowledge_verify", "Verify ok",
        "acknowledge the verify commands the architect changed (listed under Needs you)", footer=False),
    Key("architect", "A", "architect", "Architect",
        "run the architect as a dry run, show its plan diff, apply it on y", footer=False),
    Key("draft", "D", "draft", "Draft plan",
        "draft the plan from a brief: write what you want, see the new tasks, their diff and checks, keep on y",
        footer=False),
    Key("tab_timeline", "1", "show_tab('tab-timeline')", "Timeline", "show the Timeline tab", footer=False),
    Key("tab_notes", "2", "show_tab('tab-notes')", "Notes", "show the Notes tab", footer=False),
    Key("tab_state", "3", "show_tab('tab-continuity')", "State", "show the State tab (checkpoint, doctor)",
        footer=False),
    Key("tab_memory", "4", "show_tab('tab-memory')", "Memory", "show the Memory tab", footer=False),
)

APP_KEYS: tuple[Key, ...] = (
    Key("help", "question_mark", "help", "Help", "show every key and what it does"),
    Key("report", "m", "report", "Report", "the morning report: what needs you, then what happened",
        footer=False),
    Key("quit", "q", "quit", "Quit", "quit the dashboard (a running tick finishes first)"),
)

ALL_KEYS = DASHBOARD_KEYS + APP_KEYS
KNOWN_IDS = frozenset(k.id for k in ALL_KEYS)


def bindings(keys: tuple[Key, ...]) -> list[Binding]:
    return [
        Binding(k.key, k.action, k.description, show=k.footer, id=k.id, tooltip=k.help)
        for k in keys
    ]


def user_keymap(config_keys: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The keymap from memento.toml ``[keys]`` and the names it got wrong."""
    keymap: dict[str, str] = {}
    unknown: list[str] = []
    for action, key in config_keys.items():
        if action in KNOWN_IDS:
            keymap[action] = key
        else:
            unknown.append(action)
    return keymap, unknown


def _keys_of(value: str) -> set[str]:
    from textual.app import App

    return set(App._normalize_keymap({"k": value})["k"].split(","))  # noqa: SLF001 ("?" is "question_mark")


def conflicts(keymap: dict[str, str]) -> dict[str, str]:
    """The remaps of ``keymap`` that would share a key with another action, each with that action's id.

    Every dashboard and app key is live on the dashboard at once, so ``tick = "q"`` would
    take quit's key (Textual runs one of the two): such a remap is refused and its action
    keeps its own key. A swap (``tick = "q"`` with ``quit = "t"``) is no conflict."""
    refused: dict[str, str] = {}
    while True:
        owners: dict[str, list[str]] = {}
        for k in ALL_KEYS:
            value = keymap[k.id] if k.id in keymap and k.id not in refused else k.key
            for key in _keys_of(value):
                owners.setdefault(key, []).append(k.id)
        found = False
        for ids in owners.values():
            if len(ids) < 2:
                continue
            for action in ids:
                if action in keymap and action not in refused:
                    refused[action] = next(other for other in ids if other != action)
                    found = True
        if not found:
            return refused


def key_line(toml_text: str, action: str) -> int:
    """The line (1-based) of ``action = …`` in memento.toml's [keys] table; 0 when not found."""
    import re

    table = ""
    for number, line in enumerate(toml_text.splitlines(), 1):
        head = re.match(r"\s*\[([^\[\]]+)\]\s*(#.*)?$", line)
        if head:
            table = head.group(1).strip()
        elif table == "keys" and re.match(rf"\s*[\"']?{re.escape(action)}[\"']?\s*=", line):
            return number
    return 0
