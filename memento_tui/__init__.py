"""memento-tui: the dashboard (SPEC §6). Reads files, renders them, edits only through memento_core."""
