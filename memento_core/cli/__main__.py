"""``python -m memento_core.cli …``: the `memento` command (how workers and tests run it)."""

from .main import main

raise SystemExit(main())
