"""memento.toml, how to run here (SPEC §10): read with tomllib, validated into a frozen Config.

Where things live (import each name from its module; this package re-exports nothing):

  model.py      the values: Config, AgentSettings, the [chat] rooms, PRESET_NAMES,
                NOTIFY_EVENTS, the defaults, parse_author ("Name <email>")
  validator.py  Validator: one key read as its type, or a MementoError at its line
                (key_line, entry_line)
  sections.py   [agent]'s keys for [review] and [architect] (agent_section), [workers],
                [notify], [architect]'s runs, [forge] (repo_problem)
  sandbox.py    [sandbox], and the variables never passed to the agent (env_never)
  chat.py       [chat]: Telegram and Matrix rooms, and no token in the file
  load.py       load_config, config_from_dict: every section validated in a fixed order
  lint.py       warnings, not errors: unknown sections and keys, refused [keys] remaps
  write.py      DEFAULT_CONFIG_TOML (what `memento init` writes), set_schedule_every

Each imports only those listed before it (write → load → sections, sandbox, chat →
validator → model; lint → validator → model).
"""
