"""Scheduling the tick with cron or systemd (SPEC §7; the command is `memento cron install | remove | show`).

One crontab entry per project, found again by its comment tag
``memento: <absolute project path>``; entries that are not ours are never
touched. The entry runs the absolute Python of this installation on the
absolute project path, with the PATH of the person who installed it (cron's
own PATH is minimal, and the agent CLIs live in ~/.local/bin and the like),
and appends everything to ``logs/cron.log``. ``%`` (a newline to cron) is
escaped.

The entry starts in the project's folder, which the agent writes, so Python runs with ``-P``
(:data:`TICK_ARGS`): ``python -m`` would put that folder first on its path, and a
``memento_core/`` (or a ``json.py``) the agent left there would be imported instead of
Memento's, and run as the person, unconfined. `memento cron show` warns of an entry written
before (:func:`unsafe_path`); `memento cron install` rewrites it.

python-crontab reads and writes the crontab; ``tabfile`` (or the
MEMENTO_CRONTAB_FILE environment variable, for tests) points it at a file
instead of the user's crontab. ``--systemd`` writes a timer + service pair
for people who prefer systemd user timers.

The dashboard calls :func:`installed` and :func:`update_interval_if_installed`.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .durations import format_duration, parse_duration
from .errors import MementoError

TAG_PREFIX = "memento: "
# How every process Memento starts of its own tick runs it: -P (Python 3.11's safe path) keeps
# the current folder, the project's, off the import path (`python -m` puts it first).
TICK_ARGS = ("-P", "-m", "memento_core.tick")
CRONTAB_FILE_ENV = "MEMENTO_CRONTAB_FILE"
MISSING_CRONTAB = (
    "the `crontab` command is not installed, so Memento cannot schedule ticks with cron; "
    "install Debian's `cron` package (sudo apt-get install cron) and start it "
    "(sudo service cron start), or use `memento cron install --systemd`"
)
SYSTEMD_USER_DIR = Path("~/.config/systemd/user")


# --------------------------------------------------------------------------- schedule


@dataclass(frozen=True)
class Schedule:
    """A cron schedule for an interval: its five fields and the interval it really gives."""

    fields: str
    seconds: int
    exact: bool
    warning: str = ""

    @property
    def minute(self) -> str:
        return self.fields.split()[0]

    @property
    def hour(self) -> str:
        return self.fields.split()[1]


def _candidates() -> list[tuple[int, str]]:
    """Intervals cron repeats evenly, with their fields: divisors of an hour, of a day; a day; a week."""
    out = [(m * 60, "* * * * *" if m == 1 else f"*/{m} * * * *")
           for m in (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)]
    out += [(h * 3600, "0 * * * *" if h == 1 else f"0 */{h} * * *") for h in (1, 2, 3, 4, 6, 8, 12)]
    out += [(86400, "0 0 * * *"), (7 * 86400, "0 0 * * 0")]
    return out


def schedule_for(every: str | float) -> Schedule:
    """The cron schedule for ``every`` (``5min``, ``1h``, seconds…).

    Cron repeats evenly only at divisors of an hour or a day (``*/7`` restarts
    at every full hour), and never more often than once a minute. Any other
    interval gets the nearest one that works, with a warning saying so.
    """
    try:
        seconds = parse_duration(every)
    except ValueError as exc:
        raise MementoError(f"--every: {exc}") from None
    if seconds <= 0:
        raise MementoError(f"--every: must be longer than zero, got {every!r}")
    best = min(_candidates(), key=lambda c: (abs(math.log(c[0] / seconds)), c[0]))
    exact = math.isclose(best[0], seconds)
    warning = ""
    if not exact:
        why = ("cron runs at most once a minute" if seconds < 60
               else "cron repeats evenly only at intervals that divide an hour or a day")
        warning = (f"{why}: every {format_duration(seconds)} becomes every "
                   f"{format_duration(best[0])} ({best[1]})")
    return Schedule(best[1], best[0], exact, warning)


# --------------------------------------------------------------------------- the entry


def tag_for(root: Path | str) -> str:
    """The comment that marks this project's entry."""
    return TAG_PREFIX + str(Path(root).resolve())


def _checked_root(root: Path | str) -> Path:
    root = Path(root).resolve()
    if "\n" in str(root) or "\r" in str(root):
        raise MementoError(f"{root!r}: a crontab entry cannot hold a path with a line break")
    return root


