"""Mutation testing of the guard code (issue 37): one-line mutants, each run against its module's tests.

Run: python bench/mutants.py [MODULE ...] [--sample N] [--seed S] [--jobs J] [--list] [--json FILE]

A guard that no test can break is a guard nobody checks. For each module (default:
``MODULES`` below, the guards, the rollback, the kept files, the receipts, the sandbox,
the fleet, the limits and the plan/notes/status parsers) this makes every one-line
mutant ast finds (a comparison flipped, ``and``/``or`` swapped, a boolean constant
flipped, an integer constant moved by one, a ``not`` removed, a ``return`` of None,
a call statement, ``raise``, ``break`` or ``continue`` deleted, ``in``/``not in`` and
``is``/``is not`` swapped, ``startswith``/``endswith`` and ``any``/``all`` swapped),
optionally samples N of them per module (deterministically, from ``--seed``), and runs
each in a copy of the repository against the module's own test files (``TESTS``):
``pytest -n 0 -x -q`` with a wall cap. A mutant is killed when a test fails or the
run passes the cap; it survives when every test passes. Survivors are printed with
their line and mutation: each is a missing test or dead code.

The repository itself is never changed: the copy is made beside it (not under /tmp:
the sandbox the tests start mounts a private /tmp, and Memento's own helpers that it
starts by path must be visible in it) and removed at the end, Ctrl-C included.

Why not mutmut: mutmut 3 swaps functions through a trampoline that reads
``MUTANT_UNDER_TEST`` from the environment and maps tests to functions by calls it sees
in the pytest process. Memento's tests judge a real tick, run as ``python -m
memento_core.tick`` (and agents, verify and the sandbox with a scrubbed environment):
most mutants would be "not covered" or silently the original code.

Budget (issue 37): at least 85 % killed overall, no module under 70 %. Exit status 2 when an
EQUIVALENT entry matches another number of mutants than it says (see equivalent_problems); 1
when missed (or when a module's tests fail before any mutation).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BUDGET_OVERALL = 0.85
BUDGET_MODULE = 0.70

FLEET_MODULES = ("host", "remote", "docs", "integrate", "pending", "claims", "stale", "batch", "publish", "sync",
                 "pick")


def _fleet_tests(module: str) -> tuple[str, ...]:
    """tests/core/fleet/test_<module>.py first (when there is one), then the fleet's other test
    files and tests/core/test_fleet.py's scenarios."""
    own = f"tests/core/fleet/test_{module}.py"
    others = [f"tests/core/fleet/test_{name}.py" for name in (*FLEET_MODULES, "plan_merge") if name != module]
    return (own, *others, "tests/core/test_fleet.py")


def _plan_tests(module: str) -> tuple[str, ...]:
    """tests/core/plan/test_<module>.py first, then the plan's other two: its values are seen
    through the scanner and the edits too."""
    return tuple(f"tests/core/plan/test_{name}.py" for name in (module, *(n for n in ("scan", "model", "edits") if n != module)))

# Each module and the test files that are its own (what a person runs after changing it); a
# test id (file::name) takes one test of a file that is mostly about something else.
TESTS: dict[str, tuple[str, ...]] = {
    "memento_core/tick/guards.py": ("tests/core/tick/test_guards.py", "tests/core/scenarios/test_empty_change.py",
                                    "tests/core/scenarios/test_verify_rewrites.py"),
    "memento_core/tick/rollback.py": ("tests/core/tick/test_rollback.py", "tests/core/tick/test_notes_restore.py",
                                      "tests/core/scenarios/test_ignored.py",
                                      "tests/core/scenarios/test_engine.py::test_each_misbehaviour_fails_with_its_reason_and_rolls_back",
                                      "tests/core/scenarios/test_person_receipts.py::test_a_persons_skip_during_a_damaged_run_keeps_its_reason",
                                      "tests/core/scenarios/test_person_receipts.py::test_a_persons_skip_while_the_agent_rewrites_its_own_verify_is_kept",
                                      "tests/core/scenarios/test_person_receipts.py::test_a_persons_reset_during_a_damaged_run_leaves_retries_0",
                                      "tests/core/scenarios/test_person_receipts.py::test_a_persons_pause_during_a_damaged_run_stays_paused"),
    "memento_core/tick/kept.py": ("tests/core/tick/test_kept.py", "tests/core/scenarios/test_ignored.py",
                                  "tests/core/scenarios/test_persons_untracked.py",
                                  "tests/core/scenarios/test_attributes_links.py::test_the_rollback_restores_modes",
                                  "tests/core/scenarios/test_attributes_links.py::"
                                  "test_a_link_out_of_the_tree_or_at_a_guarded_or_memento_file_is_refused"),
    "memento_core/tick/receipts.py": (
        "tests/core/tick/test_receipts.py",
        "tests/core/scenarios/test_person_receipts.py::test_the_agents_raw_commit_in_memory_is_taken_out_of_its_history",
        "tests/core/scenarios/test_person_receipts.py::test_a_persons_memory_write_during_the_run_is_theirs_and_the_task_passes",
        "tests/core/scenarios/test_person_receipts.py::test_a_person_commit_in_memory_with_one_file_no_person_announced_is_forged",
        "tests/core/tick/test_workers.py::test_a_worker_failing_its_last_retry_blocks_its_task_and_the_other_lands"),
    "memento_core/receipts.py": ("tests/core/tick/test_receipts.py", "tests/core/scenarios/test_person_receipts.py"),
    "memento_core/sandbox/__init__.py": ("tests/core/sandbox/test_sandbox.py",),
    "memento_core/sandbox/home.py": ("tests/core/sandbox/test_home.py",),
    # The fleet (tick/remote.py until issue 42): each module against its own tests first, then the
    # fleet's others and its scenarios (a mutant of one module is often seen through another).
    **{f"memento_core/fleet/{name}.py": _fleet_tests(name) for name in FLEET_MODULES},
    "memento_core/tick/limits.py": ("tests/core/tick/test_limits.py", "tests/core/scenarios/test_rate_limit_streak.py",
                                    "tests/core/tick/test_live_and_tokens.py"),
    # The plan (plan.py until issue 42).
    "memento_core/plan/model.py": _plan_tests("model"),
    "memento_core/plan/scan.py": _plan_tests("scan"),
    "memento_core/plan/edits.py": (*_plan_tests("edits"),
                                   # a person's skip and reset announce themselves to the running tick
                                   "tests/core/scenarios/test_person_receipts.py::test_a_persons_skip_during_a_damaged_run_keeps_its_reason",
                                   "tests/core/scenarios/test_person_receipts.py::test_a_persons_reset_during_a_damaged_run_leaves_retries_0"),
    "memento_core/notes.py": ("tests/core/test_notes.py",),
    "memento_core/status_log.py": ("tests/core/test_status_log.py", "tests/core/scenarios/test_entry_words.py"),
    # Code every process of Memento runs from a file (issue 42): trusted as bytecode, judged as exec.
    "memento_core/dataclass_code.py": ("tests/core/test_dataclass_code.py",),
    "memento_core/regex_code.py": ("tests/core/test_regex_code.py",),
    "memento_core/compiled_cache.py": ("tests/core/test_compiled_cache.py", "tests/core/test_dataclass_code.py",
                                       "tests/core/test_regex_code.py"),
}
MODULES = tuple(TESTS)

# A line carrying this comment is not mutated (an equivalent mutant: say why beside it).
NO_MUTATE = "pragma: no mutate"



@dataclass(frozen=True)
class Each:
    """An EQUIVALENT entry meant for ``count`` mutants at once: the same line in several places of
    the module, or one mutation made twice on a line. A plain ``why`` is meant for exactly one."""

    count: int
    why: str


