"""The command palette (ctrl+p): one entry per dashboard action, each running the same action as its key."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

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
            title = f"{k.description}: {k.help} [{_DISPLAY.get(key, key)}]"
            target = "app" if k.id in app_ids else "screen"
            yield title, k.help, partial(app.run_action, f"{target}.{k.action}")

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
