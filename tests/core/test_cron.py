"""memento_core.cron against python-crontab tab files, and once against the real user crontab."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from memento_core import cron
from memento_core.errors import MementoError
from tests.core.cronhelp import OTHERS, entry_lines, other_lines


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "my project"
    root.mkdir()
    return root


# ------------------------------------------------------------------ schedules


@pytest.mark.parametrize(("every", "fields", "exact"), [
    ("1min", "* * * * *", True),
    ("5min", "*/5 * * * *", True),
    ("15m", "*/15 * * * *", True),
    ("30min", "*/30 * * * *", True),
    ("60min", "0 * * * *", True),
    ("2h", "0 */2 * * *", True),
    ("12h", "0 */12 * * *", True),
    ("1d", "0 0 * * *", True),
    ("7d", "0 0 * * 0", True),
    (300, "*/5 * * * *", True),
    ("30s", "* * * * *", False),
    ("90s", "*/2 * * * *", False),
    ("7min", "*/6 * * * *", False),
    ("45min", "0 * * * *", False),
    ("5h", "0 */6 * * *", False),
])
def test_schedule_for(every, fields, exact):
    schedule = cron.schedule_for(every)
    assert (schedule.fields, schedule.exact) == (fields, exact)
    assert bool(schedule.warning) == (not exact)


def test_inexact_schedules_say_what_they_became():
    assert cron.schedule_for("7min").warning == (
        "cron repeats evenly only at intervals that divide an hour or a day: "
        "every 7m00s becomes every 6m00s (*/6 * * * *)")
    assert cron.schedule_for("20s").warning.startswith("cron runs at most once a minute")


@pytest.mark.parametrize("bad", ["soon", "0", "-5min", "5 parsecs"])
def test_bad_intervals_are_clear_errors(bad):
    with pytest.raises(MementoError, match="--every"):
        cron.schedule_for(bad)


# ------------------------------------------------------------------ the command


def test_tick_command(project):
    command = cron.tick_command(project, python="/opt/py/bin/python3", path="/home/me/.local/bin:relative:/usr/bin")
    root = str(project.resolve())
    assert command == (
        f"cd '{root}' && mkdir -p logs && PATH=/home/me/.local/bin:/usr/bin:/usr/local/bin:/bin "
        f"/opt/py/bin/python3 -P -m memento_core.tick --project '{root}' >> '{root}/logs/cron.log' 2>&1"
    )
    assert not cron.unsafe_path(command)
    # Read as a shell reads it: another program's -P before the interpreter is not Python's.
    assert cron.unsafe_path("systemd-run --user -P /usr/bin/python3 -m memento_core.tick --project /p") is True
    assert cron.unsafe_path("cd /p && /usr/bin/python3 -X dev -P -m memento_core.tick") is False
    assert cron.unsafe_path("cd /p && memento tick /p") is False  # no python -m: nothing on the path
    assert cron.unsafe_path("cd '/p && /usr/bin/python3 -m memento_core.tick") is False  # unreadable: not judged
    assert cron.unsafe_path("/usr/bin/python3 script.py -m memento_core.tick") is False  # a script's own -m
    assert cron.unsafe_path("/usr/bin/python3 -c 'import x' -m memento_core.tick") is False
    assert cron.unsafe_path("PYTHONSAFEPATH=1 true; /usr/bin/python3 -m memento_core.tick") is True  # not its
    assert cron.unsafe_path("/usr/bin/python3 -P -m x && /usr/bin/python3 -m memento_tui.app") is True
    for ends_early in ("/usr/bin/python3 -B", "/usr/bin/python3 -W", "/usr/bin/python3 - -m memento_core.tick",
                       "/usr/bin/python3 -- -m memento_core.tick"):
        assert cron.unsafe_path(ends_early) is False, ends_early  # no module run: nothing judged


SHADOW = "with open({marker!r}, 'a') as fh:\n    fh.write(__file__ + '\\n')\n"


def shadowed(folder: Path, marker: Path) -> None:
    """A memento_core in ``folder`` whose import appends to ``marker``, as a regular package and
    (tick/) through what a namespace package would reach."""
    for rel in ("memento_core/__init__.py", "memento_core/tick/__init__.py", "memento_core/tick/__main__.py"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(SHADOW.format(marker=str(marker)))


@pytest.mark.parametrize(("before", "after"), [
    ("", "-m memento_core.tick"), ("", "-P -m memento_core.tick"), ("", "-I -m memento_core.tick"),
    ("", "-B -P -m memento_core.tick"), ("", "-BP -m memento_core.tick"), ("", "-IB -m memento_core.tick"),
    ("", "-E -m memento_core.tick"), ("", "-s -m memento_core.tick"), ("", "-X utf8 -m memento_core.tick"),
    ("", "-W ignore -m memento_core.tick"), ("", "-W ignore -P -m memento_core.tick"), ("", "-OO -m memento_core.tick"),
    ("", "-u -P -m memento_core.tick"), ("", "-mmemento_core.tick"), ("", "-m memento_core.tick.__main__"),
    ("", "-Wignore::ImportWarning -m memento_core.tick"), ("", "-m memento_core.cli"),
    ("PYTHONSAFEPATH=1", "-m memento_core.tick"), ("PYTHONSAFEPATH=", "-m memento_core.tick"),
    ("", "-W error::DeprecationWarning -m memento_core.tick"), ("", "--check-hash-based-pycs never -m memento_core.tick"),
    ("", "--check-hash-based-pycs never -P -m memento_core.tick"), ("", "--version -m memento_core.tick"),
])
def test_unsafe_path_says_what_python_does(tmp_path, before, after):
    """Differential, against the interpreter itself: started in a folder holding a memento_core of
    its own, the command imports that one exactly when :func:`cron.unsafe_path` says it would."""
    here = tmp_path / "project"
    marker = tmp_path / "imported"
    shadowed(here, marker)
    command = " ".join(w for w in (before, shlex.quote(sys.executable), after, "--help") if w)
    r = subprocess.run(command, shell=True, cwd=here, capture_output=True, text=True, timeout=60)
    assert marker.exists() == cron.unsafe_path(f"cd {shlex.quote(str(here))} && PATH=/usr/bin {command}"), \
        (command, r.stdout[-300:], r.stderr[-300:])
    if not marker.exists():
        assert r.returncode == 0 and ("usage: " in r.stdout or after.startswith("--version")), r.stderr


def test_the_entry_runs_memento_not_a_memento_core_in_the_project(tmp_path, git_identity):
    """The entry starts in the project's folder, which the agent writes: run as cron runs it, with a
    memento_core/ there (committed: a task that named it, a person's merge), the tick is Memento's."""
    from memento_core.scaffold import init_workspace

    root = tmp_path / "proj"
    init_workspace(root, project="proj")
    marker = tmp_path / "imported"
    shadowed(root, marker)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "a memento_core of the project's"], cwd=root, check=True)
    command = cron.tick_command(root, path=os.environ["PATH"]).replace(r"\%", "%")
    r = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120)
    log = (root / "logs" / "cron.log").read_text()
    assert not marker.exists(), log
    assert r.returncode == 0 and "[ok] tick skipped: tick_mode is paused" in log, log  # a new project's mode


def test_percent_is_escaped_for_cron(tmp_path):
    root = tmp_path / "100%"
    root.mkdir()
    command = cron.tick_command(root, python="/usr/bin/python3", path="/usr/bin")
    assert "%" not in command.replace("\\%", "")
    assert command.count("\\%") == 3  # cd, --project, log


def test_default_command_uses_this_python_and_this_path(project, monkeypatch):
    monkeypatch.setenv("PATH", "/custom/agents/bin:/usr/bin")
    command = cron.tick_command(project)
    assert f"{sys.executable} -P -m memento_core.tick" in command
    assert "PATH=/custom/agents/bin:/usr/bin:/usr/local/bin:/bin " in command


def test_a_path_with_a_line_break_is_refused(tmp_path):
    with pytest.raises(MementoError, match="line break"):
        cron.tick_command(tmp_path / "a\nb")


# ------------------------------------------------------------------ tab file


def test_install_twice_leaves_one_entry_and_other_entries_untouched(tab, project):
    result = cron.install(project, "5min", tabfile=tab)
    assert result.replaced == 0 and result.schedule.fields == "*/5 * * * *"
    text = tab.read_text(encoding="utf-8")
    assert other_lines(text) == OTHERS.splitlines()
    [line] = entry_lines(text)
    assert line.startswith("*/5 * * * * cd ")
    assert line.endswith(f"# memento: {project.resolve()}")

    again = cron.install(project, "10min", tabfile=tab)
    assert again.replaced == 1
    text = tab.read_text(encoding="utf-8")
    assert other_lines(text) == OTHERS.splitlines()
    [line] = entry_lines(text)
    assert line.startswith("*/10 * * * * cd ")


def test_remove_gives_back_the_crontab_byte_for_byte(tab, project):
    cron.install(project, "5min", tabfile=tab)
    assert cron.installed(project, tabfile=tab)
    assert cron.remove(project, tabfile=tab) == 1
    assert tab.read_text(encoding="utf-8") == OTHERS
    assert not cron.installed(project, tabfile=tab)
    assert cron.remove(project, tabfile=tab) == 0


def test_duplicates_left_by_hand_are_folded_into_one(tab, project):
    tag = cron.tag_for(project)
    with open(tab, "a", encoding="utf-8") as fh:
        fh.write(f"* * * * * echo one # {tag}\n*/3 * * * * echo two # {tag}\n")
    result = cron.install(project, "5min", tabfile=tab)
    assert result.replaced == 2
    assert len(entry_lines(tab.read_text(encoding="utf-8"))) == 1


def test_projects_have_separate_entries(tab, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    cron.install(a, "5min", tabfile=tab)
    cron.install(b, "1h", tabfile=tab)
    assert sorted(e.root for e in cron.entries(tabfile=tab)) == [str(a.resolve()), str(b.resolve())]
    cron.remove(a, tabfile=tab)
    [left] = cron.entries(tabfile=tab)
    # python-crontab writes "0 * * * *" as its cron alias
    assert left.root == str(b.resolve()) and left.schedule == "@hourly"


def test_a_project_whose_path_is_a_prefix_of_another_is_not_confused(tab, tmp_path):
    a, ab = tmp_path / "proj", tmp_path / "proj-2"
    a.mkdir()
    ab.mkdir()
    cron.install(ab, "5min", tabfile=tab)
    assert not cron.installed(a, tabfile=tab)
    assert cron.remove(a, tabfile=tab) == 0
    assert cron.installed(ab, tabfile=tab)


def test_installed_reads_python_crontab_only_when_the_tag_is_there(tab, project, tmp_path):
    tag = cron.tag_for(project)
    # Every form python-crontab takes this project's entry from: its line's comment, the comment
    # line above it, a commented-out (disabled) job.
    for form in (f"*/5 * * * * tick # {tag}\n", f"# {tag}\n*/5 * * * * tick\n",
                 f"# */5 * * * * tick # {tag}\n"):
        tab.write_text(OTHERS + form, encoding="utf-8")
        assert cron.installed(project, tabfile=tab), form
    # Another project's entry, a person's comment naming the project: python-crontab decides.
    other = tmp_path / "other"
    other.mkdir()
    for text in (OTHERS + f"*/5 * * * * tick # {cron.tag_for(other)}\n", OTHERS + f"# see {tag} some day\n"):
        tab.write_text(text, encoding="utf-8")
        assert not cron.installed(project, tabfile=tab)
    # Without the tag in the text the answer needs no python-crontab (asyncio, logging, platform):
    # `memento status` asks at every call.
    code = ("import sys\nfrom memento_core import cron\n"
            f"print(cron.installed({str(project)!r}, tabfile={str(tab)!r}), 'crontab' in sys.modules)")
    tab.write_text(OTHERS + f"*/5 * * * * tick # {cron.tag_for(other)}\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_update_interval_if_installed(tab, project):
    assert cron.update_interval_if_installed(project, "10min", tabfile=tab) is False
    assert tab.read_text(encoding="utf-8") == OTHERS  # never creates an entry
    cron.install(project, "5min", tabfile=tab)
    command = cron.entries(tabfile=tab)[0].command
    assert cron.update_interval_if_installed(project, "15min", tabfile=tab) is True
    [entry] = cron.entries(tabfile=tab)
    assert entry.schedule == "*/15 * * * *" and entry.command == command
    assert other_lines(tab.read_text(encoding="utf-8")) == OTHERS.splitlines()


def test_missing_crontab_binary_is_a_clear_error(project, monkeypatch, tmp_path):
    monkeypatch.delenv(cron.CRONTAB_FILE_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(MementoError) as info:
        cron.install(project, "5min")
    assert "`crontab` command is not installed" in str(info.value)
    assert "apt-get install cron" in str(info.value)
    assert cron.installed(project) is False
    assert cron.update_interval_if_installed(project, "5min") is False


# ------------------------------------------------------------------ systemd


def test_systemd_units(project):
    name, timer, service, schedule = cron.systemd_units(project, "5min", python="/opt/py/bin/python3",
                                                        path="/usr/bin")
    root = project.resolve()
    assert name.startswith("memento-tick-my-project-") and len(name) == len("memento-tick-my-project-") + 8
    assert "OnCalendar=*-*-* *:00/5:00\n" in timer
    assert "Persistent=true\n" in timer and f"Unit={name}.service\n" in timer
    assert "WantedBy=timers.target" in timer
    assert "Type=oneshot\n" in service
    assert f'ExecStart=/opt/py/bin/python3 -P -m memento_core.tick --project "{root}"\n' in service
    assert f"StandardOutput=append:{root}/logs/cron.log\n" in service
    assert "Environment=PATH=/usr/bin:/usr/local/bin:/bin\n" in service
    assert schedule.exact


def test_unsafe_units_are_the_services_written_before_safe_path(project, tmp_path):
    """A unit's ExecStart as systemd runs it in WorkingDirectory=, the project: without -P (or a
    PYTHONSAFEPATH of its Environment=) a memento_core/ left there is imported."""
    units = tmp_path / "units"
    units.mkdir()
    name, _timer, service, _ = cron.systemd_units(project, "5min", python="/opt/my py/bin/python3")
    (units / f"{name}.service").write_text(service)
    assert cron.unsafe_units(units) == []
    old = service.replace(" -P -m memento_core.tick", " -m memento_core.tick")
    for unit, text in [("memento-tick-old-1", old),
                       ("memento-tick-old-2", old.replace("ExecStart=", "ExecStart=-")),
                       ("memento-tick-quiet-3", old.replace("Environment=", "Environment=PYTHONSAFEPATH= ")),
                       ("memento-tick-safe-4", old.replace("Environment=", "Environment=PYTHONSAFEPATH=1 ")),
                       ("memento-tick-safe-5", old.replace("Environment=PATH", 'Environment="PYTHONSAFEPATH=x" PATH')),
                       ("memento-tick-two-7", service + old[old.index("ExecStart="):].split("\n")[0] + "\n"),
                       ("memento-tick-odd-8", old.replace("Environment=", 'Environment="PYTHONSAFEPATH=1\nEnvironment=')),
                       ("someone-else", old)]:
        (units / f"{unit}.service").write_text(text)
    (units / "memento-tick-bytes-6.service").write_bytes(b"\xff" + old.encode())  # unreadable: not judged
    assert [p.name for p in cron.unsafe_units(units)] == [  # a second ExecStart unsafe; an unreadable Environment=
        "memento-tick-odd-8.service", "memento-tick-old-1.service", "memento-tick-old-2.service",
        "memento-tick-quiet-3.service", "memento-tick-two-7.service"]
    assert cron.unsafe_units(tmp_path / "none") == []


@pytest.mark.parametrize(("every", "calendar"), [
    ("1min", "*-*-* *:*:00"), ("1h", "*-*-* *:00:00"), ("2h", "*-*-* 00/2:00:00"),
    ("1d", "*-*-* 00:00:00"), ("7d", "Sun *-*-* 00:00:00"),
])
def test_systemd_calendar(project, every, calendar):
    _, timer, _, _ = cron.systemd_units(project, every)
    assert f"OnCalendar={calendar}\n" in timer


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_accepts_the_calendar_expressions(project):
    for every in ("1min", "5min", "1h", "2h", "1d", "7d"):
        _, timer, _, _ = cron.systemd_units(project, every)
        expr = timer.split("OnCalendar=")[1].splitlines()[0]
        check = subprocess.run(["systemd-analyze", "calendar", expr], capture_output=True, text=True)
        assert check.returncode == 0, (expr, check.stderr)


# ------------------------------------------------------------------ the real user crontab


def _user_crontab() -> str | None:
    run = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
    return run.stdout if run.returncode == 0 else None


def _restore_user_crontab(saved: str | None) -> None:
    if saved is None:
        subprocess.run(["crontab", "-r"], capture_output=True)
    else:
        subprocess.run(["crontab", "-"], input=saved, text=True, check=True)


# The user's real crontab is shared with the cron daemon's tests (test_cron_daemon.py): one group,
# run one at a time with them (.ci/run), never beside them.
@pytest.mark.cron
@pytest.mark.xdist_group("cron")
@pytest.mark.skipif(shutil.which("crontab") is None, reason="no crontab binary (Debian package: cron)")
def test_real_crontab_round_trip(project, monkeypatch):
    monkeypatch.delenv(cron.CRONTAB_FILE_ENV, raising=False)
    saved = _user_crontab()
    marker = f"# memento test marker {os.getpid()}"
    try:
        base = (saved or "") + f"{marker}\n17 3 * * * /bin/true {marker[2:]}\n"
        subprocess.run(["crontab", "-"], input=base, text=True, check=True)
        cron.install(project, "5min")
        cron.install(project, "5min")
        now = _user_crontab() or ""
        assert len(entry_lines(now)) == 1 and cron.tag_for(project) in now
        # python-crontab puts a blank line before the entry it adds; nothing else changes
        assert [ln for ln in other_lines(now) if ln] == base.splitlines()
        assert cron.installed(project)
        assert cron.update_interval_if_installed(project, "10min")
        assert "*/10 * * * *" in entry_lines(_user_crontab() or "")[0]
        assert cron.remove(project) == 1
        assert _user_crontab() == base
    finally:
        _restore_user_crontab(saved)
    assert _user_crontab() == saved


def test_reading_or_changing_nothing_never_writes_the_crontab(tmp_path, project):
    missing = tmp_path / "no-crontab-yet.txt"
    assert not cron.installed(project, tabfile=missing)
    assert cron.update_interval_if_installed(project, "5min", tabfile=missing) is False
    assert cron.remove(project, tabfile=missing) == 0
    assert cron.entries(tabfile=missing) == []
    assert not missing.exists()  # no empty crontab appears where there was none
    tab = tmp_path / "tab.txt"
    tab.write_text(OTHERS, encoding="utf-8")
    cron.install(project, "5min", tabfile=tab)
    os.utime(tab, (1_000_000, 1_000_000))
    assert cron.update_interval_if_installed(project, "5min", tabfile=tab) is True
    assert cron.remove(tmp_path / "elsewhere", tabfile=tab) == 0
    assert tab.stat().st_mtime == 1_000_000  # same schedule, nothing to remove: not rewritten


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("*/5 * * * *", "2026-11-29 22:40"),
        ("* * * * *", "2026-11-29 22:38"),
        ("0 */2 * * *", "2026-11-30 00:00"),
        ("@hourly", "2026-11-29 23:00"),
        ("0 0 * * *", "2026-11-30 00:00"),
        ("0 0 * * 0", "2026-12-06 00:00"),  # 2026-11-29 is a Sunday: the next one
        ("7 3 * * *", None),  # not a schedule Memento writes: no countdown rather than a wrong one
    ],
)
def test_next_run_after(fields, expected):
    import datetime

    when = cron.next_run_after(fields, datetime.datetime(2026, 11, 29, 22, 37, 30))
    assert (when.strftime("%Y-%m-%d %H:%M") if when else None) == expected


def test_installed_schedule_feeds_the_dashboard_countdown(tab, project):
    assert cron.installed_schedule(project, tabfile=tab) is None
    cron.install(project, "10min", tabfile=tab)
    assert cron.installed_schedule(project, tabfile=tab) == "*/10 * * * *"


# ------------------------------------------------------- the distribution's name
# Ours on PyPI ("memento" is an unrelated 2006 package); the commands keep their names and the
# GitHub workflow installs this project, never `memento`.

REPO = Path(__file__).resolve().parents[2]


def test_the_distribution_name_is_ours_and_the_commands_keep_theirs():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == cron.DISTRIBUTION == "memento-tick"
    assert set(project["scripts"]) == {"memento", "memento-tui"}


def _install_step(text: str) -> str:
    steps = yaml.safe_load(text)["jobs"]["tick"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == "Install Memento")


def test_the_workflow_never_installs_the_unrelated_memento(tmp_path, git_identity):
    assert _install_step(cron.github_workflow("p")[0]) == f"python -P -m pip install {cron.DISTRIBUTION}"
    assert cron.default_requirement(REPO) == "."  # Memento's own checkout installs itself
    assert cron.default_requirement(tmp_path) == cron.DISTRIBUTION
    root = tmp_path / "proj"
    env = {**os.environ, "MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab")}
    subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True, env=env,
                   capture_output=True)

    def workflow() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memento_core.cli", "cron", "install", "--github", str(root)],
                              capture_output=True, text=True, env=env)

    proc = workflow()
    assert proc.returncode == 0, proc.stderr
    assert _install_step(proc.stdout) == "python -P -m pip install memento-tick" and "--pip" in proc.stderr
    # A project that is Memento's own repository (Memento run on itself) installs the checkout.
    (root / "pyproject.toml").write_text(f'[project]\nname = "{cron.DISTRIBUTION}"\n')
    assert _install_step(workflow().stdout) == "python -P -m pip install ."


def test_ci_uninstalls_the_old_distribution_before_installing():
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    uninstall = run.index("pip uninstall --quiet -y memento")
    assert uninstall < run.index('pip install --quiet -e ".[dev]"')
