"""One module per `memento` subcommand: ``register(sub, common)`` adds its parser,
its ``cmd_*``/``run`` function runs it. Heavy imports go inside the functions, so
that building the whole parser stays cheap (`memento status --json`, SPEC §11)."""
