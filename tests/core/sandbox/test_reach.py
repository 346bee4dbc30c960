"""Why bubblewrap cannot run here, and the exact fix (SPEC §13; memento_core/sandbox/reach.py).

The kernel states (Ubuntu's AppArmor restriction, user namespaces switched off, a container's
defaults) cannot be made on a test machine, so each machine is a folder holding the files the
diagnosis reads (``proc/sys/…``, ``proc/self/status``, ``.dockerenv``, ``etc/sysctl.d/…``,
``etc/apparmor.d/…``) and bwrap's own last words, as bubblewrap prints them (bubblewrap.c).
Everything else is real: the fix commands are run (without sudo) on copies of the files they
edit, and `memento doctor` and `memento status` run as a person runs them, with a `bwrap` on PATH
that fails the way the real one does there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.sandbox import reach

PY = sys.executable
AA_UID_MAP = "bwrap: setting up uid map: Permission denied\n"
NO_PERMISSION = ("bwrap: No permissions to create a new namespace, likely because the kernel does not allow "
                 "non-privileged user namespaces. On e.g. debian this can be enabled with "
                 "'sysctl kernel.unprivileged_userns_clone=1'.\n")
ENOSPC = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n"
NO_USERNS = ("bwrap: Creating new namespace failed, likely because the kernel does not support user namespaces.  "
             "bwrap must be installed setuid on such systems.\n")
ROOT_EPERM = "bwrap: Creating new namespace failed: Operation not permitted\n"
SLAVE = "bwrap: Failed to make / slave: Permission denied\n"
PROC = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n"
USER = "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"
ROOT_USER = "Name:\tpython3\nUid:\t0\t0\t0\t0\n"

UBUNTU_2404 = {"proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n",
               "proc/sys/user/max_user_namespaces": "63183\n", "proc/self/status": USER}
DEBIAN_10 = {"proc/sys/kernel/unprivileged_userns_clone": "0\n", "proc/sys/user/max_user_namespaces": "63183\n",
             "proc/self/status": USER}
RHEL_STIG = {"proc/sys/user/max_user_namespaces": "0\n", "proc/self/status": USER,
             "etc/sysctl.d/99-user_max_user_namespaces.conf": "# STIG\nuser.max_user_namespaces = 0\n"}
DOCKER = {".dockerenv": "", "proc/sys/user/max_user_namespaces": "63183\n", "proc/self/status": USER}
DOCKER_ROOT = {".dockerenv": "", "proc/sys/user/max_user_namespaces": "63183\n", "proc/self/status": ROOT_USER}
PODMAN = {"run/.containerenv": "engine=\"podman-4.9.3\"\n", "proc/self/status": USER}
KUBERNETES = {"proc/1/cgroup": "12:pids:/kubepods/besteffort/pod1/abc\n", "proc/self/status": USER}


def machine(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "machine"
    root.mkdir(exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def fake_bwrap(folder: Path, stderr: str, *, code: int = 1) -> Path:
    """A `bwrap` that fails the way the real one does on that machine: its words on stderr, exit 1."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bwrap"
    path.write_text(f"#!/bin/sh\nprintf '%s' {shlex.quote(stderr)} >&2\nexit {code}\n")  # builtins only
    path.chmod(0o755)
    return path


# --------------------------------------------------------------------------- the diagnosis, case by case

