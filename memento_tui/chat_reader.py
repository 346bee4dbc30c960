"""The dashboard reads the chat while it runs (SPEC §18): a chat round every few seconds.

The round itself is memento_core's (chat/poll.py: read the replies and commands, act through the
command line's own code, post what is new); the dashboard only starts it in a thread worker when
the last one has finished, never edits a file itself, and says in a notice what a round did or
why it could not run (a token file, a service that is down: once per new reason).
"""

from __future__ import annotations

import time

ROUND_EVERY = 5.0  # seconds between the end of a round and the start of the next
ROUND_BUDGET = 15.0  # what a round may take: reading, acting, posting


class ChatReader:
    def __init__(self, app, every: float = ROUND_EVERY):
        self.app = app
        self.every = every
        self.running = False
        self.last_end = float("-inf")
        self.last_problem = ""

    def beat(self) -> None:
        """Called every second: start a round when [chat] is set and the last one is long enough ago."""
        snap = self.app.snapshot
        config = getattr(snap, "config", None)
        if config is None or self.running or time.monotonic() - self.last_end < self.every:
            return
        if config.chat_telegram is None and config.chat_matrix is None:
            return
        self.running = True
        self.app.run_worker(lambda: self._round(config), thread=True, exclusive=True, group="chat",
                            exit_on_error=False, description="read the chat")

    def _round(self, config) -> None:
        from memento_core.chat.poll import run_round
        from memento_core.errors import MementoError

        problem, said = "", ""
        try:
            done = run_round(self.app.ws, config, budget=ROUND_BUDGET)
            problem = "; ".join(done.errors)
            if done.acted:
                said = f"chat: {done.acted} message(s) acted on" + (f", {done.ignored} ignored" if done.ignored else "")
        except MementoError as exc:  # a token file: the tick and `memento doctor` say it too
            problem = str(exc)
        except Exception as exc:  # noqa: BLE001 - a chat round never takes the dashboard down
            problem = f"chat round failed: {type(exc).__name__}: {exc}"
        finally:
            self.last_end = time.monotonic()
            self.running = False
        if said:
            self.app.call_from_thread(self.app.notify, said, timeout=4)
        if problem and problem != self.last_problem:
            self.app.call_from_thread(self.app.notify, f"chat: {problem}", severity="warning", timeout=8)
        self.last_problem = problem
