"""The chat tokens (SPEC §18): read from a file of mode 0600, never from memento.toml.

A token is a password to the bot or the account: a file another user may read (or write) is
refused, naming the file and its mode, so `memento chat poll` exits 2, the tick skips the chat
with a line in logs/cron.log and `memento doctor` reports it CRITICAL.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import MementoError

MAX_TOKEN_BYTES = 4096


class TokenError(MementoError):
    """A token file that cannot be used: missing, empty, readable by others, not a file."""


def token_path(text: str) -> Path:
    return Path(os.path.expanduser(text))


def read_token(path_text: str, project: Path | None = None) -> str:
    """The token in the file ``path_text`` (``~`` expanded), stripped; TokenError saying why not.
    A file inside ``project`` (the work tree the agent writes in) is refused too."""
    path = token_path(path_text)
    if project is not None and inside(path, project):
        raise TokenError(f"token file {path_text}: inside the project, where the agent can read it (and git "
                         "could commit it); keep it in your home folder, e.g. ~/.config/memento/")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO there never blocks us
    except FileNotFoundError:
        raise TokenError(f"token file {path_text}: does not exist (write the token there, then "
                         f"`chmod 600 {path_text}`)") from None
    except OSError as exc:
        raise TokenError(f"token file {path_text}: cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokenError(f"token file {path_text}: not a regular file")
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise TokenError(f"token file {path_text}: mode {mode:04o}, others can read it; it must be 0600 "
                             f"(`chmod 600 {path_text}`)")
        if info.st_uid != os.getuid():
            raise TokenError(f"token file {path_text}: owned by another user (uid {info.st_uid})")
        data = os.read(fd, MAX_TOKEN_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_TOKEN_BYTES:
        raise TokenError(f"token file {path_text}: over {MAX_TOKEN_BYTES} bytes, not a token")
    token = data.decode("utf-8", "replace").strip()
    if not token:
        raise TokenError(f"token file {path_text}: empty")
    if any(c.isspace() or ord(c) < 32 for c in token):
        raise TokenError(f"token file {path_text}: holds more than one word; only the token goes there")
    return token


def inside(path: Path, folder: Path) -> bool:
    return os.path.realpath(path) == os.path.realpath(folder) or \
        os.path.realpath(path).startswith(os.path.realpath(folder).rstrip("/") + "/")


def outside_home(path_text: str) -> bool:
    """Whether the token file lies outside the home folder, which the sandbox hides from the agent
    (the rest of the system it sees read-only; /tmp is its own)."""
    path = token_path(path_text)
    return not inside(path, Path.home()) and not inside(path, Path("/tmp"))