CASES = [
    # (name, machine, bwrap's words, case, words the reason carries, words the fix carries)
    ("ubuntu 24.04 apparmor", UBUNTU_2404, AA_UID_MAP, "apparmor",
     ["kernel.apparmor_restrict_unprivileged_userns = 1", "setting up uid map: Permission denied"],
     ["/etc/apparmor.d/bwrap", "sudo apparmor_parser -r /etc/apparmor.d/bwrap", "userns,",
      "kernel.apparmor_restrict_unprivileged_userns = 0"]),
    ("debian unprivileged_userns_clone 0", DEBIAN_10, NO_PERMISSION, "userns-clone-off",
     ["kernel.unprivileged_userns_clone = 0"],
     ["echo 'kernel.unprivileged_userns_clone = 1' | sudo tee /etc/sysctl.d/99-memento-bwrap.conf "
      "&& sudo sysctl --system"]),
    ("max_user_namespaces 0 set by a hardening file", RHEL_STIG, ENOSPC, "userns-off",
     ["user.max_user_namespaces = 0", "ENOSPC"],
     ["/etc/sysctl.d/99-user_max_user_namespaces.conf", "sudo sysctl --system"]),
    ("kernel without user namespaces", {"proc/self/status": USER}, NO_USERNS, "no-userns",
     ["no user namespaces"], ["CONFIG_USER_NS", "sudo chmod u+s"]),
    ("docker's seccomp", DOCKER, NO_PERMISSION, "container",
     ["Docker container's seccomp profile forbids creating namespaces"],
     ["docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined "
      "--security-opt systempaths=unconfined", '[sandbox] mode = "none"']),
    ("docker as root", DOCKER_ROOT, ROOT_EPERM, "container", ["seccomp profile forbids creating namespaces"],
     ["--security-opt seccomp=unconfined"]),
    ("docker's apparmor", DOCKER, SLAVE, "container", ["AppArmor or SELinux profile forbids the mounts"],
     ["--security-opt apparmor=unconfined"]),
    ("docker's masked /proc", DOCKER, PROC, "container", ["masks parts of /proc"],
     ["--security-opt systempaths=unconfined"]),
    ("podman", PODMAN, PROC, "container", ["Podman container masks parts of /proc"],
     ["podman run --security-opt seccomp=unconfined --security-opt label=disable --security-opt unmask=ALL"]),
    ("kubernetes", KUBERNETES, NO_PERMISSION, "container", ["Kubernetes container"],
     ["seccompProfile: {type: Unconfined}", "procMount: Unmasked"]),
    ("docker on a host with user namespaces off", {**DOCKER, "proc/sys/user/max_user_namespaces": "0\n"},
     ENOSPC, "userns-off", ["on the host of this Docker container"],
     ["on the host, set user.max_user_namespaces = 15000", "and start the container with `docker run"]),
    ("a container, and a mistake of bwrap's own", DOCKER, "bwrap: Can't find source path /nix: No such file\n",
     "unknown", ["Can't find source path /nix"], ["--unshare-pid true"]),
    ("nothing known", {"proc/self/status": USER}, "bwrap: Can't find source path /nix: No such file\n", "unknown",
     ["bubblewrap cannot run here: Can't find source path /nix: No such file"],
     ["--unshare-pid true", '[sandbox] mode = "none"']),
]


@pytest.mark.parametrize("name,files,said,case,why,fix", CASES, ids=[c[0] for c in CASES])
def test_each_case_is_named_with_its_exact_fix(tmp_path, name, files, said, case, why, fix):
    found = reach.diagnose(said, str(fake_bwrap(tmp_path / "bin", said)), machine(tmp_path, files))
    assert found.case == case, found
    for words in why:
        assert words in found.reason, (words, found.reason)
    text = "\n".join(found.fix)
    for words in fix:
        assert words in text, (words, text)


def test_root_and_setuid_bwrap_need_no_user_namespace_so_no_switch_is_blamed(tmp_path):
    """bwrap run by root, or installed setuid, makes no user namespace: Ubuntu's restriction and the
    sysctls cannot be why it fails (bubblewrap.c forces --unshare-user only for an unprivileged user)."""
    root = machine(tmp_path, {**UBUNTU_2404, "proc/sys/user/max_user_namespaces": "0\n", "proc/self/status": ROOT_USER})
    assert reach.diagnose(ROOT_EPERM, str(fake_bwrap(tmp_path / "bin", ROOT_EPERM)), root).case == "unknown"
    (root / "proc/self/status").write_text(USER)
    setuid = fake_bwrap(tmp_path / "suid", ROOT_EPERM)
    setuid.chmod(0o4755)
    assert reach.diagnose(ROOT_EPERM, str(setuid), root).case == "unknown"