def agent_path(env_path: str | None = None) -> str:
    """The PATH the entry runs with: this one (absolute folders, once each), then the system's."""
    seen: list[str] = []
    for part in (env_path if env_path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if part and os.path.isabs(part) and part not in seen:
            seen.append(part)
    for part in ("/usr/local/bin", "/usr/bin", "/bin"):
        if part not in seen:
            seen.append(part)
    return os.pathsep.join(seen)


def tick_command(root: Path | str, *, python: str | None = None, path: str | None = None) -> str:
    """The shell command of the entry, ``%`` already escaped for cron."""
    root = _checked_root(root)
    python = python or sys.executable
    q = shlex.quote
    log = root / "logs" / "cron.log"
    command = (
        f"cd {q(str(root))} && mkdir -p logs && PATH={q(agent_path(path))} "
        f"{q(python)} {' '.join(TICK_ARGS)} --project {q(str(root))} >> {q(str(log))} 2>&1"
    )
    return command.replace("%", r"\%")


_PYTHON = re.compile(r"(python|pypy)[\d.]*")
_WITH_VALUE = frozenset("WXcm")  # Python's one-letter options that take a value (``-Wignore``, ``-m mod``)
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "(", ")"})


def unsafe_path(command: str) -> bool:
    """Whether an entry's command runs a module of Memento's (``python -m memento_core.tick``)
    with the folder it starts in first on Python's import path: no ``-P`` nor ``-I`` (which
    implies it) among the interpreter's options, no ``PYTHONSAFEPATH`` set before it, as
    entries were written before :data:`TICK_ARGS`. An unreadable command is not judged."""
    lexer = shlex.shlex(command.replace("\\%", "%"), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True  # words as the shell splits them; `;`, `&&`, `|` words of their own
    try:
        words = list(lexer)
    except ValueError:
        return False
    safe_env = False
    for k, word in enumerate(words):
        if word in _SEPARATORS:
            safe_env = False
        elif word.startswith("PYTHONSAFEPATH="):
            safe_env = word != "PYTHONSAFEPATH="
        elif _PYTHON.fullmatch(os.path.basename(word)):
            module, flags = _module_run(words[k + 1:])
            if module.split(".")[0] in ("memento_core", "memento_tui") and not (safe_env or flags & {"P", "I"}):
                return True
    return False


def _module_run(words: list[str]) -> tuple[str, set[str]]:
    """The module ``-m`` runs ('' for none) and the one-letter flags before it, read as Python
    reads its options (``-BP``, ``-W ignore``, ``-Wignore``, ``-mmod``, ``-X utf8``)."""
    flags: set[str] = set()
    i = 0
    while i < len(words):
        word = words[i]
        if word in _SEPARATORS or not word.startswith("-") or word in ("-", "--"):
            return "", flags
        if word.startswith("--"):
            if word != "--check-hash-based-pycs":
                return "", flags  # --version, --help…: Python says it and exits
            i += 2
            continue
        for j, letter in enumerate(word[1:], 1):
            if letter in _WITH_VALUE:
                value = word[j + 1:]
                if not value:
                    i += 1
                    value = words[i] if i < len(words) else ""
                if letter == "m":
                    return value, flags
                if letter == "c":
                    return "", flags
                break
            flags.add(letter)
        i += 1
    return "", flags


@dataclass(frozen=True)
class Entry:
    """One Memento entry found in a crontab."""

    root: str
    schedule: str
    command: str
    enabled: bool
    line: str


@dataclass(frozen=True)
class InstallResult:
    """What `install` did."""

    entry: Entry
    schedule: Schedule
    replaced: int


def _crontab_binary() -> str | None:
    return shutil.which("crontab", path=os.environ.get("PATH") or os.defpath)


def cron_available(tabfile: Path | str | None = None) -> bool:
    """Whether there is a crontab to read (a tab file, or the `crontab` command)."""
    return _tabfile(tabfile) is not None or _crontab_binary() is not None


CRON_DAEMONS = frozenset({"cron", "crond", "cronie", "busybox-crond", "fcron", "dcron"})

NO_CRON_DAEMON = ("no cron daemon is running on this machine, so this entry will never tick: "
                  "start it (sudo service cron start, or `cron` as root in a container) "
                  "or use `memento cron install --systemd`")
PROC_ENV = "MEMENTO_PROC_DIR"  # where daemon_running looks (tests point it at a fake /proc)


def daemon_running(proc: Path | str | None = None) -> bool:
    """Whether a cron daemon process is alive (Linux /proc); without one an entry never runs.

    Where /proc cannot be read (not Linux) the answer is True: unknown is not "missing".
    """
    proc = Path(proc or os.environ.get(PROC_ENV) or "/proc")
    try:
        pids = [e for e in proc.iterdir() if e.name.isdigit()]
    except OSError:
        return True
    for entry in pids:
        try:
            if (entry / "comm").read_text(encoding="utf-8", errors="replace").strip() in CRON_DAEMONS:
                return True
        except OSError:
            continue
    return False


def _tabfile(tabfile: Path | str | None) -> Path | None:
    if tabfile is not None:
        return Path(tabfile)
    env = os.environ.get(CRONTAB_FILE_ENV)
    return Path(env) if env else None


def _lock_path(tabfile: Path | None) -> Path:
    """One lock per crontab, so the CLI and the dashboard never interleave read-modify-write."""
    import tempfile

    if tabfile is not None:
        return tabfile.parent / f".{tabfile.name}.lock"
    return Path(tempfile.gettempdir()) / f"memento-crontab-{os.getuid()}.lock"


class _Edit:
    """The crontab being read or edited; ``changed()`` marks it for writing back."""

    def __init__(self, tab):
        self.tab = tab
        self.dirty = False

    def changed(self) -> None:
        self.dirty = True


@contextmanager
def _crontab(tabfile: Path | str | None = None) -> Iterator[_Edit]:
    """The crontab, locked; written back on a clean exit only if the caller changed it."""
    from crontab import CronTab  # only cron commands pay for the import

    from .locks import LockBusy, file_lock

    path = _tabfile(tabfile)
    if path is None and _crontab_binary() is None:
        raise MementoError(MISSING_CRONTAB)
    try:
        with file_lock(_lock_path(path)):
            try:
                if path is not None:
                    tab = CronTab(tabfile=str(path)) if path.exists() else CronTab(tab="")
                else:
                    tab = CronTab(user=True)
            except OSError as exc:
                raise MementoError(f"cannot read the crontab: {exc}") from None
            edit = _Edit(tab)
            yield edit
            if edit.dirty:
                try:
                    tab.write(str(path)) if path is not None else tab.write()
                except OSError as exc:
                    raise MementoError(f"cannot write the crontab: {exc}") from None
    except LockBusy:
        raise MementoError("another Memento process is editing the crontab; try again") from None


def _ours(tab, root: Path) -> list:
    tag = tag_for(root)
    return [job for job in tab if job.comment == tag]


def _entry(job) -> Entry:
    return Entry(
        root=job.comment[len(TAG_PREFIX):],
        schedule=str(job.slices),
        command=job.command,
        enabled=job.is_enabled(),
        line=job.render(),
    )


def install(root: Path | str, every: str | float = "5min", *, tabfile: Path | str | None = None,
            python: str | None = None, path: str | None = None) -> InstallResult:
    """Write (or rewrite) this project's one entry; other entries are left exactly as they were."""
    root = _checked_root(root)
    schedule = schedule_for(every)
    command = tick_command(root, python=python, path=path)
    with _crontab(tabfile) as edit:
        tab = edit.tab
        jobs = _ours(tab, root)
        if jobs:
            job = jobs[0]
            for other in jobs[1:]:
                tab.remove(other)
            job.set_command(command)
        else:
            job = tab.new(command=command, comment=tag_for(root))
        job.setall(schedule.fields)
        job.enable()
        edit.changed()
        entry = _entry(job)
    return InstallResult(entry, schedule, len(jobs))


def remove(root: Path | str, *, tabfile: Path | str | None = None) -> int:
    """Remove this project's entries; returns how many there were."""
    root = _checked_root(root)
    with _crontab(tabfile) as edit:
        jobs = _ours(edit.tab, root)
        for job in jobs:
            edit.tab.remove(job)
        if jobs:
            edit.changed()
    return len(jobs)


def entries(*, tabfile: Path | str | None = None) -> list[Entry]:
    """Every Memento entry in the crontab, whichever project it is for."""
    with _crontab(tabfile) as edit:
        return [_entry(job) for job in edit.tab if job.comment.startswith(TAG_PREFIX)]


def installed(root: Path | str, *, tabfile: Path | str | None = None) -> bool:
    """Whether this project has an entry (False when there is no crontab at all)."""
    if not cron_available(tabfile):
        return False
    root = _checked_root(root)
    text = _crontab_text(tabfile)
    if text is not None and tag_for(root) not in text:
        # python-crontab takes a job's comment from the text of its line (or of the line above):
        # without the tag in the text no entry is this project's. `memento status` and the
        # dashboard ask at every refresh; importing python-crontab (asyncio, logging, platform)
        # is a tenth of what `status --json` costs on 10,000 tasks (SPEC §11).
        return False
    with _crontab(tabfile) as edit:
        return bool(_ours(edit.tab, root))


def _crontab_text(tabfile: Path | str | None) -> str | None:
    """The crontab as python-crontab reads it (a tab file, else `crontab -l`); None when it
    cannot be read here, and python-crontab then answers (or fails) as it always did."""
    import subprocess

    path = _tabfile(tabfile)
    try:
        if path is not None:
            return path.read_text(encoding="utf-8") if path.exists() else ""
        binary = _crontab_binary()
        if binary is None:
            return None
        done = subprocess.run([binary, "-l"], capture_output=True, text=True, timeout=30)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if done.stderr and "no crontab for" not in done.stderr:
        return None
    return done.stdout


def installed_schedule(root: Path | str, *, tabfile: Path | str | None = None) -> str | None:
    """The five schedule fields of this project's entry, or None when there is none."""
    if not cron_available(tabfile):
        return None
    root = _checked_root(root)
    with _crontab(tabfile) as edit:
        jobs = _ours(edit.tab, root)
        return str(jobs[0].slices) if jobs and jobs[0].is_enabled() else None


def next_run_after(fields: str, now: datetime.datetime) -> datetime.datetime | None:
    """When a schedule Memento writes fires next after ``now`` (local time, as cron uses).

    Understands the forms ``schedule_for`` produces (every m minutes, every h hours,
    daily, weekly; and the ``@hourly``-style aliases python-crontab writes back);
    None for anything else, e.g. an entry a person edited by hand.
    """
    fields = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
              "@weekly": "0 0 * * 0"}.get(fields.strip(), fields.strip())
    base = now.replace(second=0, microsecond=0)
    m = re.fullmatch(r"(\*|\*/(\d+)) \* \* \* \*", fields)
    if m:
        step = int(m.group(2) or 1)
        candidate = base + datetime.timedelta(minutes=1)
        while candidate.minute % step:
            candidate += datetime.timedelta(minutes=1)
        return candidate
    m = re.fullmatch(r"0 (\*|\*/(\d+)) \* \* \*", fields)
    if m:
        step = int(m.group(2) or 1)
        candidate = base.replace(minute=0) + datetime.timedelta(hours=1)
        while candidate.hour % step:
            candidate += datetime.timedelta(hours=1)
        return candidate
    if fields == "0 0 * * *":
        return base.replace(hour=0, minute=0) + datetime.timedelta(days=1)
    if fields == "0 0 * * 0":
        midnight = base.replace(hour=0, minute=0) + datetime.timedelta(days=1)
        while midnight.weekday() != 6:  # cron's 0 is Sunday
            midnight += datetime.timedelta(days=1)
        return midnight
    return None