# Equivalent mutants: no behaviour differs, so no test can kill them. (module, the line as it
# reads, stripped; the mutation) -> why. By the line's text, not its number: it outlives edits above.
# An entry must match as many of today's mutants as it says (one, or Each's count): a line written
# again elsewhere would otherwise be taken as equivalent unseen (equivalent_problems; a run refuses).
EQUIVALENT: dict[tuple[str, str, str], str | Each] = {
    **{("memento_core/dataclass_code.py", "MAX_ENTRIES = 4096", what):
       "how many texts the file keeps before it starts again: any bound keeps it bounded"
       for what in ("4096 -> 4097", "4096 -> 4095")},
    ("memento_core/regex_code.py",
     "if type(p) not in (str, bytes) or flags & _NOT_KEPT or not _in_module_body(sys._getframe(1)):", "1 -> 2"):
        "frame 1 is re's own _compile, frame 2 re's compile or match: the walk goes past re's frames from either",
    ("memento_core/compiled_cache.py", "return False", "return None"):
        "its callers take the answer as true or false: None is false",
    **{("memento_core/regex_code.py", "MAX_ENTRIES = 4096", what):
       "how many patterns the file keeps before it starts again: any bound keeps it bounded"
       for what in ("4096 -> 4097", "4096 -> 4095")},
    **{("memento_core/compiled_cache.py", "MAX_BYTES = 16 * 1024 * 1024", what):
       Each(count, "the largest file read: any bound keeps a read bounded (tests set their own)")
       for what, count in (("16 -> 15", 1), ("16 -> 17", 1), ("1024 -> 1023", 2), ("1024 -> 1025", 2))},
    **{("memento_core/compiled_cache.py", "data = fh.read(info.st_size + 1)", what):
       "fstat said just before how much the file holds: reading that, one or two bytes more reads it whole "
       "(a file that grew meanwhile is cut short and refused by marshal either way)" for what in ("1 -> 0", "1 -> 2")},
    ("memento_core/dataclass_code.py", 'code = compile(text, "<string>", "exec", flags, dont_inherit=True)',
     "True -> False"):
        "this module has no __future__ import: inheriting its flags adds none to the caller's, given",
    ("memento_core/dataclass_code.py", 'source = compile(source, "<string>", "exec", flags, dont_inherit=True)',
     "True -> False"):
        "this module has no __future__ import: inheriting its flags adds none to the caller's, given",
    ("memento_core/tick/kept.py", 'folders = {p.rsplit("/", 1)[0] for p in paths if "/" in p}', "1 -> 0"):
        "a tracked file's own path among the folders: its mode is read once more and is the same, "
        "and the line below still adds every folder above it",
    ("memento_core/tick/kept.py",
     'return lambda paths: save_rollback(root, None, [FileChange(p, 0, 0, "created") for p in paths],', "0 -> 1"):
        Each(2, "the line counts of a created file: save_rollback reads a change's path and kind only"),
    ("memento_core/tick/receipts.py",
     'self.thread = threading.Thread(target=self._serve, name="memento-receipts", daemon=True)', "True -> False"):
        "close() stops and joins the thread on every way out of listening()",
    ("memento_core/sandbox/home.py", "os.chmod(os.path.dirname(path), 0o700)", "call deleted"):
        "_clear's unlock: a child that cannot be removed leaves its folder not empty, so the folder's own "
        "rmdir fails next and unlock opens that folder (and its parent) and removes it whole; 64 two-level "
        "layouts of every pair of modes 000-700 were emptied alike without CAP_DAC_OVERRIDE",
    ("memento_core/sandbox/home.py",
     'left = sorted(e.name for e in os.scandir(private) if e.name != ".cache" or not e.is_dir(follow_symlinks=False))',
     "False -> True"):
        "a .cache that is a link was unlinked by the loop above, in a home just made 0700 and owned by the "
        "tick; where it cannot be (the home immutable or append-only), the chmod before the loop raises first",
    ("memento_core/sandbox/home.py", "while chunk := os.read(src, 1 << 20):", "20 -> 21"):
        "the size of a read while copying a file",
    ("memento_core/notes.py", 'digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]', "12 -> 13"):
        "the length of a note's key: any length names a note as well",
    ("memento_core/notes.py", 'digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]', "12 -> 11"):
        "the length of a note's key: any length names a note as well",
    ("memento_core/notes.py", 'kind = "" if self.kind == NOTE else f"{self.kind}|"  # a note\'s key as it always was',
     "== -> !="):
        "a note's key then starts NOTE| and an answer's none: the two kinds still never share a key, and a "
        "key is only ever compared with keys this same property made (a snapshot's, .memento/notes_added)",
    ("memento_core/tick/rollback.py",
     "def restore_documents(ws: Workspace, snap: Snapshot, task_id: str, *, confined: bool = False) -> str:",
     "False -> True"):
        "a default no caller takes: the attempt's failure and the fallback's rollback both pass confined",
    ("memento_core/tick/rollback.py", "@dataclass(frozen=True)", "True -> False"):
        "RolledBack is made once and only read (TickContext.rolled_back reads .said and .error): "
        "nothing assigns to its fields and none is hashed",
    ("memento_core/tick/rollback.py", "return False", "return None"):
        "keep() is asked for its truth only (`not keep(...)` here, `keep and keep(...)` in git.rollback): "
        "None is False",
    ("memento_core/tick/receipts.py", "while cur > 1 and cur not in seen:", "1 -> 0"):
        "as `> -> >=`: pid 0 is no process; the walk stops at pid 1's parent either way",
    ("memento_core/tick/receipts.py", "while cur > 1 and cur not in seen:", "1 -> 2"):
        "pid 2 (kthreadd) is the parent of kernel threads only, never of a process that connects",
    ("memento_core/tick/receipts.py", "while cur > 1 and cur not in seen:", "> -> >="):
        "pid 1 (always readable, its parent is 0) is one more step that ends the walk as before; a "
        "tick that is pid 1 is found by `cur == tick`, which both the loop and the line after it ask",
    ("memento_core/tick/limits.py",
     'self._thread = threading.Thread(target=self._run, name="budget-watch", daemon=True)', "True -> False"):
        "__exit__ sets the event the thread waits on and joins it on every way out of the attempt",
    ("memento_core/tick/kept.py", "@dataclass(frozen=True)", "True -> False"):
        Each(2, "Kept and PutBack are made once and only read: nothing assigns to their fields, and Kept "
        "holds dicts (never hashable) while no PutBack is hashed"),
    ("memento_core/sandbox/home.py",
     'name += "." + hashlib.sha256(real_root.encode("utf-8", "surrogateescape")).hexdigest()[:8]', "8 -> 9"):
        "the length of a worktree's private-home suffix: any length names the worktree as well, and "
        "nothing else computes or matches it",
    ("memento_core/sandbox/home.py",
     'name += "." + hashlib.sha256(real_root.encode("utf-8", "surrogateescape")).hexdigest()[:8]', "8 -> 7"):
        "the length of a worktree's private-home suffix: any length names the worktree as well, and "
        "nothing else computes or matches it",
    ("memento_core/notes.py", 'raise MementoError("archiving would change the notes; file left as it was", path=path)',
     "raise deleted"):
        "a check after the edit that no input reaches (test_property_archive_read_loses_and_doubles_nothing "
        "generates hostile files for it): kept so that a future bug loses no note, never a path a test can walk",
    ("memento_core/notes.py", "if scan.fence_open is not None and scan.fence_open < at:", "< -> <="):
        "a fence opened inside the Active section is content, so `at` is past it; the line at `at` is the "
        "next section's heading or the end of the file, never a fence",
    ("memento_core/notes.py",
     '(i for i, ln in enumerate(doc.lines[at : at + 2], start=at) if ln.startswith("### ")), at', "2 -> 3"):
        "the note's heading is at `at` or after the one blank line _insert_block may put first: the first "
        "match within two lines is the first within three",
    ("memento_core/notes.py",
     "if len(added) != 1 or added[0].text != body or added[0].target != target or added[0].kind != kind:",
     "or -> and"):
        "a check after the edit that no input reaches (the property tests and a fuzz of hostile files and "
        "texts never met it): kept so that a future bug loses no note, never a path a test can walk",
    ("memento_core/notes.py", 'raise MementoError("could not add the note without breaking the file", path=path)',
     "raise deleted"):
        "a check after the edit that no input reaches (the property tests and a fuzz of hostile files and "
        "texts never met it): kept so that a future bug loses no note, never a path a test can walk",
    ("memento_core/notes.py", "if sorted(n.key for n in after.notes) != before or any(", "or -> and"):
        "the check after archiving that no input reaches (see its raise below): never true either way",
    ("memento_core/notes.py", "if sorted(n.key for n in after.notes) != before or any(", "any -> all"):
        "the check after archiving that no input reaches (see its raise below): the moved notes are archived, "
        "so `all` of them unarchived is false as `any` is",
    ("memento_core/notes.py", "changed = [0]", "0 -> 1"):
        "locked_edit always calls transform, which sets the count to 0 first, before mark_read reads it",
    ("memento_core/notes.py", "moved_count = [0]", "0 -> 1"):
        "locked_edit always calls transform, which sets the count to 0 first, before archive_read reads it",
    ("memento_core/tick/kept.py", "os.chmod(target, stat.S_IMODE(was[0]), follow_symlinks=False)", "False -> True"):
        "the file was made two lines above with O_CREAT | O_EXCL | O_NOFOLLOW: not a link to follow",
    ("memento_core/tick/kept.py",
     "fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(was[0]) | 0o600)", "0 -> 1"):
        "the mode the restored file is made with: the descriptor O_CREAT returns writes whatever it says, and the chmod two lines below gives the file the snapshot's mode",
    ("memento_core/tick/kept.py",
     "fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(was[0]) | 0o600)", "384 -> 383"):
        "the mode the restored file is made with: the descriptor O_CREAT returns writes whatever it says, and the chmod two lines below gives the file the snapshot's mode",
    ("memento_core/tick/kept.py",
     "fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(was[0]) | 0o600)", "384 -> 385"):
        "the mode the restored file is made with: the descriptor O_CREAT returns writes whatever it says, and the chmod two lines below gives the file the snapshot's mode",
    ("memento_core/tick/kept.py", "os.utime(target, ns=(mtime, mtime), follow_symlinks=False)  # atime too: the print has none",
     "False -> True"):
        "the file was made three lines above with O_CREAT | O_EXCL | O_NOFOLLOW: not a link to follow",
    ("memento_core/tick/kept.py", "return False", "return None"):
        Each(2, "_restore's one caller asks for its truth only (the comprehension's if): None is False"),
    ("memento_core/receipts.py",
     'return hashlib.new(fmt, b"blob %d\\0" % len(data) + data, usedforsecurity=False).hexdigest()', "False -> True"):
        "the same digest wherever OpenSSL runs outside FIPS mode (here, CI): the flag only lets SHA-1 run on a "
        "FIPS-restricted machine, where True would refuse it; no test here can run on one",
    ("memento_core/receipts.py", "chunk = sock.recv(4096)", "4096 -> 4095"):
        "the size of one read of a line: the loop reads until the newline or 64 KiB, the line cut there",
    ("memento_core/receipts.py", "chunk = sock.recv(4096)", "4096 -> 4097"):
        "the size of one read of a line: the loop reads until the newline or 64 KiB, the line cut there",
    ("memento_core/receipts.py", 'return data.split(b"\\n", 1)[0][:MAX_RECEIPT]  # the last chunk may run past it',
     "1 -> 2"):
        "the first piece of a split is the same however many splits follow it",
    ("memento_core/sandbox/__init__.py", "@dataclass(frozen=True)", "True -> False"):
        "a Resolution is made once and only read: nothing assigns to its fields and none is hashed",
    ("memento_core/sandbox/__init__.py", "@lru_cache(maxsize=4)", "4 -> 3"):
        "how many bwrap binaries' answers are remembered: a forgotten one is asked again and says the same",
    ("memento_core/sandbox/__init__.py", "@lru_cache(maxsize=4)", "4 -> 5"):
        "how many bwrap binaries' answers are remembered: a forgotten one is asked again and says the same",
    ("memento_core/receipts.py", "sock.close()", "call deleted"):
        "the socket's last reference goes when vouch returns, and CPython closes it then: no test "
        "can see the descriptor (the close is said for other Pythons and for the reader)",
    ("memento_core/receipts.py", "return False", "return None"):
        Each(2, "Receipts.status and .field are asked for their truth only (the guards' `if`): None is False"),
    ("memento_core/receipts.py", 'return b""', "return None"):
        "_read_rest's one caller reads `answer or b'{}'`: None and b'' are the same answer",
    ("memento_core/sandbox/home.py", "if entry.is_dir(follow_symlinks=False):", "False -> True"):
        "a link to a folder then goes to rmtree, which refuses links and hands it to its onerror "
        "(unlock), which unlinks it: the link goes either way and what it leads to is never touched",
    ("memento_core/sandbox/home.py", "return json.dumps(doc, indent=2).encode()", "2 -> 1"):
        "the indentation of a filtered JSON settings file: the CLI reads any",
    ("memento_core/sandbox/home.py", "return json.dumps(doc, indent=2).encode()", "2 -> 3"):
        "the indentation of a filtered JSON settings file: the CLI reads any",
    ("memento_core/sandbox/home.py",
     'digest = hashlib.sha256(project.encode("utf-8", "surrogateescape")).hexdigest()[:16]', "16 -> 15"):
        "the length of a project's folder of private homes: any length names the project as well, and "
        "nothing else computes or matches it",
    ("memento_core/sandbox/home.py",
     'digest = hashlib.sha256(project.encode("utf-8", "surrogateescape")).hexdigest()[:16]', "16 -> 17"):
        "the length of a project's folder of private homes: any length names the project as well, and "
        "nothing else computes or matches it",
    ("memento_core/sandbox/home.py", "while chunk := os.read(src, 1 << 20):", "20 -> 19"):
        "the size of a read while copying a file",
    ("memento_core/sandbox/home.py", "while chunk := os.read(src, 1 << 20):", "1 -> 2"):
        "the size of a read while copying a file",
    ("memento_core/sandbox/home.py", "os.chmod(path, 0o700)", "448 -> 447"):
        "the mode _clear's unlock gives a folder it removes next: any mode with the owner's read bit lets "
        "rmtree list it, and each entry it then cannot reach calls unlock, which opens the folder (its "
        "parent) 0700 again",
    ("memento_core/sandbox/home.py", "os.chmod(path, 0o700)", "448 -> 449"):
        "the mode _clear's unlock gives a folder it removes next (an x for others changes nothing there)",
    ("memento_core/sandbox/home.py", "os.unlink(path)", "call deleted"):
        "a file or link rmtree could not unlink (its folder not writable): unlock opens the folder first, "
        "and when the file is left, rmtree's rmdir of the folder fails and unlock removes the folder again, "
        "whole, now writable",
    ("memento_core/tick/guards.py", "@dataclass(frozen=True)", "True -> False"):
        Each(3, "Snapshot, Observed and Verdict are made once and only read: nothing assigns to their fields "
        "(dataclasses.replace makes a new one) and none is hashed"),
    ("memento_core/fleet/publish.py", 'if task is None or task.status != "~":', "or -> and"):
        "the edit that follows refuses the same two cases (not in the plan, not [~]) with the EditConflict "
        "caught below it; only an empty plan file differs, which the guards have restored before publish",
    ("memento_core/plan/model.py", "line: int = 0  # the ``## Meta`` heading; 0 when the plan has none", "0 -> 1"):
        "a default nothing reads: the scanner always passes the Meta's line, and the one other Meta() "
        "(tick/lock.py) reads its stale_lock_timeout alone",
    ("memento_core/plan/model.py",
     'and (fields.keys() <= _USUAL_KEYS or "".join(fields).islower()) and "[retries" not in self.raw_rest:', "<= -> <"):
        "Task._parsed's fast path taken less often: keys that are all usual are all lower case, which "
        "islower() tells as well, and the general path reads such a block the same",
    ("memento_core/plan/model.py",
     'and (fields.keys() <= _USUAL_KEYS or "".join(fields).islower()) and "[retries" not in self.raw_rest:', "or -> and"):
        "Task._parsed's fast path taken less often: a lower-case block of unusual keys goes the general "
        "way, which reads it the same (no key repeated, no accept, no inline retries)",
    ("memento_core/plan/model.py",
     'line = task.field_lines.get(problem.split(":", 1)[0], task.line) if ": " in problem else task.line', "1 -> 2"):
        "the first piece of a split is the same however many splits follow it",
    ("memento_core/plan/scan.py", "@lru_cache(maxsize=2)", "2 -> 3"):
        "how many parsed plans are kept: a plan no longer kept is parsed again, equal, from the same text",
    ("memento_core/plan/scan.py", "atexit.register(_parsed.cache_clear)", "call deleted"):
        "the cache emptied at exit saves Python's finalization the walk of the plans it holds: CPU at "
        "exit, no value any caller reads",
    ("memento_core/plan/scan.py", "while pos < end:", "< -> <="):
        "at pos == end the search finds nothing (every structural line has a character) and the loop breaks",
    ("memento_core/plan/scan.py", "pos = m.end() + 1", "1 -> 0"):
        "a match ends at its line's newline (or after a blank line's, before an empty line): `^` matches "
        "nothing at that newline, so the next match is the one found from the next line",
    ("memento_core/plan/scan.py", "return m.end() + 1  # e.g. ```a`b: a line of text", "1 -> 0"):
        "as pos = m.end() + 1: the line ends at its newline, where no structural line starts",
    ("memento_core/plan/scan.py", "return close.end() + 1", "1 -> 0"):
        "as pos = m.end() + 1: a closing fence's match ends at its newline, where no structural line starts",
    ("memento_core/plan/scan.py",
     "self.phase_meta_allowed = False  # phase lines (parallel, depends) come before its tasks", "False -> True"):
        "read only while a phase is open, and the heading that opens one sets it True",
    ("memento_core/plan/scan.py",
     'phase_id = heading.split(":", 1)[0].strip() if ":" in heading else heading', "1 -> 2"):
        "the first piece of a split is the same however many splits follow it",
    ("memento_core/plan/scan.py", "state[node] = 2", "2 -> 3"):
        "_check_cycles asks only whether a phase is being visited (1) or not seen (None): done is any other value",
    ("memento_core/plan/model.py", 'and (not (value := get("estimate")) or not _duration_problem(value)) \\', "or -> and"):
        "Task.problems' fast path never taken: without an estimate the memo's check of None is a problem, "
        "with one `not value` is false; _problems then says every task's problems the same",
    ("memento_core/plan/model.py", 'and (not (value := get("timeout")) or not _duration_problem(value)):', "or -> and"):
        "Task.problems' fast path never taken (as the estimate's line): _problems says the same",
    ("memento_core/tick/limits.py", "outcome.suspect = (preset, limit, ctx.config, chain[i + 1:])", "1 -> 0"):
        "the presets after the suspected one then include itself, and confirm_limit has just stamped it refused "
        "(until the CLI's reset or a backoff of 5 minutes or more) before it picks the first free one: never it; "
        "only a reset less than a second away (the stamp drops its fraction) would differ, a moment no test times",
    ("memento_core/tick/limits.py", "self.marker = spec.usage_marker if spec is not None else None", "is not -> is"):
        "without a marker the watch reads the whole capture instead of the usage lines picked from it: the "
        "parser finds the same last usage line there (the capture keeps a stream's first and last 10 MB)",
    ("memento_core/tick/limits.py",
     "if (config.budget_task_usd > 0 or config.budget_task_tokens > 0) and self.parse is not None:", "> -> >="):
        Each(2, "a watch started with that budget 0 (dollars or tokens): over_task_budget asks `> 0` of each "
             "budget itself, so it never finds the attempt over one that is off"),
    ("memento_core/tick/limits.py", "self._thread.join(timeout=10)", "10 -> 11"):
        "the thread ends as soon as the event just set wakes it (a look under way parses the usage lines in "
        "milliseconds): it never waits out the timeout",
    ("memento_core/tick/limits.py", "self._thread.join(timeout=10)", "10 -> 9"):
        "the thread ends as soon as the event just set wakes it (a look under way parses the usage lines in "
        "milliseconds): it never waits out the timeout",
    ("memento_core/tick/limits.py", "return -1 if over and not pgid else size", "return None"):
        "the size judged only spares a parse of output that did not grow: with None every second's output is "
        "parsed again and judged the same",
    ("memento_core/tick/limits.py", "return -1 if over and not pgid else size", "and -> or"):
        "-1 only makes the next second look again at output that did not grow: looked at again, it is judged "
        "the same (an over budget is stopped by the look that finds the group known)",
    ("memento_core/tick/limits.py", "until = utc_stamp(last.resets_at.replace(microsecond=0))", "0 -> 1"):
        "utc_stamp writes whole seconds: the microseconds are dropped either way",
    ("memento_core/tick/limits.py", "ctx.state.preset_limits[preset] = utc_stamp(until.replace(microsecond=0))",
     "0 -> 1"):
        "utc_stamp writes whole seconds: the microseconds are dropped either way",
    ("memento_core/tick/limits.py",
     "until = limit.until if limit.until is not None and limit.until > now else None", "> -> >="):
        "differs only when the CLI's reset time equals datetime.now() to the microsecond: no test can time "
        "that without a clock of its own",
    ("memento_core/tick/limits.py",
     "until = now + timedelta(minutes=min(first * 2 ** min(ctx.state.rate_limit_streak, 10), longest))",
     "10 -> 11"):
        "the 120-minute cap binds from a streak of 5 on (5 * 2**5 = 160): the exponent's own cap only keeps "
        "the integer small",
    ("memento_core/tick/limits.py",
     "until = now + timedelta(minutes=min(first * 2 ** min(ctx.state.rate_limit_streak, 10), longest))",
     "10 -> 9"):
        "the 120-minute cap binds from a streak of 5 on (5 * 2**5 = 160): the exponent's own cap only keeps "
        "the integer small",
    ("memento_core/tick/limits.py", "if config.budget_daily_usd <= 0 and config.budget_daily_tokens <= 0:",
     "<= -> <"):
        Each(2, "with a budget of exactly 0 (dollars or tokens) the day's usage is read, and each check below "
             "asks `> 0` of its budget again: ('', '') all the same"),
    ("memento_core/tick/limits.py", "return bool(_daily_reached(ctx, now)[0])", "0 -> 1"):
        "_daily_reached answers both parts empty or both set (what was spent, the key that stopped it)",
    ("memento_core/status_log.py", '("ARCHITECT", r"\\bARCHITECT\\b", 0),  # "🏗 ARCHITECT" (SPEC §16)', "0 -> 1"):
        "flag 1 is re.TEMPLATE, which only refuses repetition operators (this pattern has none) and "
        "says it is deprecated: the pattern matches what it matched with 0, case still counting",
    ("memento_core/status_log.py",
     '("FORGE", r"\\bFORGE\\b", 0),  # "⚠️ FORGE — GitHub refused the token from GITHUB_TOKEN" (SPEC §19)',
     "0 -> 1"):
        "flag 1 is re.TEMPLATE, which only refuses repetition operators (this pattern has none) and "
        "says it is deprecated: the pattern matches what it matched with 0, case still counting",
    ("memento_core/status_log.py", 'return _MODULE_RE.sub("", rest, count=1).strip()', "1 -> 0"):
        "_MODULE_RE is anchored at ^ (no MULTILINE): it can match once, at the start, whatever the count "
        "(`[MODULE:a] [MODULE:b] t` keeps `[MODULE:b] t` with 0, 1 or 2)",
    ("memento_core/status_log.py", 'return _MODULE_RE.sub("", rest, count=1).strip()', "1 -> 2"):
        "_MODULE_RE is anchored at ^ (no MULTILINE): it can match once, at the start, whatever the count "
        "(`[MODULE:a] [MODULE:b] t` keeps `[MODULE:b] t` with 0, 1 or 2)",
    ("memento_core/status_log.py", 'elif first == "-" and "---" in s[:6] and SEPARATOR_RE.match(s):', "6 -> 7"):
        "a quick test before SEPARATOR_RE (` {0,3}-{3,}`): every line it matches has three dashes within "
        "its first six characters, so looking at seven lets through nothing SEPARATOR_RE then takes",
    ("memento_core/status_log.py",
     'raise MementoError("could not append the status entry without breaking the file", path=path)',
     "raise deleted"):
        "a check after the edit that no input reaches (the fence or comment a hand left open is closed first; "
        "test_property_append_keeps_prefix_and_parses and a fuzz of 30,000 hostile files never met it): kept "
        "so that a future bug loses no entry, never a path a test can walk",
    ("memento_core/status_log.py", 'return safe[:40] or "nostamp"', "40 -> 39"):
        "the length a stamp is cut to in an archive's name: any length names the archive as well, and "
        "_plan_rotation and _archived_prefix cut it alike (an archive is then matched by its entries' text)",
    ("memento_core/status_log.py", 'return safe[:40] or "nostamp"', "40 -> 41"):
        "the length a stamp is cut to in an archive's name: any length names the archive as well, and "
        "_plan_rotation and _archived_prefix cut it alike (an archive is then matched by its entries' text)",
    ("memento_core/status_log.py", "if not scan.entries or not archive_dir.is_dir():", "or -> and"):
        "either test alone returns (0, None) as both do: with no entries the walk has nothing to match, and "
        "a folder that is not there globs no candidate",
    ("memento_core/status_log.py", "if rotation.new_path is not None and rotation.new_bytes is not None:",
     "and -> or"):
        "_plan_rotation makes a _Rotation with both a new path and its bytes, or with neither",
    ("memento_core/tick/receipts.py", "sock.listen(16)", "16 -> 15"):
        "the backlog of connections not yet accepted: a person's command connects once and is answered "
        "at once; no test can fill 15 or 16 pending connections apart",
    ("memento_core/tick/receipts.py", "sock.listen(16)", "16 -> 17"):
        "the backlog of connections not yet accepted: a person's command connects once and is answered "
        "at once; no test can fill 16 or 17 pending connections apart",
    ("memento_core/tick/receipts.py", "sock.close()", "call deleted"):
        "open()'s socket that could not be bound: its last reference goes when open returns False, and "
        "CPython closes it then (said for other Pythons and for the reader)",
    ("memento_core/tick/receipts.py", "return False", "return None"):
        "open()'s one caller (listening) asks its truth only: None is False",
    ("memento_core/tick/receipts.py", "self.thread.join(5)", "5 -> 4"):
        "how long close() waits for the thread it has just woken (shutdown ends its accept at once): "
        "a bound on a hang, never reached",
    ("memento_core/tick/receipts.py", "self.thread.join(5)", "5 -> 6"):
        "how long close() waits for the thread it has just woken (shutdown ends its accept at once): "
        "a bound on a hang, never reached",
    ("memento_core/tick/receipts.py",
     "for _ in range(5):  # a parent exiting mid-walk re-parents the chain: walk again", "5 -> 4"):
        "how many times the walk starts again when a parent exits between two reads of /proc: a race no "
        "test can time on a real /proc, and a table that breaks every walk says the same after 4, 5 or 6",
    ("memento_core/tick/receipts.py",
     "for _ in range(5):  # a parent exiting mid-walk re-parents the chain: walk again", "5 -> 6"):
        "how many times the walk starts again when a parent exits between two reads of /proc: a race no "
        "test can time on a real /proc, and a table that breaks every walk says the same after 4, 5 or 6",
    ("memento_core/fleet/host.py", "@dataclass(frozen=True)", "True -> False"):
        "a Beat is made once from a ref as fetched and only read (.sha, .host, .at): nothing assigns to its "
        "fields and none is hashed (beats are a dict's values)",
    ("memento_core/fleet/host.py", "self._thread.join(timeout=30)", "30 -> 29"):
        "the wait for a heartbeat thread whose event was set on the line above: it ends within one push, "
        "long before either bound",
    ("memento_core/fleet/host.py", "self._thread.join(timeout=30)", "30 -> 31"):
        "the wait for a heartbeat thread whose event was set on the line above: it ends within one push, "
        "long before either bound",
    ("memento_core/fleet/stale.py", "return False", "return None"):
        Each(2, "take_over_stale and _take_over after a lost push: sync asks take_over_stale's truth only "
             "(`not take_over or take_over_stale(...)`), and take_over_stale _take_over's (`if not ...`): "
             "None is False"),
    ("memento_core/fleet/stale.py", '"--format=%H%x09%ct%x09%B", "HEAD"], check=False).stdout.decode("utf-8", "replace")',
     "False -> True"):
        "git log -1 --grep of HEAD exits 0 with or without a match; it fails only on an unborn HEAD, and "
        "stale_claims asks only for a [~] task of a plan HEAD has committed",
    ("memento_core/fleet/stale.py", "if sha and upstream:", "and -> or"):
        "reached only after a lost push: upstream is integrate()'s HEAD, never None once the plan has a [~] "
        "task, so the two differ only when git could not make the take-over commit (sha None) and its push "
        "then lost a race as well, where the mutant's _move_back(None) raises; no test here makes git's "
        "commit fail between a fetch and a lost push",
    ("memento_core/fleet/docs.py", "atomic_write_bytes(ctx.root / path, data, sync=False)", "False -> True"):
        "whether the resolved document is fsynced before git stages it: the same bytes are written either "
        "way (a rebase a crash interrupts is aborted by the next tick, so no sync is needed)",
    ("memento_core/fleet/sync.py", "if pending and local != upstream:", "and -> or"):
        "save_pending writes what the Fleet holds, and every change to its claims has saved it already: "
        "with no pending claims it writes the file as it is; pending claims are only read with none held, "
        "and then (a result or a release commit each) HEAD is never the remote's",
    ("memento_core/fleet/claims.py", "@dataclass(frozen=True)", "True -> False"):
        "a Claim is made once by _make_claim and only read (.tasks, .made, .beat): nothing assigns to its "
        "fields and none is hashed",
    ("memento_core/fleet/claims.py", 'return f"pid {os.getpid()} nonce {os.urandom(6).hex()}"', "6 -> 5"):
        "the length of a claim's random nonce: 5 bytes as 6 make two hosts' commits differ",
    ("memento_core/fleet/claims.py", 'return f"pid {os.getpid()} nonce {os.urandom(6).hex()}"', "6 -> 7"):
        "the length of a claim's random nonce: 7 bytes as 6 make two hosts' commits differ",
    ("memento_core/fleet/publish.py",
     "def publish(ctx: TickContext, result: TaskResult, *, chain: bool = False, room: int = 1) -> TaskResult:",
     "1 -> 0"):
        "the room a chained claim gets by default: batch._batch claims one task for any room under 2",
    ("memento_core/fleet/publish.py",
     'if not f.lost and not adopt(f, seen.get(task_id, Beat("", "", 0)).sha, task_id):', "0 -> 1"):
        "the time of the stand-in Beat of a claim ref gone: only its sha ('') is read",
    ("memento_core/fleet/publish.py", "return False", "return None"):
        Each(2, "_hold_chained's answer (both its False) is asked for its truth only (integrate._arrive: "
             "`plan=not held`): None is False"),
    ("memento_core/fleet/publish.py", "return False", "False -> True"):
        Each(2, "_hold_chained with no claim to hold (or one HEAD could not take), after a landed push that "
             "replayed (elsewhere its answer is not read): True leaves the plan out of "
             "the documents' commit after the replay, and the plan in the work tree is then HEAD's (_move_head "
             "has just written the replayed commit's files), so that commit is the same"),
    ("memento_core/fleet/publish.py", "if verdict.kind != TASK or verdict.task is None:", "or -> and"):
        "scheduler.pick names a task in its TASK verdicts only (and always there): a verdict of another kind "
        "has no task, so `and` refuses exactly what `or` does",
    ("memento_core/fleet/publish.py",
     'publish(ctx, TaskResult(task_id, False, "released: the tick stopped before its attempt"))', "False -> True"):
        "release_chained reads nothing of the result publish hands back, and publish reads its `passed` only "
        "to chain, which a release never asks for (chain=False)",
    ("memento_core/fleet/batch.py", "if not f.contended or room < 2 or phase is None or not phase.parallel:",
     "2 -> 1"):
        "a room of 1 let through: size is then min(BATCH, 1, max(1, ...)) = 1 and sample(others, 0) is [] "
        "(no draw), so the claim is [task] as before; the held_tasks call on the way repeats _spread's, "
        "made just before with the same ctx, plan and rev (its history read and its log lines once a tick)",
    ("memento_core/fleet/pending.py", 'nobody = Beat("", "", 0)', "0 -> 1"):
        "the time of the stand-in Beat of a pending claim whose ref is gone: only its sha and host are read",
    ("memento_core/fleet/pending.py",
     'patch = run_git(ctx.root, ["format-patch", "--stdout", f"{upstream}..{local}"], check=False).stdout',
     "False -> True"):
        "format-patch of upstream..HEAD, both commits here (the remote-tracking branch just fetched and a "
        "HEAD that differs from it), exits 0; it fails only on a name git cannot read",
    ("memento_core/fleet/remote.py", 'check=False).stdout.decode("utf-8", "replace")', "False -> True"):
        "git for-each-ref with patterns (the remote-tracking branch, refs/memento/seen/) exits 0 whether "
        "they match or not; it fails only outside a repository",
    ("memento_core/fleet/remote.py", 'host = parts[3].rsplit(" on ", 1)[-1] if " on " in parts[3] else "?"',
     "1 -> 2"):
        "the last piece of an rsplit is the same for any maxsplit of 1 or more",
    ("memento_core/fleet/integrate.py",
     'atomic_write_bytes(journal, json.dumps({"from": local, "to": tip}).encode(), sync=False)', "False -> True"):
        "whether the replay's journal is fsynced: the same bytes are written either way, and it guards against a "
        "killed process (whose writes the kernel keeps), not a power loss",
    ("memento_core/fleet/integrate.py", "journal.unlink(missing_ok=True)", "True -> False"):
        Each(3, "the journal is there at each unlink: _move_head's is written on the line before its try, and "
             "_finish_move's two follow a read that found it (read, or failing as a folder or unreadable file, "
             "not as a missing one); missing_ok changes only a FileNotFoundError, and the tick's lock keeps any "
             "other process from removing it in between"),
    ("memento_core/fleet/integrate.py", "return False", "return None"):
        Each(3, "_move_head's two and _is_ancestor's: every caller asks for their truth only (`if not "
             "_move_head(...)`, `replayed is not None and _move_head(...)`, pending's `local == upstream or "
             "_is_ancestor(...)`): None is False"),
    ("memento_core/fleet/integrate.py", "REBASE_ROUNDS = 1000", "1000 -> 1001"):
        "the rounds a git rebase may take (a conflicted commit each) before it is given up, a bound the test "
        "sets to 1 and 2 around two conflicted commits: only a rebase of a thousand commits of this host's, "
        "each stopping on a conflict in Memento's documents, tells 1001 from 1000 (a minute of git per run)",
    ("memento_core/fleet/integrate.py", "REBASE_ROUNDS = 1000", "1000 -> 999"):
        "the rounds a git rebase may take (a conflicted commit each) before it is given up, a bound the test "
        "sets to 1 and 2 around two conflicted commits: only a rebase of 1000 commits of this host's, "
        "each stopping on a conflict in Memento's documents, tells 999 from 1000 (a minute of git per run)",
    ("memento_core/fleet/integrate.py",
     'out = run_git(ctx.root, ["log", "--format=%H%x09%s", f"{upstream}..{tip}"], check=False).stdout.decode()',
     "False -> True"):
        "git log A..B exits 0 for two commits the repository has: every caller passes the remote's branch as "
        "fetched and HEAD (or the commit HEAD was, in the same call)",
    ("memento_core/fleet/integrate.py",
     'where = run_git(ctx.root, ["rev-parse", "--git-path", name], check=False).stdout.decode().strip()',
     "False -> True"):
        "git rev-parse --git-path NAME exits 0 in any repository: it prints the path whether or not it exists",
    ("memento_core/tick/limits.py",
     "full = [w for w in spec.windows(text) if w.percent >= at and w.resets_at is not None and w.resets_at > now]",
     "> -> >="):
        "differs only when a window's reset (whole seconds from the CLI) equals datetime.now() to the "
        "microsecond, and then only by a pause that is over already (_window_paused asks `> now`): no test can "
        "time that without a clock of its own",
}

_FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
         ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_SYMBOL = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_SWAP_NAMES = {"startswith": "endswith", "endswith": "startswith", "any": "all", "all": "any"}


@dataclass(frozen=True)
class Mutant:
    """One mutation of one node: where, what, and the module's text with it applied."""

    module: str
    line: int
    col: int
    what: str
    was: str
    now: str
    text: str

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line}:{self.col}:{self.what}"

    @property
    def equivalent(self) -> str:
        """Why no test can kill it ('' = one can): EQUIVALENT, looked up after sampling, so that
        naming one changes no sample."""
        entry = EQUIVALENT.get((self.module, self.was, self.what), "")
        return entry.why if isinstance(entry, Each) else entry


@dataclass
class Result:
    mutant: Mutant
    verdict: str  # killed | survived | timeout | equivalent (not run)
    seconds: float
    said: str = ""


# ------------------------------------------------------------------- making mutants


def _skipped_lines(tree: ast.Module, lines: list[str]) -> set[int]:
    """Docstrings, ``if TYPE_CHECKING:`` blocks and lines marked ``pragma: no mutate``."""
    skip = {i + 1 for i, text in enumerate(lines) if NO_MUTATE in text}
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            skip.update(range(body[0].lineno, body[0].end_lineno + 1))
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(range(node.lineno, node.end_lineno + 1))
    return skip