def test_apparmor_is_blamed_only_for_a_refusal(tmp_path):
    """With the restriction on, a bwrap that fails for its own reason (a missing path) is not sent
    to write AppArmor profiles."""
    root = machine(tmp_path, UBUNTU_2404)
    said = "bwrap: Can't find source path /gnu/store: No such file or directory\n"
    assert reach.diagnose(said, str(fake_bwrap(tmp_path / "bin", said)), root).case == "unknown"


def test_the_profile_command_writes_the_profile_ubuntu_ships_for_such_programs(tmp_path):
    """The printf of the fix, run (its `sudo tee` aside), writes exactly the profile: attached to the
    real bwrap (links resolved), unconfined, `userns,`; a path with a space or a quote survives."""
    for folder in ("bin", "my tools", "it's here"):
        binary = fake_bwrap(tmp_path / folder, AA_UID_MAP)
        link = tmp_path / f"link-{len(folder)}"
        link.symlink_to(binary)
        found = reach.diagnose(AA_UID_MAP, str(link), machine(tmp_path, UBUNTU_2404))
        command = found.fix[0].split("`", 1)[1].rsplit("`", 1)[0]
        printf, tee = command.split(" | ", 1)
        assert tee == "sudo tee /etc/apparmor.d/bwrap && sudo apparmor_parser -r /etc/apparmor.d/bwrap"
        written = subprocess.run(["sh", "-c", printf], capture_output=True, text=True, check=True).stdout
        attach = f'"{binary}"' if " " in str(binary) else str(binary)
        assert written == ("abi <abi/4.0>,\ninclude <tunables/global>\n\n"
                           f"profile bwrap {attach} flags=(unconfined) {{\n  userns,\n\n"
                           "  # Site-specific additions and overrides. See local/README for details.\n"
                           "  include if exists <local/bwrap>\n}\n")
        parser = shutil.which("apparmor_parser")
        if parser and Path("/etc/apparmor.d/abi/4.0").exists():  # an AppArmor 4 machine: the parser agrees
            profile = tmp_path / "bwrap.profile"
            profile.write_text(written)
            subprocess.run([parser, "-Q", "-K", str(profile)], check=True, capture_output=True)


def test_a_profile_already_there_is_loaded_not_overwritten(tmp_path):
    """Two profiles attaching to bwrap conflict: one already in /etc/apparmor.d (Ubuntu's
    bwrap-userns-restrict, a vendor's) is named and loaded instead."""
    binary = fake_bwrap(tmp_path / "bin", AA_UID_MAP)
    other = "profile other /usr/bin/other {\n  /usr/bin/bwrap ix,\n}\n"  # runs bwrap, does not attach to it
    ours = f"abi <abi/4.0>,\nprofile bwrap {binary} flags=(attach_disconnected) {{\n  allow userns,\n}}\n"
    root = machine(tmp_path, {**UBUNTU_2404, "etc/apparmor.d/other": other})
    assert "sudo tee /etc/apparmor.d/bwrap" in reach.diagnose(AA_UID_MAP, str(binary), root).fix[0]
    (root / "etc/apparmor.d/bwrap-userns-restrict").write_text(ours)
    fix = reach.diagnose(AA_UID_MAP, str(binary), root).fix
    assert "sudo tee" not in fix[0]
    assert "`sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict`" in fix[0]


def test_the_sysctl_command_edits_the_file_that_wins_and_only_that_setting(tmp_path):
    """The setting a hardening file in /etc makes is changed there (a new file would lose to it);
    the sed of the fix, run on a copy, changes that one line and nothing else."""
    text = "# STIG V-257816\nuser.max_user_namespaces = 0\nkernel.kptr_restrict = 2\n"
    root = machine(tmp_path, {**RHEL_STIG, "etc/sysctl.d/99-user_max_user_namespaces.conf": text,
                              "usr/lib/sysctl.d/50-default.conf": "user.max_user_namespaces = 0\n"})
    found = reach.diagnose(ENOSPC, str(fake_bwrap(tmp_path / "bin", ENOSPC)), root)
    command = found.fix[0].split("`", 1)[1].rsplit("`", 1)[0]
    sed, reload = command.split(" && ")
    assert reload == "sudo sysctl --system"
    copy = tmp_path / "copy.conf"
    copy.write_text(text)
    sed = sed.removeprefix("sudo ").replace("/etc/sysctl.d/99-user_max_user_namespaces.conf", str(copy))
    subprocess.run(["sh", "-c", sed], check=True)
    assert copy.read_text() == "# STIG V-257816\nuser.max_user_namespaces = 15000\nkernel.kptr_restrict = 2\n"


