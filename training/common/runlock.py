"""One trainer per run folder: an exclusive, non-blocking lock on `<run>/run.lock`.

The lock is `fcntl.flock` on an open file, so the operating system drops it when the process
ends, however it ends (no stale lock after a crash or a kill). Within one process the lock is
re-entrant (the `satellites train` command holds it while it checks the folder, and
`Trainer.run` takes it again). Where `fcntl` does not exist (Windows) there is no lock.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_NAME = "run.lock"


class RunLockedError(ValueError):
    """Another process is training in this run folder."""


_held: dict[str, list] = {}  # resolved lock path -> [file descriptor, depth]


class RunLock:
    """`with RunLock(run_dir):` holds the run folder's lock (creating the folder if needed)."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME

    def acquire(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        key = str(self.path.resolve())
        if key in _held:
            _held[key][1] += 1
            return
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                owner = os.pread(descriptor, 64, 0).decode(errors="replace").strip()
                os.close(descriptor)
                raise RunLockedError(
                    f"another `satellites train` is running in {self.run_dir} (it holds "
                    f"{self.path}{', pid ' + owner if owner else ''}); wait for it to end or "
                    f"choose another --out folder") from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, str(os.getpid()).encode(), 0)
        _held[key] = [descriptor, 1]

    def release(self) -> None:
        key = str(self.path.resolve())
        entry = _held.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _held[key]
            os.close(entry[0])  # closing the descriptor drops the flock

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
