"""docs/MASTER_PLAN.md, the plan (SPEC §3): parsed to frozen values, edited a line at a time.

Where things live (import each name from its module; this package re-exports nothing):

  model.py   the values: Plan, Meta, Phase, Task (its fields and problems decoded on
             first use), the status characters, TASK_ID, unquote, split_path_list
  scan.py    reading: parse_plan, parse_plan_text, decode_text, scan_plan, the
             one-regex scanner and the plan-level checks (Meta, phases, cycles)
  edits.py   writing: PlanEditor's minimal line edits, edit_plan (lock, re-read,
             apply, atomic replace) and the person's set_status, set_meta,
             reset_task, skip_task

Each module imports only those above it in this list's reverse order: edits → scan → model.
"""
