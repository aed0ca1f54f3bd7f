"""One trainer per run folder: an exclusive, non-blocking lock on `<run>/run.lock`.

The lock is `fcntl.flock` on an open file, so the operating system drops it when the process
ends, however it ends (no stale lock after a crash or a kill). Within one process the lock is
re-entrant (the `satellites train` command holds it while it checks the folder, and
`Trainer.run` takes it again). Where `fcntl` does not exist (Windows) there is no lock.

The lock file is created exclusively (`O_CREAT | O_EXCL`) and opened with `O_NOFOLLOW`, so it
is never a link: a symbolic link at `run.lock` (to any file, or dangling), a hard link to
another file, a FIFO or a device there is a FileKindError naming it, and the file it points
to is neither truncated nor written. A `run.lock` left by a process that ended (it holds a
dead PID, and no process holds its flock) is taken over as it is.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from satellites_env.files import FileKindError, kind_of, make_folders

if sys.platform == "win32":  # pragma: no cover - no flock there
    fcntl = None
else:
    import fcntl

LOCK_NAME = "run.lock"


class RunLockedError(ValueError):
    """Another process is training in this run folder."""


_held: dict[str, list] = {}  # resolved lock path -> [file descriptor, depth]
_FLAGS = (
    os.O_RDWR
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)


def open_lock_file(path: Path) -> int:
    """A descriptor of the regular file `path`, created if missing, never through a link."""
    for _ in range(100):  # another process may remove or create it between the two opens
        try:
            descriptor = os.open(path, _FLAGS | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                descriptor = os.open(path, _FLAGS)
            except FileNotFoundError:
                continue
            except OSError as error:
                if error.errno == errno.ELOOP and os.path.islink(path):
                    raise FileKindError(
                        f"run lock {str(path)!r} is a symbolic link (to "
                        f"{os.readlink(path)!r}); the lock is never opened "
                        f"through a link: remove it"
                    ) from None
                if error.errno == errno.EISDIR:
                    raise FileKindError(
                        f"run lock {str(path)!r} is a directory, not a lock file: remove it"
                    ) from None
                raise
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.close(descriptor)
            what = (
                kind_of(info.st_mode)
                if not stat.S_ISREG(info.st_mode)
                else f"a file with {info.st_nlink} names (hard links)"
            )
            raise FileKindError(
                f"run lock {str(path)!r} is {what}, not a lock file of its own: remove it"
            )
        return descriptor
    raise FileKindError(f"run lock {str(path)!r} keeps appearing and disappearing")


class RunLock:
    """`with RunLock(run_dir):` holds the run folder's lock (creating the folder if needed)."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME

    def acquire(self) -> None:
        make_folders(self.run_dir)
        key = self._key()
        if key in _held:
            _held[key][1] += 1
            return
        descriptor = open_lock_file(self.path)
        if fcntl is not None:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                owner = os.pread(descriptor, 64, 0).decode(errors="replace").strip()
                os.close(descriptor)
                raise RunLockedError(
                    f"another `satellites train` is running in {self.run_dir} (it holds "
                    f"{self.path}{', pid ' + owner if owner else ''}); wait for it to end or "
                    f"choose another --out folder"
                ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, str(os.getpid()).encode(), 0)
        _held[key] = [descriptor, 1]

    def _key(self) -> str:
        return str(self.run_dir.resolve() / LOCK_NAME)  # the folder resolved, not the file

    def release(self) -> None:
        key = self._key()
        entry = _held.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _held[key]
            os.close(entry[0])  # closing the descriptor drops the flock

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