def _annotations(tree: ast.Module) -> set[int]:
    """ids of nodes inside annotations (an int in ``tuple[int, ...]`` is no behaviour)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        for ann in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if ann is not None:
                inside.update(id(n) for n in ast.walk(ann))
    return inside


def _replacements(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, ast.AST]]:
    """(what, the node that replaces ``node``) for every mutation of this one node."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _FLIP[type(op)]
            ops = [*node.ops]
            ops[i] = new()
            yield (f"{_SYMBOL[type(op)]} -> {_SYMBOL[new]}",
                   ast.Compare(left=node.left, ops=ops, comparators=node.comparators))
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield ("and -> or" if isinstance(node.op, ast.And) else "or -> and", ast.BoolOp(op=other, values=node.values))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not removed", node.operand
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"{node.value} -> {not node.value}", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        if not (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)):
            yield f"{node.value} -> {node.value + 1}", ast.Constant(node.value + 1)
            if node.value > 0:
                yield f"{node.value} -> {node.value - 1}", ast.Constant(node.value - 1)
    elif isinstance(node, ast.Return) and node.value is not None \
            and not (isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return None", ast.Return(value=ast.Constant(None))
    elif isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
        yield "call deleted", ast.Pass()
    elif isinstance(node, (ast.Raise, ast.Break, ast.Continue, ast.AugAssign)):
        yield f"{type(node).__name__.lower()} deleted", ast.Pass()
    elif isinstance(node, ast.Attribute) and node.attr in _SWAP_NAMES and isinstance(parent, ast.Call) \
            and parent.func is node:
        yield f".{node.attr} -> .{_SWAP_NAMES[node.attr]}", ast.Attribute(node.value, _SWAP_NAMES[node.attr], node.ctx)
    elif isinstance(node, ast.Name) and node.id in ("any", "all") and isinstance(parent, ast.Call) \
            and parent.func is node:
        yield f"{node.id} -> {_SWAP_NAMES[node.id]}", ast.Name(_SWAP_NAMES[node.id], node.ctx)


def _splice(lines: list[str], node: ast.AST, new: str) -> str:
    """The module's text with ``node``'s span replaced by ``new`` (columns are utf-8 offsets)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    head = lines[first].encode()[:node.col_offset].decode()
    tail = lines[last].encode()[node.end_col_offset:].decode()
    return "".join([*lines[:first], head + new + tail, *lines[last + 1:]])


def mutants_of(module: str, root: Path = REPO) -> list[Mutant]:
    """Every mutant of ``module`` (a path under ``root``), in file order (see ``compiles``)."""
    source = (root / module).read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    skip = _skipped_lines(tree, lines)
    annotated = _annotations(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: dict[str, Mutant] = {}
    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or node.lineno in skip or id(node) in annotated:
            continue
        parent = parents.get(id(node))
        if isinstance(node, ast.Constant) and isinstance(parent, ast.JoinedStr | ast.FormattedValue):
            continue
        for what, replacement in _replacements(node, parent):
            new = ast.unparse(replacement)
            if isinstance(replacement, ast.expr) and not isinstance(replacement, ast.Name | ast.Constant):
                new = f"({new})"
            text = _splice(lines, node, new)
            was = lines[node.lineno - 1].strip()
            now = text.splitlines()[node.lineno - 1].strip()
            m = Mutant(module, node.lineno, node.col_offset, what, was, now, text)
            found.setdefault(m.key, m)
    return sorted(found.values(), key=lambda m: (m.line, m.col, m.what))


def equivalent_problems(module: str, mutants: list[Mutant]) -> tuple[list[str], list[str]]:
    """(errors, stale) of the module's EQUIVALENT entries against every mutant of its code today:
    an entry matching more mutants than it says (a line written again elsewhere would be taken as
    equivalent unseen) or fewer but some; an entry matching none (its line changed or went)."""
    errors, stale = [], []
    for key, entry in EQUIVALENT.items():
        if key[0] != module:
            continue
        lines = [m.line for m in mutants if (m.module, m.was, m.what) == key]
        meant = entry.count if isinstance(entry, Each) else 1
        if not lines:
            stale.append(f"{module}: no mutant is {key[2]!r} of {key[1]!r} today (an EQUIVALENT entry to remove)")
        elif len(lines) != meant:
            errors.append(f"{module}: the EQUIVALENT entry for {key[2]!r} of {key[1]!r} is meant for {meant} "
                          f"mutant{'s' if meant > 1 else ''} and matches {len(lines)} (lines "
                          f"{', '.join(map(str, lines))}): give Each(count, why) if the reason holds for each, "
                          "or mark the one line `pragma: no mutate` with its reason")
    return errors, stale


def compiles(mutant: Mutant) -> bool:
    """Whether the mutated module is Python at all (``return None`` in a generator is, say)."""
    try:
        compile(mutant.text, mutant.module, "exec")
    except SyntaxError:
        return False
    return True


def sample(mutants: list[Mutant], n: int | None, seed: int, module: str) -> list[Mutant]:
    """``n`` of the module's mutants that compile, the same ones for the same seed and the same code."""
    order = list(range(len(mutants)))
    if n is not None and n < len(mutants):
        random.Random(f"{seed}:{module}").shuffle(order)
    picked: list[int] = []
    for i in order:
        if n is not None and len(picked) >= n:
            break
        if compiles(mutants[i]):
            picked.append(i)
    return [mutants[i] for i in sorted(picked)]


# ------------------------------------------------------------------- running them


def _copy(root: Path, parent: Path) -> Path:
    """A copy of the repository to mutate (no .git, no caches): made beside it, never under /tmp."""
    dest = Path(tempfile.mkdtemp(prefix=".mutants-", dir=parent))
    shutil.copytree(root, dest / "repo", symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", ".ruff_cache",
                                                  ".mypy_cache", "*.egg-info", ".hypothesis"))
    return dest / "repo"


