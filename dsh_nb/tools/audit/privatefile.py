"""Files that hold a record of calls, opened for writing as private files.

A journal (``serve --journal``) or an evaluation recording (``record=``)
holds every argument, result and prompt. Its path may sit in a folder
others can write, so the path is trusted no more than a token file's is:

* a symbolic link at the path is refused, never followed, and so is a
  dangling one (whose target would otherwise be created);
* what is there must be a regular file owned by this user: a FIFO, a
  device or a folder is refused (opening never blocks on a FIFO);
* an existing file that its group or others may read or write is refused,
  with the ``chmod 600`` that fixes it; a new file is created 0600.

Each refusal is one :class:`PrivateFileError` naming the path and the fix.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Final

__all__ = ["PrivateFileError", "check_private", "open_private"]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)


class PrivateFileError(OSError):
    """The path cannot be written as a private file; the text says why."""


def _refuse(path: str, why: str) -> PrivateFileError:
    return PrivateFileError(f"refusing to write {path!r}: {why}")


def open_private(path: str | os.PathLike[str], *, append: bool) -> int:
    """Open ``path`` for writing as a private file; return its descriptor.

    ``append`` keeps what the file holds and writes at its end; otherwise
    the file is emptied first (only once it is known to be a regular file).
    """
    where = os.fspath(path)
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC
    if append:
        flags |= os.O_APPEND
    try:
        fd = os.open(where, flags, 0o600)
    except OSError as exc:
        try:
            mode = os.lstat(where).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISLNK(mode):
            raise _refuse(where, "it is a symbolic link; give the real path") from None
        if mode is not None and not stat.S_ISREG(mode):
            raise _refuse(where, "it is not a regular file") from None
        raise PrivateFileError(
            exc.errno, f"cannot open {where!r}: {exc.strerror}"
        ) from None
    try:
        _vet(where, os.fstat(fd))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        if not append:
            os.ftruncate(fd, 0)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return fd


def check_private(path: str | os.PathLike[str]) -> None:
    """Refuse what :func:`open_private` would refuse, without opening it.

    For a writer that replaces the file (a temporary file moved into
    place) rather than writing through it: what is at the path now must
    still be nothing, or a regular file of this user's that only it reads.
    """
    where = os.fspath(path)
    try:
        info = os.lstat(where)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(where, "it is a symbolic link; give the real path")
    _vet(where, info)


def _vet(where: str, info: os.stat_result) -> None:
    """Refuse a file that is not regular, not ours, or readable by others."""
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(where, "it is not a regular file")
    owner = getattr(os, "geteuid", None)
    if owner is not None and info.st_uid != owner():
        raise _refuse(where, "it belongs to another user")
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise _refuse(
            where,
            f"others may read it (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run chmod 600 {where}",
        )