def update_interval_if_installed(root: Path | str, every_text: str, *,
                                 tabfile: Path | str | None = None) -> bool:
    """Reschedule this project's entry to ``every_text`` if it has one; True when it did.

    For the dashboard's interval control: it never creates an entry.
    """
    if not cron_available(tabfile):
        return False
    root = _checked_root(root)
    schedule = schedule_for(every_text)
    with _crontab(tabfile) as edit:
        jobs = _ours(edit.tab, root)
        for job in jobs:
            if str(job.slices) != str(type(job.slices)(schedule.fields)):
                job.setall(schedule.fields)
                edit.changed()
    return bool(jobs)


# --------------------------------------------------------------------------- systemd


def unit_name(root: Path | str) -> str:
    """``memento-tick-<folder>-<hash>``: unique per project, valid as a systemd unit name."""
    root = Path(root).resolve()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-.")[:40] or "project"
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:8]
    return f"memento-tick-{slug}-{digest}"


def _on_calendar(schedule: Schedule) -> str:
    minute, hour = schedule.minute, schedule.hour
    if schedule.fields == "0 0 * * 0":
        return "Sun *-*-* 00:00:00"
    m = "*" if minute == "*" else ("00/" + minute[2:] if minute.startswith("*/") else minute.zfill(2))
    h = "*" if hour == "*" else ("00/" + hour[2:] if hour.startswith("*/") else hour.zfill(2))
    return f"*-*-* {h}:{m}:00"


