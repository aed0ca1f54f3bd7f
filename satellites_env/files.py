"""Files in and out, one way for the whole project: every output is written to a temporary
file beside it and renamed over the path, and every input is read with a size limit.

Outputs (`write_output`, `open_output`): the path must be a regular file or not
exist. A folder, a FIFO, a device node or a socket at the path is a `FileKindError`,
checked before anything is written and again just before the rename, so a special file is
never replaced by a regular one. **A symbolic link at the path is refused too**, dangling or
not: renaming over it would replace the link itself, and writing through it would write
wherever it points (a file elsewhere, a device, a path that does not exist yet), which the
caller did not name. Give the target itself instead. Folders above the file may be links.
The new file gets the mode of the file it replaces (a new one: 0o666 less the umask); a
reader never sees half a file, and a failed write leaves the old file as it was.

Inputs (`read_input`): the path must be a regular file (links to one are followed);
a FIFO or a device is refused before it is opened, so reading never waits for a writer
(`mkfifo`) or reads forever (`/dev/zero`), and a file over the caller's size limit is refused
without reading more than the limit.

Both raise `FileKindError`, an `OSError`, so the command line's fallback for failed
writes and its one-line errors treat it as any other file error.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .core.checks import quoted_path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class FileKindError(OSError):
    """A path that is not a regular file where one is needed (a folder, a FIFO, a device, a
    socket, or a symbolic link given as an output), or an input over its size limit."""


def kind_of(mode: int) -> str:
    """'a directory', 'a FIFO (named pipe)', ... : what a stat mode is, for messages."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def check_output(path: str | Path, what: str = "output file") -> os.stat_result | None:
    """Refuse an output path that exists and is not a regular file (a symbolic link
    included); return its stat, or None when nothing is there yet."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        state = "" if path.exists() else "dangling "
        raise FileKindError(f"{what} {quoted_path(path)} is a {state}symbolic link (to "
                            f"{quoted_path(Path(target))}); outputs are never written through a "
                            f"link: give the target path itself")
    if not stat.S_ISREG(info.st_mode):
        raise FileKindError(f"{what} {quoted_path(path)} is {kind_of(info.st_mode)}, not a regular "
                            f"file; give a file path")
    return info


@contextmanager
def open_output(path: str | Path, what: str = "output file") -> Iterator[BinaryIO]:
    """`with open_output(path) as file:` write bytes to `file`; when the block ends without
    an error, the file replaces `path` at once (see the module's rules). The folder must
    exist."""
    path = Path(path)
    before = check_output(path, what)
    temporary = path.with_name(f".{path.name[:60]}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
                         | _CLOEXEC | _BINARY, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            yield file
        if before is not None:
            os.chmod(temporary, stat.S_IMODE(before.st_mode))
        check_output(path, what)  # nothing special has taken the path meanwhile
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_output(path: str | Path, data: bytes | str, what: str = "output file") -> Path:
    """Write `data` (text is written as UTF-8) to `path` by the module's rules; the path."""
    path = Path(path)
    with open_output(path, what) as file:
        file.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def read_input(path: str | Path, limit: int, what: str = "input file") -> bytes:
    """The bytes of the regular file at `path` (a link to one is followed), at most `limit`
    of them: anything else (missing: FileNotFoundError; a folder, FIFO or device, or more
    than `limit` bytes: FileKindError) is refused without waiting or reading past the limit."""
    path = Path(path)
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise FileKindError(f"{what} {quoted_path(path)} is {kind_of(info.st_mode)}, not a regular "
                            f"file")

    def too_large() -> FileKindError:
        return FileKindError(f"{what} {quoted_path(path)} is larger than {limit:,} bytes, the most "
                             f"this reads")

    if info.st_size > limit:
        raise too_large()
    # O_NONBLOCK: a FIFO swapped in after the check does not make open() wait for a writer.
    descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY)
    with os.fdopen(descriptor, "rb") as file:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise FileKindError(f"{what} {quoted_path(path)} is {kind_of(mode)}, "
                                f"not a regular file")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise too_large()
    return data
