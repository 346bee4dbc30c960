"""The command palette (ctrl+p): one entry per dashboard action, each running the same action as its key."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from .keymap import ALL_KEYS, APP_KEYS

_DISPLAY = {"question_mark": "?"}


class MementoCommands(Provider):
    """Every key of keymap.py by name: reset, skip, note, pause, resume, stop, tick, …"""

    def _commands(self):
        app = self.app
        overrides = getattr(app, "keymap_overrides", {})
        app_ids = {k.id for k in APP_KEYS}
        for k in ALL_KEYS:
            key = overrides.get(k.id, k.key)
            # The name and its key; the help is the second line. Content, not markup: "[r]" stays.
            title = f"{k.description} [{_DISPLAY.get(key, key)}]"
            target = "app" if k.id in app_ids else "screen"
            yield title, k.help, partial(app.run_action, f"{target}.{k.action}")

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(Content(title), callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, highlight(matcher, title), callback, text=title, help=help_text)


def highlight(matcher, title: str) -> Content:
    """Matcher.highlight reads its text as markup ("[r]" would vanish): highlight the plain text."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher._match_style, offset, offset + 1)  # noqa: SLF001
    return content