def _env(copy: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    env.setdefault("GIT_AUTHOR_NAME", "Mutants")
    env.setdefault("GIT_AUTHOR_EMAIL", "mutants@example.invalid")
    env.setdefault("GIT_COMMITTER_NAME", env["GIT_AUTHOR_NAME"])
    env.setdefault("GIT_COMMITTER_EMAIL", env["GIT_AUTHOR_EMAIL"])
    return env


_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()


def run_tests(copy: Path, tests: tuple[str, ...], cap: float | None, *, deselect: tuple[str, ...] = (),
              first_only: bool = True) -> tuple[str, float, list[str]]:
    """('passed' | 'failed' | 'timeout', seconds, the failing tests) of the tests in ``copy``."""
    argv = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            *(["-x"] if first_only else []), *[f"--deselect={t}" for t in deselect],
            *[t for t in tests if (copy / t.split("::")[0]).exists()]]
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=copy, env=_env(copy), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    with _RUNNING_LOCK:
        _RUNNING.add(proc)
    try:
        out, _ = proc.communicate(timeout=cap)
        verdict = "passed" if proc.returncode == 0 else "failed"
    except subprocess.TimeoutExpired:
        out, verdict = "", "timeout"
    finally:
        _kill(proc)
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    failed = [line.split(" ", 1)[1].split(" - ", 1)[0] for line in out.splitlines()
              if line.startswith(("FAILED ", "ERROR "))]
    return verdict, time.monotonic() - start, failed


