"""Special files for the tests of outputs and inputs: FIFOs, sockets, device nodes, links,
and a guard that fails a test instead of letting it hang on one."""

from __future__ import annotations

import os
import socket
import stat
import threading
from pathlib import Path

import pytest


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def unix_socket(path: Path) -> Path:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays
    return path


def char_device(path: Path) -> Path:
    """A node like /dev/null at `path` (needs CAP_MKNOD: root, as in CI's container)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def link_to_file(path: Path) -> Path:
    """A symbolic link at `path` to a regular file beside it holding 'precious'."""
    target = path.with_name(path.name + ".target")
    target.write_text("precious")
    path.symlink_to(target)
    return path


def dangling_link(path: Path) -> Path:
    path.symlink_to(path.with_name(path.name + ".nowhere"))
    return path


#: (name, maker) of every kind of path an output must not be written to
SPECIAL = [
    ("fifo", fifo),
    ("socket", unix_socket),
    ("device", char_device),
    ("link", link_to_file),
    ("dangling link", dangling_link),
]


def unchanged(path: Path, before: os.stat_result) -> bool:
    """`path` is still the same node (type and inode), and a link's target is untouched."""
    after = os.lstat(path)
    same = (
        stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    )
    if stat.S_ISLNK(after.st_mode):
        target = path.with_name(path.name + ".target")
        nowhere = path.with_name(path.name + ".nowhere")
        same = (
            same
            and not nowhere.exists()
            and (not target.exists() or target.read_text() == "precious")
        )
    return same


def finishes(work, seconds: float = 20):
    """Run `work()` in a thread; {"value": ...} or {"error": ...}, failing if it blocks."""
    outcome = {}

    def target():
        try:
            outcome["value"] = work()
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    return outcome
