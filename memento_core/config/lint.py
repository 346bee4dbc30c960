"""memento.toml's warnings: what it says that Memento does not read or the dashboard refuses.

Not errors (the file loads, the defaults apply): sections and keys Memento
does not know (a typo runs the defaults), with the nearest known name, and
[keys] remaps the dashboard refuses (a name Textual does not know, a key tmux
or the terminal keeps). ``memento lint``, ``memento doctor`` and the dashboard
report them (SPEC §6, §8, §10).
"""

from __future__ import annotations

from .model import Config
from .validator import key_line

KNOWN_KEYS: dict[str, tuple[str, ...] | None] = {
    "agent": ("preset", "command", "timeout", "model", "extra_args", "output", "fallback"),
    "budget": ("daily_usd", "task_usd", "daily_tokens", "task_tokens", "window_pause_at"),
    "verify": ("timeout",),
    "schedule": ("every",),
    "git": ("author",),
    "workers": ("max", "remote", "host"),
    "sandbox": ("mode", "network", "writable", "readable", "env", "allow"),
    "notify": ("urls", "events"),
    "chat": ("telegram", "matrix"),
    "architect": ("preset", "command", "timeout", "model", "extra_args", "auto", "max_runs_per_day"),
    "keys": None,  # action names: the dashboard knows them
    "review": ("preset", "command", "model", "extra_args", "timeout", "max_rounds", "output"),
    "forge": ("land", "api", "repo", "remote", "stack"),
}


def unknown_keys(config: Config, text: str = "") -> list[tuple[str, int]]:
    """Sections and keys memento.toml has but Memento does not read (a typo runs the defaults)."""
    found = []
    for section, value in config.raw.items():
        if section not in KNOWN_KEYS:
            found.append((f"[{section}]", key_line(text, section, "\0")))
            continue
        allowed = KNOWN_KEYS[section]
        if allowed is not None and isinstance(value, dict):
            for key in value:
                if key not in allowed:
                    found.append((f"[{section}] {key}", key_line(text, section, key)))
    return found


# [keys] (the dashboard's remaps): the names Textual reads, and the keys a terminal or tmux keeps.
_MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")
_NAMED_KEYS = frozenset({"backspace", "delete", "down", "end", "enter", "escape", "home", "insert", "left", "pagedown",
                         "pageup", "return", "right", "space", "tab", "up", "newline"}
                        | {f"f{n}" for n in range(1, 25)})
RESERVED_KEYS = {
    "ctrl+b": "tmux's prefix: tmux keeps it, the dashboard never sees it",
    "ctrl+a": "the prefix of screen (and of many tmux setups)",
    "ctrl+space": "a tmux and terminal prefix (sent as ctrl+@)",
    "ctrl+at": "a tmux and terminal prefix (ctrl+space)",
    "ctrl+s": "flow control (XOFF) in many terminals: it freezes the screen",
    "ctrl+q": "flow control (XON) in many terminals",
    "ctrl+c": "the terminal's interrupt, and copy in the dashboard's text fields",
    "ctrl+z": "suspends the program in a shell",
    "ctrl+j": "what a terminal sends for enter",
    "ctrl+m": "what a terminal sends for enter",
    "ctrl+i": "what a terminal sends for tab",
    "ctrl+h": "what many terminals send for backspace",
}


def key_problem(key: str) -> str:
    """Why ``key`` (a [keys] value: one key, or several joined by commas) cannot be a dashboard key,
    or ''. A name Textual does not know never fires; a key tmux or the terminal keeps never arrives."""
    import unicodedata

    for one in (k.strip() for k in key.split(",")):
        *mods, name = one.lower().split("+")
        if not name or any(m not in _MODIFIERS for m in mods):
            return f"{one!r} is not a key name (examples: \"f7\", \"x\", \"ctrl+r\")"
        known = len(name) == 1 or name in _NAMED_KEYS
        if not known:
            try:
                known = len(unicodedata.lookup(name.replace("_", " "))) == 1  # "question_mark" is "?"
            except KeyError:
                known = False
        if not known:
            return f"{one!r} is not a key name (examples: \"f7\", \"x\", \"ctrl+r\", \"question_mark\")"
        why = RESERVED_KEYS.get(one.lower().replace("ctrl+@", "ctrl+at"))
        if why:
            return f"{one} is {why}"
    return ""


def key_problems(config: Config, text: str = "") -> list[tuple[str, int]]:
    """The [keys] remaps the dashboard refuses (the action keeps its own key), each with its line."""
    return [(f"[keys] {action} = {key!r} is refused: {problem}; {action} keeps its own key",
             key_line(text, "keys", action))
            for action, key in config.keys.items() if (problem := key_problem(key))]


def unknown_key_message(what: str) -> str:
    """The warning for an unknown section or key of :func:`unknown_keys`, with the nearest known
    name (`timout` → `timeout`, `[budgt]` → `[budget]`) when there is one."""
    import difflib

    if what.startswith("[") and what.endswith("]"):
        near = difflib.get_close_matches(what[1:-1], KNOWN_KEYS, n=1, cutoff=0.6)
        hint = f"did you mean [{near[0]}]?" if near else "a typo?"
    else:
        section, _, key = what[1:].partition("] ")
        near = difflib.get_close_matches(key, KNOWN_KEYS.get(section) or (), n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}?" if near else "a typo?"
    return f"unknown {what} is ignored ({hint} the default applies)"