def _kill(proc: subprocess.Popen) -> None:
    """The test run's whole process group (it starts ticks, agents and sandboxes of its own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def run_mutant(copy: Path, mutant: Mutant, cap: float, deselect: tuple[str, ...]) -> Result:
    path = copy / mutant.module
    original = path.read_text(encoding="utf-8")
    path.write_text(mutant.text, encoding="utf-8")
    try:
        verdict, seconds, failed = run_tests(copy, TESTS[mutant.module], cap, deselect=deselect)
    finally:
        path.write_text(original, encoding="utf-8")
    return Result(mutant, {"passed": "survived", "failed": "killed"}.get(verdict, verdict), seconds,
                  failed[0] if failed else "")


# ------------------------------------------------------------------- report


def table(results: dict[str, list[Result]]) -> tuple[list[str], bool]:
    """The per-module table and whether the budget held; equivalent mutants are not counted."""
    rows = [f"{'module':<36}{'mutants':>8}{'equiv.':>8}{'killed':>8}{'timeout':>8}{'survived':>9}{'killed %':>10}"]
    ok, total, dead, same = True, 0, 0, 0
    for module, found in results.items():
        count = {v: sum(r.verdict == v for r in found) for v in ("equivalent", "killed", "timeout", "survived")}
        judged = len(found) - count["equivalent"]
        share = (count["killed"] + count["timeout"]) / judged if judged else 1.0
        low = share < BUDGET_MODULE
        ok = ok and not low
        total, dead, same = total + judged, dead + count["killed"] + count["timeout"], same + count["equivalent"]
        rows.append(f"{module:<36}{len(found):>8}{count['equivalent']:>8}{count['killed']:>8}{count['timeout']:>8}"
                    f"{count['survived']:>9}{share:>9.0%}{'  under 70 %' if low else ''}")
    share = dead / total if total else 1.0
    ok = ok and share >= BUDGET_OVERALL
    rows.append(f"{'all':<36}{total + same:>8}{same:>8}{'':>8}{'':>8}{total - dead:>9}{share:>9.0%}"
                f"{'' if share >= BUDGET_OVERALL else '  under 85 %'}")
    return rows, ok


def _all_of(futures: Iterable[Future]) -> None:
    """Wait for every one, waking often: a bare result() would hold Ctrl-C until a mutant's end."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.5)
        for future in done:
            future.result()