def test_a_vendor_setting_gets_a_file_of_its_own_that_sorts_after_it(tmp_path):
    """A setting from /usr/lib/sysctl.d is overridden by a new file in /etc/sysctl.d whose name sorts
    after the vendor's (sysctl --system applies names in order, the last one wins)."""
    root = machine(tmp_path, {**DEBIAN_10, "usr/lib/sysctl.d/10-hardening.conf": "kernel.unprivileged_userns_clone=0\n"})
    fix = reach.diagnose(NO_PERMISSION, str(fake_bwrap(tmp_path / "bin", NO_PERMISSION)), root).fix[0]
    assert "(now set in /usr/lib/sysctl.d/10-hardening.conf)" in fix
    assert "sudo tee /etc/sysctl.d/99-memento-bwrap.conf" in fix
    (root / "usr/lib/sysctl.d/zz-late.conf").write_text("kernel.unprivileged_userns_clone = 0\n")
    fix = reach.diagnose(NO_PERMISSION, str(fake_bwrap(tmp_path / "bin", NO_PERMISSION)), root).fix[0]
    assert "sudo tee /etc/sysctl.d/zz-memento-bwrap.conf" in fix and "zz-late.conf" in fix


def test_bad_input_words_and_files(tmp_path):
    """Control characters and escapes in bwrap's words are made printable and long words cut;
    unreadable or garbled kernel files say nothing (never a traceback)."""
    said = "bwrap: \x1b[31mevil\x1b[0m \u202e" + "x" * 500 + "\n"
    root = machine(tmp_path, {"proc/sys/user/max_user_namespaces": "zero\n", "proc/self/status": "garbage",
                              "proc/sys/kernel/apparmor_restrict_unprivileged_userns": ""})
    (root / "etc/sysctl.d").mkdir(parents=True)
    (root / "etc/sysctl.d/bad.conf").write_bytes(b"\xff\xfe=\n")
    found = reach.diagnose(said, str(fake_bwrap(tmp_path / "bin", said)), root)
    assert found.case == "unknown" and "\x1b" not in found.reason and "\u202e" not in found.reason
    assert len(found.said) <= reach.SAID_MAX
    assert reach.diagnose("", str(tmp_path / "gone"), tmp_path / "nothing").reason == \
        "bubblewrap cannot run here: bwrap failed without saying why"


# --------------------------------------------------------------------------- memento doctor and status, for real


