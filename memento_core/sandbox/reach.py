"""Why bubblewrap cannot run here, and the exact fix (SPEC §13, "Where bubblewrap is installed but
cannot run").

:func:`diagnose` reads what the kernel says about user namespaces and where this process runs
(files under a system root, ``/`` unless told otherwise) and what bwrap printed last, and names
one case with its fix:

* ``apparmor``: Ubuntu 23.10+ (the default from 24.04) lets an unprivileged program create a
  user namespace only under an AppArmor profile with a ``userns,`` rule
  (``kernel.apparmor_restrict_unprivileged_userns = 1``); bwrap, which has none, gets a
  namespace without capabilities and dies with "setting up uid map: Permission denied". Fix:
  the profile Ubuntu ships for such programs, written for bwrap (or one already there, loaded).
* ``userns-off``: ``user.max_user_namespaces = 0`` (RHEL and hardening guides set it).
* ``userns-clone-off``: Debian's ``kernel.unprivileged_userns_clone = 0``.
* ``no-userns``: a kernel built without user namespaces (bwrap would have to be setuid).
* ``container``: Docker's or Podman's defaults forbid what bwrap needs: its seccomp profile
  refuses new namespaces, its AppArmor profile mounts, its masked ``/proc`` a new ``/proc``.
* ``missing``: no bwrap on PATH. ``unknown``: none of these; bwrap's own words are kept.

The kernel's states cannot be made on a test machine, so ``MEMENTO_SYSTEM_ROOT`` (inert unless
set, like crashpoints.py's variable) points the doctor at a folder holding a machine's files.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from ..lines import safe_text

ROOT_ENV = "MEMENTO_SYSTEM_ROOT"
APPARMOR_KEY = "kernel.apparmor_restrict_unprivileged_userns"
MAX_USERNS_KEY = "user.max_user_namespaces"
CLONE_KEY = "kernel.unprivileged_userns_clone"
MAX_USERNS_VALUE = "15000"  # any number above 0 lets bwrap make its one namespace
SYSCTL_FILE = "99-memento-bwrap.conf"
# Where sysctl --system reads settings: for one file name, the first folder that has it wins;
# then every name in name order (a later name wins), and /etc/sysctl.conf last of all.
SYSCTL_DIRS = ("etc/sysctl.d", "run/sysctl.d", "usr/local/lib/sysctl.d", "usr/lib/sysctl.d", "lib/sysctl.d")
SAID_MAX = 240


@dataclass(frozen=True)
class Diagnosis:
    """What stops bubblewrap here (``case``, ``why``), what bwrap said, and the fix line by line."""

    case: str
    why: str
    fix: tuple[str, ...] = ()
    said: str = ""

    @property
    def reason(self) -> str:
        """One line for `memento status`, the tick's log and the doctor's warning."""
        if self.case == "missing":
            return self.why
        said = f" (bwrap: {self.said})" if self.said and self.said not in self.why else ""
        return f"bubblewrap cannot run here: {self.why}{said}"


def system_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or "/")


def missing() -> Diagnosis:
    return Diagnosis("missing", "bubblewrap (bwrap) is not installed",
                     ("fix: install it — `sudo apt-get install bubblewrap` (Debian, Ubuntu), "
                      "`sudo dnf install bubblewrap` (Fedora, RHEL), `sudo pacman -S bubblewrap` (Arch)",))


def diagnose(stderr: str, binary: str, root: Path | None = None) -> Diagnosis:
    """Which case stops ``binary`` (bwrap, which printed ``stderr`` and failed) on the machine
    whose files are under ``root``, and its fix."""
    root = Path(root) if root is not None else system_root()
    said = last_words(stderr)
    container = container_kind(root)
    if uses_userns(root, binary):
        for key, value, case, what in ((MAX_USERNS_KEY, MAX_USERNS_VALUE, "userns-off", "user namespaces"),
                                       (CLONE_KEY, "1", "userns-clone-off", "unprivileged user namespaces")):
            if _read_int(root, key) == 0:
                return kernel_switch(root, case, f"{what} are switched off ({key} = 0)", key, value, container, said)
        if _read_int(root, APPARMOR_KEY) == 1 and not container and refused(said):
            return Diagnosis("apparmor", "AppArmor lets only programs whose profile allows it create user namespaces "
                                         f"({APPARMOR_KEY} = 1, Ubuntu's default since 24.04), and bwrap has none",
                             apparmor_fix(root, binary), said)
        if "does not support user namespaces" in said:
            return Diagnosis("no-userns", "this kernel has no user namespaces",
                             (f"fix: a kernel built with CONFIG_USER_NS, or bwrap installed setuid root, as bwrap "
                              f"itself says: `sudo chmod u+s {shlex.quote(binary)}`",), said)
    if container and refused(said):
        return container_diagnosis(container, said)
    return Diagnosis("unknown", said or "bwrap failed without saying why",
                     (f"look: `{shlex.quote(binary)} --ro-bind / / --dev /dev --proc /proc --unshare-pid true` "
                      "shows bubblewrap's error; or run the agent unconfined knowingly: "
                      '[sandbox] mode = "none" in memento.toml',), said)


def kernel_switch(root: Path, case: str, why: str, key: str, value: str, container: str, said: str) -> Diagnosis:
    """A sysctl that keeps bwrap from its user namespace. In a container it is the host's (the
    kernel is shared; its files are not): set it there, and let the container make namespaces."""
    if not container:
        return Diagnosis(case, why, sysctl_fix(root, key, value, f"set {key} = {value}, now and at every boot"), said)
    host = sysctl_fix(None, key, value, f"on the host, set {key} = {value}, now and at every boot")
    return Diagnosis(case, f"{why} on the host of this {container} container",
                     (*host, container_diagnosis(container, said).fix[0].replace("fix: ", "and ", 1)), said)


def refused(said: str) -> bool:
    """bwrap's words are the kernel's refusal (EACCES, EPERM), not a mistake in its arguments."""
    return any(w in said for w in ("Permission denied", "Operation not permitted", "No permissions"))


def last_words(stderr: str) -> str:
    """bwrap's last line, without its ``bwrap: `` prefix, made printable and short."""
    lines = [ln.strip() for ln in (stderr or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    line = lines[-1]
    line = line[len("bwrap: "):] if line.startswith("bwrap: ") else line
    line = safe_text(line)
    return line if len(line) <= SAID_MAX else line[: SAID_MAX - 1] + "…"


def uses_userns(root: Path, binary: str) -> bool:
    """Whether bwrap needs a user namespace of its own: unless it runs as root or is setuid root,
    it always makes one (its argument parsing forces --unshare-user)."""
    if _euid(root) == 0:
        return False
    try:
        return not os.stat(binary).st_mode & stat.S_ISUID
    except OSError:
        return True


def _euid(root: Path) -> int | None:
    """The effective uid this process has, from the kernel's own ``/proc/self/status``."""
    try:
        text = (root / "proc/self/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("Uid:"):
            parts = line.split()
            if len(parts) >= 3 and parts[2].isdigit():
                return int(parts[2])
    return None


def _read_int(root: Path, key: str) -> int | None:
    """The sysctl ``key`` as the kernel has it now (``/proc/sys/…``), or None when absent or unreadable."""
    try:
        text = (root / "proc/sys" / key.replace(".", "/")).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def container_kind(root: Path) -> str:
    """"Docker", "Podman", "Kubernetes", "LXC" or "" (not a container as far as its files say)."""
    if (root / ".dockerenv").exists():
        return "Docker"
    if (root / "run/.containerenv").exists():
        return "Podman"
    try:
        cgroup = (root / "proc/1/cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError:
        cgroup = ""
    for word, kind in (("kubepods", "Kubernetes"), ("libpod", "Podman"), ("docker", "Docker"), ("lxc", "LXC")):
        if word in cgroup:
            return kind
    return ""


# ---------------------------------------------------------------- the fixes


def apparmor_fix(root: Path, binary: str) -> tuple[str, ...]:
    """A profile that lets ``binary`` create user namespaces (:func:`profile_lines`), or the one
    already there, loaded; or, for every program, the sysctl."""
    real = os.path.realpath(binary)
    existing = existing_profile(root, real)
    if existing:
        first = (f"fix: {existing} is a profile for bwrap: it must allow `userns,` and be loaded — "
                 f"`sudo apparmor_parser -r {shlex.quote(existing)}`")
    else:
        lines = " ".join(shlex.quote(line) for line in profile_lines(real))
        first = ("fix: an AppArmor profile that lets bwrap create user namespaces — "
                 f"`printf '%s\\n' {lines} | sudo tee /etc/apparmor.d/bwrap "
                 "&& sudo apparmor_parser -r /etc/apparmor.d/bwrap`")
    alternative = sysctl_fix(root, APPARMOR_KEY, "0", "")[0]
    return first, "or, for every program at once (a weaker system): " + alternative.removeprefix("fix: ")


def profile_lines(binary: str) -> list[str]:
    """/etc/apparmor.d/bwrap: unconfined, but allowed to create user namespaces (``userns,``);
    the shape of the profiles Ubuntu's apparmor package ships for programs that need them."""
    path = f'"{binary}"' if any(ch.isspace() for ch in binary) else binary
    return ["abi <abi/4.0>,", "include <tunables/global>", "",
            f"profile bwrap {path} flags=(unconfined) {{", "  userns,", "",
            "  # Site-specific additions and overrides. See local/README for details.",
            "  include if exists <local/bwrap>", "}"]


def existing_profile(root: Path, binary: str) -> str:
    """A profile file in /etc/apparmor.d that attaches to ``binary`` (its path, as ``/…`` after
    ``root``), or ''. Writing a second one over it would make two profiles claim bwrap."""
    folder = root / "etc/apparmor.d"
    # `profile NAME /usr/bin/bwrap flags=(…) {` or `/usr/bin/bwrap {`: the line that attaches it
    attaches = re.compile(rf"^[ \t]*(?:profile[ \t]+\S+[ \t]+)?\"?{re.escape(binary)}\"?(?:[ \t]+flags=\([^)]*\))?[ \t]*\{{",
                          re.M)
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file())
    except OSError:
        return ""
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if attaches.search(text):
            return "/" + path.relative_to(root).as_posix()
    return ""


def sysctl_fix(root: Path | None, key: str, value: str, purpose: str) -> tuple[str, ...]:
    """One command that sets ``key`` to ``value`` now and at every boot: the file that sets it
    (and wins) is edited in place when it is in /etc; else a file of Memento's that sorts after it.
    ``root`` None: the machine's files are not known here (a container's host)."""
    winner = sysctl_source(root, key) if root is not None else ""
    if winner and (winner == "/etc/sysctl.conf" or winner.startswith("/etc/sysctl.d/")):
        pattern = key.replace(".", r"\.")
        command = (f"sudo sed -i 's/^[[:space:]]*{pattern}[[:space:]]*=.*/{key} = {value}/' {shlex.quote(winner)} "
                   "&& sudo sysctl --system")
        where = f" (set in {winner})"
    else:
        name = SYSCTL_FILE if not winner or Path(winner).name < SYSCTL_FILE else "zz-memento-bwrap.conf"
        command = f"echo '{key} = {value}' | sudo tee /etc/sysctl.d/{name} && sudo sysctl --system"
        where = f" (now set in {winner})" if winner else ""
    said = f"{purpose}{where}: " if purpose else ""
    return (f"fix: {said}`{command}`",)


def sysctl_source(root: Path, key: str) -> str:
    """The file whose setting of ``key`` sysctl --system applies last ('' when none sets it)."""
    by_name: dict[str, Path] = {}
    for folder in SYSCTL_DIRS:
        try:
            found = sorted((root / folder).glob("*.conf"))
        except OSError:
            continue
        for path in found:
            by_name.setdefault(path.name, path)
    candidates = [by_name[name] for name in sorted(by_name)] + [root / "etc/sysctl.conf"]
    winner = ""
    for path in candidates:
        if _sets(path, key):
            winner = "/" + path.relative_to(root).as_posix()
    return winner


def _sets(path: Path, key: str) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        line = line.strip().lstrip("-")
        if line and not line.startswith(("#", ";")) and "=" in line:
            name = line.split("=", 1)[0].strip().replace("/", ".")
            if name == key:
                return True
    return False


def container_diagnosis(kind: str, said: str) -> Diagnosis:
    """What of the container's defaults stopped bwrap (from its last words) and how to start it."""
    if "Can't mount proc" in said:
        why = f"this {kind} container masks parts of /proc, so bwrap cannot mount a /proc of its own"
    elif "Permission denied" in said and ("mount" in said or "slave" in said):
        why = f"this {kind} container's AppArmor or SELinux profile forbids the mounts bwrap makes"
    else:
        why = f"this {kind} container's seccomp profile forbids creating namespaces"
    fix = (CONTAINER_FIX.get(kind, "fix: let the container create namespaces and mount, and unmask its /proc "
                                    "(its seccomp filter, its AppArmor or SELinux profile and its masked /proc "
                                    "are what stop bwrap)"),
           'or, the container being the boundary, run the agent unconfined knowingly: [sandbox] mode = "none" '
           "in memento.toml")
    return Diagnosis("container", why, fix, said)


# Each option lifts one default that stops bwrap: the seccomp filter (no new namespaces), the
# AppArmor or SELinux profile (no mounts), the masked /proc (no new /proc).
CONTAINER_FIX = {
    "Docker": ("fix: start the container with `docker run --security-opt seccomp=unconfined "
               "--security-opt apparmor=unconfined --security-opt systempaths=unconfined …`"),
    "Podman": ("fix: start the container with `podman run --security-opt seccomp=unconfined "
               "--security-opt label=disable --security-opt unmask=ALL …`"),
    "Kubernetes": ("fix: in the pod's securityContext: `seccompProfile: {type: Unconfined}`, "
                   "`appArmorProfile: {type: Unconfined}`, `procMount: Unmasked`"),
}