def _interrupt(_signum, _frame) -> None:
    raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE[=TEST,...]",
                        help=f"paths under the repository (default: {len(MODULES)} modules); =TEST,... "
                             "names the tests of a module the table does not know")
    parser.add_argument("--sample", type=int, help="at most N mutants per module, chosen by --seed")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy")
    parser.add_argument("--cap", type=float, default=4.0,
                        help="a mutant's wall cap as a multiple of its tests' unmutated time (at least +60 s)")
    parser.add_argument("--at", action="append", default=[], metavar="FILE:LINE",
                        help="only the mutants of this line (repeatable; after --sample): to check a survivor again")
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    parser.add_argument("--json", type=Path, help="write every result here")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this one)")
    parser.add_argument("--from-json", type=Path, nargs="+", metavar="FILE",
                        help="run nothing: the table of earlier runs' --json files (EQUIVALENT applied again)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.from_json:
        return _report(_load(args.from_json), [], [])
    for given in args.modules:
        module, _, tests = given.partition("=")
        if tests:
            TESTS[module] = tuple(tests.split(","))
    modules = [m.partition("=")[0] for m in args.modules]
    modules = modules or list(dict.fromkeys([a.rsplit(":", 1)[0] for a in args.at])) or list(MODULES)
    unknown = [m for m in modules if m not in TESTS]
    if unknown:
        parser.error(f"no test files known for {', '.join(unknown)} (add them to TESTS)")
    every = {m: mutants_of(m, root) for m in modules}
    errors: list[str] = []
    for module, found in every.items():
        wrong, stale = equivalent_problems(module, found)
        errors += wrong
        for line in stale:
            print(f"warning: {line}", file=sys.stderr)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 2
    chosen = {m: sample(found, args.sample, args.seed, m) for m, found in every.items()}
    if args.at:
        chosen = {m: [x for x in found if f"{x.module}:{x.line}" in args.at] for m, found in chosen.items()}
        chosen = {m: found for m, found in chosen.items() if found}
    if args.list:
        for found in chosen.values():
            for m in found:
                print(f"{m.module}:{m.line}: {m.what}: {m.now}")
        return 0
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  sample: {args.sample or 'all'}  "
          f"seed: {args.seed}  jobs: {args.jobs}", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell's background job starts with it ignored
    copies = [_copy(root, root.parent) for _ in range(max(1, args.jobs))]
    free = list(copies)
    free_lock = threading.Lock()
    results: dict[str, list[Result]] = {m: [] for m in chosen}
    plans: dict[str, tuple[float, tuple[str, ...]]] = {}  # module: (its cap, the tests left out)
    broken: list[str] = []
    left_out: list[str] = []

    stopping = threading.Event()

    def in_a_copy(job: Callable[[Path], None]) -> Callable[[], None]:
        def run() -> None:
            if stopping.is_set():
                return
            with free_lock:
                copy = free.pop()
            try:
                job(copy)
            finally:
                with free_lock:
                    free.append(copy)
        return run

    def baseline(module: str, copy: Path) -> None:
        verdict, seconds, failed = run_tests(copy, TESTS[module], None, first_only=False)
        if stopping.is_set():
            return
        if verdict != "passed" and not failed:
            print(f"{module}: its tests cannot run unmutated; skipped", flush=True)
            broken.append(module)
            return
        for test in failed:  # this machine's, not a mutant's: left out, and said
            print(f"{module}: fails unmutated, left out: {test}", flush=True)
            left_out.append(test)
        plans[module] = (max(seconds * args.cap, seconds + 60), tuple(failed))
        print(f"{module}: {len(chosen[module])} mutants, tests {seconds:.0f} s unmutated, "
              f"cap {plans[module][0]:.0f} s", flush=True)

    def one(mutant: Mutant, copy: Path) -> None:
        if mutant.equivalent:
            results[mutant.module].append(Result(mutant, "equivalent", 0.0, mutant.equivalent))
            return
        cap, deselect = plans[mutant.module]
        r = run_mutant(copy, mutant, cap, deselect)
        if stopping.is_set():
            return
        results[mutant.module].append(r)
        print(f"  {r.verdict:<8} {r.seconds:5.0f} s  {mutant.module}:{mutant.line}  {mutant.what}  "
              f"{r.said[:100]}", flush=True)

    pool = ThreadPoolExecutor(max_workers=len(copies))
    try:
        # Every module's tests unmutated first (a failing one is this machine's, left out), then
        # every mutant of every module in one queue: no slot idles at the end of a module.
        _all_of(pool.submit(in_a_copy(lambda c, m=m: baseline(m, c))) for m in chosen)
        queue = [m for module, found in chosen.items() if module in plans for m in found]
        _all_of(pool.submit(in_a_copy(lambda c, m=m: one(m, c))) for m in queue)
    except KeyboardInterrupt:
        print("interrupted: the table covers the mutants that finished", file=sys.stderr)
        broken.append("(interrupted)")
    finally:
        stopping.set()  # Ctrl-C: the mutants not started are dropped, the running ones killed
        pool.shutdown(wait=False, cancel_futures=True)
        with _RUNNING_LOCK:
            running = list(_RUNNING)
        for proc in running:
            _kill(proc)
        pool.shutdown(wait=True)
        for copy in copies:
            shutil.rmtree(copy.parent, ignore_errors=True)
    results = {m: found for m, found in results.items() if m in plans}
    if args.json:
        args.json.write_text(json.dumps([{**{k: v for k, v in asdict(r.mutant).items() if k != "text"},
                                          "verdict": r.verdict, "seconds": round(r.seconds, 1), "said": r.said}
                                         for found in results.values() for r in found], indent=1))
    return _report(results, broken, left_out)


def _load(files: list[Path]) -> dict[str, list[Result]]:
    """Results saved by --json, the later file winning for a module run twice."""
    results: dict[str, list[Result]] = {}
    for path in files:
        runs: dict[str, list[Result]] = {}
        for r in json.loads(path.read_text()):
            m = Mutant(r["module"], r["line"], r["col"], r["what"], r["was"], r["now"], "")
            verdict = "equivalent" if m.equivalent else r["verdict"]
            runs.setdefault(m.module, []).append(Result(m, verdict, r["seconds"], m.equivalent or r["said"]))
        results.update(runs)
    return results


def _report(results: dict[str, list[Result]], broken: list[str], left_out: list[str]) -> int:
    """The table, the survivors and what was left out; 0 when the budget held."""
    rows, ok = table(results)
    print()
    print("\n".join(rows))
    survivors = sorted((r for found in results.values() for r in found if r.verdict == "survived"),
                       key=lambda r: (r.mutant.module, r.mutant.line, r.mutant.col))
    if survivors:
        print("\nsurvivors (each a missing test or dead code):")
        for r in survivors:
            m = r.mutant
            print(f"  {m.module}:{m.line}: {m.what}\n      was: {m.was}\n      now: {m.now}")
    if left_out:
        print("\nleft out, failing before any mutation (this machine's): " + ", ".join(left_out))
    return 0 if ok and not broken else 1


if __name__ == "__main__":
    raise SystemExit(main())