def workspace(tmp_path: Path, mode: str = "auto") -> Path:
    root = tmp_path / "proj"
    done = subprocess.run([PY, "-m", "memento_core.cli", "init", str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    config = root / "memento.toml"
    if mode != "auto":
        config.write_text(config.read_text().replace('mode = "auto"', f'mode = "{mode}"'))
        subprocess.run(["git", "commit", "-qam", "sandbox mode"], cwd=root, check=True)
    return root


def run(root: Path, system: Path, path: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path, reach.ROOT_ENV: str(system)}
    return subprocess.run([PY, "-m", "memento_core.cli", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60)


def sandbox_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if "sandbox:" in line]


DOCTOR = [
    # (name, machine, bwrap's words: None = no bwrap on PATH, the warning's words, the fix lines' words)
    ("ubuntu 24.04", UBUNTU_2404, AA_UID_MAP, "AppArmor lets only programs whose profile allows it",
     ["[INFO] sandbox: fix: an AppArmor profile that lets bwrap create user namespaces — `printf",
      "[INFO] sandbox: or, for every program at once (a weaker system): `echo "
      "'kernel.apparmor_restrict_unprivileged_userns = 0' | sudo tee /etc/sysctl.d/99-memento-bwrap.conf "
      "&& sudo sysctl --system`"]),
    ("debian", DEBIAN_10, NO_PERMISSION, "unprivileged user namespaces are switched off "
     "(kernel.unprivileged_userns_clone = 0)",
     ["[INFO] sandbox: fix: set kernel.unprivileged_userns_clone = 1, now and at every boot: `echo "
      "'kernel.unprivileged_userns_clone = 1' | sudo tee /etc/sysctl.d/99-memento-bwrap.conf && sudo sysctl "
      "--system`"]),
    ("rhel", RHEL_STIG, ENOSPC, "user namespaces are switched off (user.max_user_namespaces = 0)",
     ["(set in /etc/sysctl.d/99-user_max_user_namespaces.conf): `sudo sed -i"]),
    ("docker", DOCKER, NO_PERMISSION, "this Docker container's seccomp profile forbids creating namespaces",
     ["[INFO] sandbox: fix: start the container with `docker run --security-opt seccomp=unconfined "
      "--security-opt apparmor=unconfined --security-opt systempaths=unconfined …`",
      '[INFO] sandbox: or, the container being the boundary, run the agent unconfined knowingly: '
      '[sandbox] mode = "none" in memento.toml']),
    ("podman", PODMAN, PROC, "this Podman container masks parts of /proc", ["--security-opt unmask=ALL"]),
    ("not installed", UBUNTU_2404, None, "bubblewrap (bwrap) is not installed",
     ["[INFO] sandbox: fix: install it — `sudo apt-get install bubblewrap` (Debian, Ubuntu)"]),
]


def bin_dir(tmp_path: Path, said: str | None) -> str:
    """PATH for the doctor: git, and a bwrap that fails the way the real one does (or none)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("git",):
        (folder / tool).symlink_to(shutil.which(tool))
    if said is not None:
        fake_bwrap(folder, said)
    return str(folder)


@pytest.mark.parametrize("name,files,said,warning,fix", DOCTOR, ids=[c[0] for c in DOCTOR])
def test_memento_doctor_says_why_and_prints_the_fix(tmp_path, name, files, said, warning, fix):
    root = workspace(tmp_path)
    path = bin_dir(tmp_path, said)
    done = run(root, machine(tmp_path, files), path, "doctor")
    lines = sandbox_lines(done.stdout)
    assert done.returncode == 1, done.stdout + done.stderr  # a warning: the agent would run unconfined
    assert lines[0].startswith("[WARNING] sandbox: the agent runs unconfined (") and warning in lines[0], lines
    assert [line for line in done.stdout.splitlines() if line.startswith(("[WARNING]", "[CRITICAL]"))] == lines[:1]
    for words in fix:
        assert any(words in line for line in lines[1:]), (words, lines)
    assert all(line.startswith("[INFO] sandbox: ") for line in lines[1:]) and len(lines) >= 2
    status = run(root, machine(tmp_path, files), path, "status")
    (said_there,) = [line for line in status.stdout.splitlines() if "unconfined" in line]
    assert warning in said_there and said_there.endswith("— `memento doctor` says what to do"), said_there


def test_mode_bwrap_is_critical_with_the_same_fix(tmp_path):
    root = workspace(tmp_path, mode="bwrap")
    done = run(root, machine(tmp_path, UBUNTU_2404), bin_dir(tmp_path, AA_UID_MAP), "doctor")
    lines = sandbox_lines(done.stdout)
    assert done.returncode == 2, done.stdout
    assert lines[0].startswith("[CRITICAL] memento.toml: sandbox: bubblewrap cannot run here: AppArmor"), lines
    assert lines[0].endswith('[sandbox] mode = "bwrap" refuses to run the agent unconfined: every task would fail')
    assert lines[1].startswith("[INFO] sandbox: fix: an AppArmor profile that lets bwrap create user namespaces")


def test_mode_none_is_a_choice_with_nothing_to_fix(tmp_path):
    root = workspace(tmp_path, mode="none")
    done = run(root, machine(tmp_path, UBUNTU_2404), bin_dir(tmp_path, AA_UID_MAP), "doctor")
    assert sandbox_lines(done.stdout) == ['[WARNING] sandbox: the agent runs unconfined ([sandbox] mode = "none" '
                                          'in memento.toml)']
