"""What the history says (SPEC §4, §10): the last commits' subjects, the commits since a base, a
commit's diff for the dashboard, and the commits a tick made (their ``Memento-Tick`` trailer).
"""

from __future__ import annotations

from pathlib import Path

from .repo import head
from .run import output, run_git, split_z


def log_subjects(root: Path, n: int) -> list[tuple[str, str]]:
    """The last ``n`` commits as (sha, subject), newest first; [] on an unborn branch."""
    if n <= 0 or head(root) is None:
        return []
    data = output(Path(root), ["log", f"-n{n}", "-z", "--format=%H%x00%s"])
    fields = split_z(data)
    return [(fields[i].strip("\n"), fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


def commits_since(root: Path, base: str, tip: str) -> list[tuple[str, int]] | None:
    """The commits in ``base..tip`` with their committer times (epoch seconds), newest first;
    None when ``base`` is not an ancestor of ``tip``."""
    root = Path(root)
    if run_git(root, ["merge-base", "--is-ancestor", base, tip], check=False).returncode != 0:
        return None
    out = []
    for line in output(root, ["log", "--format=%H %ct", f"{base}..{tip}", "--"]).splitlines():
        sha, _, when = line.partition(" ")
        out.append((sha, int(when or 0)))
    return out


def diff(root: Path, sha: str) -> str:
    """``git show --stat --patch sha``, for the dashboard."""
    return run_git(
        Path(root),
        ["show", "--stat", "--patch", "--no-color", "--no-ext-diff", "--end-of-options", sha],
    ).stdout.decode("utf-8", "replace")


TICK_TRAILER = "Memento-Tick"  # `Memento-Tick: 14 T-101`: the commit a status entry belongs to


def tick_commits(root: Path, limit: int = 20000) -> dict[tuple[int, str], str]:
    """{(tick number, task id): short sha} of the commits carrying a ``Memento-Tick`` trailer,
    the newest winning; one `git log` over commit messages only. Empty when git cannot say."""
    proc = run_git(Path(root), ["log", f"-n{limit}", f"--grep=^{TICK_TRAILER}: ",
                                f"--format=%h%x09%(trailers:key={TICK_TRAILER},valueonly,separator=%x2C)"],
                   check=False)
    found: dict[tuple[int, str], str] = {}
    if proc.returncode != 0:
        return found
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, value = line.partition("\t")
        for item in value.split(","):
            number, _, task = item.strip().partition(" ")
            if number.isdigit() and task:
                found.setdefault((int(number), task.strip()), sha)
    return found
