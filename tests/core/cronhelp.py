"""A person's crontab that every test of Memento's entries must leave byte for byte, and its lines
told apart (Memento's entries, everyone else's): for memento_core/cron.py's tests and `memento cron`'s.
The crontab file itself (MEMENTO_CRONTAB_FILE's stand-in) is the ``tab`` fixture, tests/core/conftest.py."""

from __future__ import annotations

from memento_core import cron

OTHERS = """\
# a person's crontab: every byte of this must survive
MAILTO=someone@example.invalid
SHELL=/bin/bash
*/10 * * * * /usr/local/bin/backup --quiet >> /var/log/backup.log 2>&1 # nightly-ish
@reboot /home/someone/start-things.sh
# 0 3 * * * /usr/bin/disabled-job
15 4 * * 1-5 echo "100\\% done" # percent already escaped
"""


def entry_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if cron.TAG_PREFIX in ln]


def other_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if cron.TAG_PREFIX not in ln]