def _systemd_quote(text: str) -> str:
    """One argument for ExecStart=: quoted when it needs it; ``%`` is a specifier, so doubled."""
    text = text.replace("%", "%%")
    if re.fullmatch(r"[A-Za-z0-9_./:=+,@-]+", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_units(root: Path | str, every: str | float = "5min", *, python: str | None = None,
                  path: str | None = None) -> tuple[str, str, str, Schedule]:
    """(unit name, timer text, service text, schedule) for a systemd user timer."""
    root = _checked_root(root)
    schedule = schedule_for(every)
    name = unit_name(root)
    python = python or sys.executable
    log = str(root / "logs" / "cron.log").replace("%", "%%")
    shown = str(root).replace("%", "%%")
    exec_start = " ".join(_systemd_quote(a) for a in
                          (python, *TICK_ARGS, "--project", str(root)))
    service = (
        "[Unit]\n"
        f"Description=Memento tick for {shown}\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"WorkingDirectory={shown}\n"
        f"Environment={_systemd_quote('PATH=' + agent_path(path))}\n"
        f"ExecStartPre=/bin/mkdir -p {_systemd_quote(str(root / 'logs'))}\n"
        f"ExecStart={exec_start}\n"
        f"StandardOutput=append:{log}\n"
        f"StandardError=append:{log}\n"
    )
    timer = (
        "[Unit]\n"
        f"Description=Memento tick for {shown} every {format_duration(schedule.seconds)}\n\n"
        "[Timer]\n"
        f"OnCalendar={_on_calendar(schedule)}\n"
        "Persistent=true\n"
        "AccuracySec=1s\n"
        f"Unit={name}.service\n\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )
    return name, timer, service, schedule


def unsafe_units(directory: Path | str | None = None) -> list[Path]:
    """Memento's services in ``directory`` (default ~/.config/systemd/user) whose ``ExecStart=``
    runs the tick with the project's folder (their ``WorkingDirectory=``) first on Python's
    import path, as units written before :data:`TICK_ARGS` do (:func:`unsafe_path`); an
    ``Environment=`` that sets ``PYTHONSAFEPATH`` makes one safe. A unit that cannot be read is
    not judged."""
    target = Path(directory) if directory is not None else SYSTEMD_USER_DIR.expanduser()
    found = []
    for path in sorted(target.glob("memento-tick-*.service")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        values = {key: [line.partition("=")[2].replace("%%", "%") for line in lines if line.startswith(key + "=")]
                  for key in ("Environment", "ExecStart")}
        if any(unsafe_path(_systemd_safe_env(values["Environment"]) + _systemd_command(command))
               for command in values["ExecStart"]):
            found.append(path)
    return found


def _systemd_command(value: str) -> str:
    """An ``ExecStart=`` value without systemd's prefixes (``-``, ``@``, ``+``, ``!``, ``:``)."""
    return value.lstrip("-@+!:")


def _systemd_safe_env(values: list[str]) -> str:
    """``PYTHONSAFEPATH=1 `` when one of the unit's ``Environment=`` lines sets it (the
    variable given to every command of the unit), else ''."""
    for value in values:
        try:
            words = shlex.split(value)
        except ValueError:
            continue
        if any(w.startswith("PYTHONSAFEPATH=") and w != "PYTHONSAFEPATH=" for w in words):
            return "PYTHONSAFEPATH=1 "
    return ""


def write_systemd_units(root: Path | str, every: str | float = "5min", *,
                        directory: Path | str | None = None) -> tuple[Path, Path, Schedule]:
    """Write the timer and service to ``directory`` (default ~/.config/systemd/user)."""
    from .locks import atomic_write_text

    name, timer, service, schedule = systemd_units(root, every)
    target = Path(directory) if directory is not None else SYSTEMD_USER_DIR.expanduser()
    target.mkdir(parents=True, exist_ok=True)
    timer_path, service_path = target / f"{name}.timer", target / f"{name}.service"
    atomic_write_text(service_path, service)
    atomic_write_text(timer_path, timer)
    return timer_path, service_path, schedule


def interval_text(seconds: int) -> str:
    """``360`` → ``6min``: the interval cron really runs at, as memento.toml writes it."""
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}min"


# --------------------------------------------------------------------------- GitHub Actions (SPEC §12)

GITHUB_MIN_SECONDS = 300  # GitHub runs scheduled workflows at most every 5 minutes
DISTRIBUTION = "memento-tick"  # this project's name on PyPI (pyproject's [project] name; `memento` is not ours)


def default_requirement(repo_root: Path) -> str:
    """What a runner pip-installs for Memento: the checkout itself (``.``) when the repository
    is Memento's own (its pyproject names :data:`DISTRIBUTION`), else :data:`DISTRIBUTION`."""
    import tomllib

    try:
        name = tomllib.loads((Path(repo_root) / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return DISTRIBUTION
    return "." if name == DISTRIBUTION else DISTRIBUTION


def github_workflow(project: str, every: str | float = "5min", *, subdir: str = "", pip: str = DISTRIBUTION,
                    python: str = "3.11", timeout_minutes: int = 60, pushes_itself: bool = False) -> tuple[str, Schedule]:
    """A GitHub Actions workflow running one tick of the project on a runner, and its schedule.

    On ``schedule`` (the interval as cron fields, at least every 5 minutes) and by hand
    (``workflow_dispatch``); one run at a time per project (a ``concurrency`` group, never
    cancelled: a tick stopped mid-task would be a stale claim); full history checked out,
    Python set up, Memento installed with ``pip``, a git identity, one ``memento tick``,
    then whatever the tick committed pushed back, only after a tick that succeeded (a
    cancelled or failed one may leave a half-rebased HEAD). ``pushes_itself`` (``[workers]
    remote`` set): no push-back step at all, the tick pushes with its claim leases and the
    runner is one host of the fleet, named after the run.
    """
    import json

    schedule = schedule_for(max(parse_duration(every), GITHUB_MIN_SECONDS))
    q = json.dumps  # a JSON string is a YAML double-quoted scalar
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", project).strip("-") or "project"
    where = subdir.strip("/") or "."
    lines = [
        f"# Memento: one tick of {' '.join(project.split())} on a GitHub Actions runner.",
        "# Save as .github/workflows/memento.yml. Generated by `memento cron install --github`.",
        "# The agent's CLI and its key: add an install step and the secret it needs (see docs/agents.md).",
        "name: memento tick",
        '"on":',
        "  schedule:",
        f"    - cron: {q(schedule.fields)}",
        "  workflow_dispatch: {}",
        "concurrency:",
        f"  group: {q('memento-' + slug)}",
        "  cancel-in-progress: false",
        "permissions:",
        "  contents: write",
        "jobs:",
        "  tick:",
        "    runs-on: ubuntu-latest",
        f"    timeout-minutes: {int(timeout_minutes)}",
        "    steps:",
        "      - uses: actions/checkout@v4",
        "        with:",
        "          fetch-depth: 0",
        "      - uses: actions/setup-python@v5",
        "        with:",
        f"          python-version: {q(python)}",
        "      - name: Install Memento",
        f"        run: python -P -m pip install {shlex.quote(pip)}",  # -P: not a pip/ of the checkout's
        "      - name: Git identity",
        "        run: |",
        '          git config user.name "Memento (GitHub Actions)"',
        '          git config user.email "memento@users.noreply.github.com"',
        "      - name: One tick",
        f"        working-directory: {q(where)}",
        "        env:",
        "          MEMENTO_HOST: gha-${{ github.run_id }}",
        "          # ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}",
        "        run: memento tick",
    ]
    if not pushes_itself:
        lines += ["      - name: Push back",
                  "        if: success()",
                  '        run: git push origin "HEAD:refs/heads/${{ github.ref_name }}"']
    return "\n".join(lines) + "\n", schedule
