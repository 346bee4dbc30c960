"""Memento's headless core: plan, notes, status log, locks, git, agents, the tick.

Nothing in this package imports Textual or memento_tui (enforced by an
import-linter contract and tests/core/test_import_hygiene.py).
"""

from . import dataclass_code, regex_code

__version__ = "0.1.0"

dataclass_code.install()  # before any of Memento's dataclasses is made
regex_code.install()  # before any of Memento's modules compiles its patterns
