"""`memento cron install [--dry-run] | remove | show` (SPEC §7): the tick on the scheduler people already have.

The scheduling itself (crontab entries, systemd units) is ``memento_core/cron.py``;
this module parses the command line and reports what it did.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ...errors import MementoError
from ...workspace import Workspace
from ..context import with_dir, workspace_of
from ..output import ok, safe_block, safe_text, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    cron = sub.add_parser("cron", help="schedule ticks with cron (or systemd timers)")
    actions = cron.add_subparsers(dest="cron_command", metavar="ACTION", required=True)

    p = with_dir(actions.add_parser("install", parents=[common],
                                    help="add (or update) this project's crontab entry"))
    p.add_argument("--every", metavar="INTERVAL",
                   help="how often, e.g. 5min, 15m, 1h (default: memento.toml [schedule] every); "
                        "also written to memento.toml")
    p.add_argument("--systemd", action="store_true",
                   help="print a systemd user timer + service instead of touching the crontab")
    p.add_argument("--write", action="store_true",
                   help="with --systemd: write them to ~/.config/systemd/user/")
    p.add_argument("--github", action="store_true",
                   help="print a GitHub Actions workflow that runs one tick on a runner and pushes back")
    p.add_argument("--dry-run", action="store_true",
                   help="print the crontab line it would add, and change nothing (crontab, memento.toml)")
    p.add_argument("--pip", metavar="REQUIREMENT", default=None,
                   help="with --github: what the runner pip-installs for Memento (default: the checkout, "
                        "`.`, when the repository is Memento's own, else memento-tick)")
    p.set_defaults(func=cmd_install)

    p = with_dir(actions.add_parser("remove", parents=[common],
                                    help="remove this project's crontab entry"))
    p.set_defaults(func=cmd_remove)

    p = with_dir(actions.add_parser("show", parents=[common],
                                    help="show Memento's crontab entries"))
    p.set_defaults(func=cmd_show)


def _every(args: argparse.Namespace, ws: Workspace) -> tuple[str, bool]:
    """The interval to use, and whether it came from --every."""
    if args.every:
        return args.every, True
    from ...config.load import load_config

    return load_config(ws.config_path).schedule_every_text, False


def save_every(ws: Workspace, every: str) -> None:
    """Make memento.toml say the interval cron runs at; commit it when the file was clean."""
    from ...config.load import load_config
    from ...config.write import set_schedule_every
    from ...durations import parse_duration
    from ...git.commit import commit_paths
    from ...git.status import dirty_paths

    if parse_duration(load_config(ws.config_path).schedule_every_text) == parse_duration(every):
        return
    rel = ws.rel(ws.config_path)
    was_dirty = ws.config_path.exists() and rel in dirty_paths(ws.root)
    set_schedule_every(ws.config_path, every)
    if was_dirty:
        warn(f"{rel} now says every = {every!r}; it had other uncommitted changes, "
             "so commit it yourself (a tick refuses to start on a dirty tree)")
        return
    try:
        commit_paths(ws.root, [rel], f"memento: schedule every {every}")
    except MementoError as exc:
        warn(f"{rel} now says every = {every!r} but could not be committed: {exc}")
        return
    ok(f"{rel}: [schedule] every = {every!r} (committed)")


def cmd_install(args: argparse.Namespace) -> int:
    from ...cron import install, interval_text
    from ...durations import format_duration

    ws = workspace_of(args)
    every, given = _every(args, ws)
    if args.github:
        return _print_github(ws, every, args.pip)
    if args.systemd:
        return _install_systemd(ws, every, given=given, write=args.write)
    if args.dry_run:
        return _dry_run(ws, every)
    result = install(ws.root, every)
    if result.schedule.warning:
        warn(result.schedule.warning)
    what = "updated" if result.replaced else "installed"
    ok(f"{what} the crontab entry for {ws.root}: {result.entry.schedule} "
       f"(every {format_duration(result.schedule.seconds)}); output goes to {ws.rel(ws.cron_log)}")
    if result.replaced > 1:
        ok(f"removed {result.replaced - 1} duplicate entr{'y' if result.replaced == 2 else 'ies'}")
    _warn_without_daemon()
    if given:
        save_every(ws, interval_text(result.schedule.seconds))
    return 0


def _dry_run(ws: Workspace, every: str) -> int:
    """`cron install --dry-run`: the entry as it would be written; the crontab and memento.toml untouched."""
    from ...cron import installed, schedule_for, tag_for, tick_command

    schedule = schedule_for(every)
    if schedule.warning:
        warn(schedule.warning)
    ok(f"would {'update' if installed(ws.root) else 'add'} this crontab entry (nothing changed: --dry-run):")
    print(f"{schedule.fields} {tick_command(ws.root)} # {tag_for(ws.root)}")
    _warn_without_daemon()
    return 0


def _warn_without_daemon() -> None:
    """A crontab entry without a cron daemon is a countdown to a tick that never comes: say so."""
    from ...cron import NO_CRON_DAEMON, daemon_running

    if not daemon_running():
        warn(NO_CRON_DAEMON)


def _install_systemd(ws: Workspace, every: str, *, given: bool, write: bool) -> int:
    """`cron install --systemd [--write]`: print the timer and service, or write them."""
    from ...cron import interval_text, schedule_for, systemd_units, write_systemd_units

    if write:
        timer_path, service_path, schedule = write_systemd_units(ws.root, every)
        if schedule.warning:
            warn(schedule.warning)
        ok(f"wrote {service_path}")
        ok(f"wrote {timer_path}")
        print(f"Next: systemctl --user daemon-reload && systemctl --user enable --now "
              f"{timer_path.name}\n(and `loginctl enable-linger {os.environ.get('USER', '$USER')}` "
              "so it keeps running after you log out)")
    else:
        name, timer, service, schedule = systemd_units(ws.root, every)
        if schedule.warning:
            warn(schedule.warning)
        print(f"# ~/.config/systemd/user/{name}.service\n{service}")
        print(f"# ~/.config/systemd/user/{name}.timer\n{timer}")
        print(f"# then: systemctl --user daemon-reload && systemctl --user enable --now {name}.timer")
    if given and write:  # printing units installs nothing: memento.toml stays as it is
        save_every(ws, interval_text(schedule_for(every).seconds))
    return 0


def _print_github(ws: Workspace, every: str, pip: str) -> int:
    """`cron install --github`: print the workflow (nothing is installed here)."""
    import sys

    from ...config.load import load_config
    from ...cron import DISTRIBUTION, default_requirement, github_workflow
    from ...git.run import run_git
    from ...plan.scan import parse_plan

    config = load_config(ws.config_path)
    try:
        project = parse_plan(ws.plan_path).title or ws.root.name
    except MementoError:
        project = ws.root.name
    prefix = run_git(ws.root, ["rev-parse", "--show-prefix"], check=False).stdout.decode().strip()
    top = run_git(ws.root, ["rev-parse", "--show-toplevel"], check=False).stdout.decode().strip()
    pip = pip or default_requirement(Path(top) if top else ws.root)
    minutes = int((config.agent_timeout + config.verify_timeout) // 60) + 15
    text, schedule = github_workflow(project, every, subdir=prefix, pip=pip, timeout_minutes=minutes,
                                   pushes_itself=bool(config.workers_remote))
    sys.stdout.write(safe_block(text))  # the project's title comes from the plan

    def note(message: str) -> None:  # on stderr: stdout is the workflow file
        print(f"[warn] {safe_block(message)}", file=sys.stderr)

    if pip == DISTRIBUTION:
        note(f"the runner installs Memento as `pip install {DISTRIBUTION}`; to install it from elsewhere "
             "(a git URL, a wheel) pass --pip REQUIREMENT")
    if not config.workers_remote:
        note("memento.toml has no [workers] remote: the runner's tick does not coordinate with other "
             'hosts (set remote = "origin" so it claims tasks like one host of a fleet)')
    if schedule.seconds != int(parse_seconds(every)):
        note(f"GitHub runs scheduled workflows every {schedule.seconds // 60} minutes at most often: "
             f"{schedule.fields}")
    return 0


def parse_seconds(every: str) -> float:
    from ...durations import parse_duration

    return parse_duration(every)


def cmd_remove(args: argparse.Namespace) -> int:
    from ...cron import MISSING_CRONTAB, SYSTEMD_USER_DIR, cron_available, remove, unit_name

    ws = workspace_of(args)
    if not cron_available():
        raise MementoError(MISSING_CRONTAB)
    count = remove(ws.root)
    if count:
        ok(f"removed the crontab entry for {ws.root}")
    else:
        ok(f"no crontab entry for {ws.root}; nothing to remove")
    name = unit_name(ws.root)
    if (SYSTEMD_USER_DIR.expanduser() / f"{name}.timer").exists():
        print(f"A systemd timer exists too: systemctl --user disable --now {name}.timer")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from ...cron import MISSING_CRONTAB, TAG_PREFIX, cron_available, entries, tag_for, unsafe_path

    ws = None
    try:
        ws = workspace_of(args)
    except MementoError:
        if getattr(args, "project", None) or getattr(args, "dir", None):
            raise
    units = _warn_of_unsafe_units()
    if not cron_available():  # nothing is scheduled by cron: attention, not a failure to run
        warn(f"no crontab to show: {MISSING_CRONTAB}")
        return 1
    found = entries()
    here = tag_for(ws.root)[len(TAG_PREFIX):] if ws else None
    if not found:
        ok("no Memento entries in the crontab")
    for entry in found:
        state = "" if entry.enabled else " (disabled)"
        mine = "  <- this project" if entry.root == here else ""
        print(safe_text(f"[ok] {entry.root}{state}{mine}") + "\n     " + safe_text(entry.line))
    unsafe = [entry.root for entry in found if unsafe_path(entry.command)]
    for root in unsafe:
        warn(safe_text(f"{root}: its entry runs Python with the project's folder first on the import path "
                       "(no -P): a memento_core/ an agent left there would run as you, unconfined; "
                       f"`memento cron install {root}` rewrites it"))
    if ws is not None and not any(e.root == here for e in found):
        warn(f"{ws.root} has no crontab entry; `memento cron install` adds one")
        return 1
    if unsafe or units:
        return 1
    if found:
        _warn_without_daemon()
    return 0


def _warn_of_unsafe_units() -> int:
    """Warn of each of Memento's systemd services written before -P (cron.unsafe_units); how many."""
    from ...cron import unsafe_units

    units = unsafe_units()
    for path in units:
        warn(safe_text(f"{path}: its ExecStart runs Python with the project's folder first on the import path "
                       "(no -P): a memento_core/ an agent left there would run as you, unconfined; "
                       "`memento cron install --systemd --write` in that project rewrites it"))
    return len(units)
