"""The tick of SPEC §4: ``__main__`` (the lock and the paused fast path), ``run`` (one function
per step, in order), and one module per step or per SPEC §13 guard the tick runs.

Each step of SPEC §4 and the module that does it (``run.<function>`` calls it, step by step):

     1  take the tick lock            __main__.run_locked (also the paused fast path; Memento's
                                      folders mended first: workspace.mend_own_folders);
                                      lock (a stopped holder taken over); orphans (a killed
                                      tick's processes end first)
     2  load config and plan          run.load_config_and_plan
     3  tick_mode other than auto     run.skip_unless_auto
        rate limited, budget spent    limits.skip_reason (SPEC §14)
     4  stale claims                  recovery (reads the tick's own record: record,
                                      memento_core/attempt_record.py); stale_workers (a killed
                                      tick's workers stopped, their worktrees pruned)
     5  dirty work tree, sync docs    run.refuse_dirty_tree
     6  pick                          pick (passing over held tasks: memento_core/held.py)
     7  claim                         claim.claim_task (the tick's record first: record)
     8  snapshot                      claim.take_snapshot
     9  build the worker prompt       agent.build_worker_prompt
    10  run the agent                 agent.run_agent, in the sandbox of confine; rate limits,
                                      fallback presets, usage and budget: limits (SPEC §14)
    11  guards                        observe.check_guards gathers, guards.check judges (pure);
                                      the put-backs of SPEC §13 it runs first: own (Memento's
                                      files, folders, state), git/state.py (.git), objects (git's
                                      object store), unseen (nested repositories, deep paths),
                                      kept (a person's untracked and ignored files), modes;
                                      startup (files that change how verify starts); receipts
                                      (a person's changes during the run, the agent's refused)
    12  verify                        verify.run_verify; then review (the acceptance gate, §16;
                                      review_file reads the reviewer's review.md)
    13  pass                          outcome.record_pass (the entry's parts: record)
    14  fail, roll back               outcome.record_failure -> rollback; a question: asking
    15  repeat                        run.work_through_tasks; a parallel phase: workers (start,
                                      wait), crew (what the workers share, the main branch
                                      followed), crew_judge (what a worker wrote outside its
                                      worktree), crew_watch (the main work tree watched),
                                      crew_result (a worker's pass or failure in main);
                                      git/worktrees.py
    16  afterwards                    afterwards (the circuit breaker, then rotation, alert,
                                      checkpoint, journal, pruning)
        land = "pr" (SPEC §19)        land (before the pick, in it, after the tick)

``attempt`` runs steps 7–14 in order (an exception inside them is the attempt's failure);
``context`` is what a tick carries from step to step (TickContext) and an attempt from
step to step (Attempt). This file imports nothing, so that a
paused tick imports no more than it needs (tests/core/test_import_hygiene.py).
"""
