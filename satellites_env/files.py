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

Outputs are never put over what is not ours: an existing file at an output path is replaced
only when it is recognisably one this project wrote (`OURS`: the mark each kind of output
carries: `<meta name="generator" content="satellites-env">` in an HTML page, a GIF comment,
the keys of a results file or a game record), or when the user gives `--force`
(`check_output_file`'s `kind`; `refuse_folder_unless_ours` likewise for an output folder,
by the file in it that marks it: it must be new, empty, or hold that file, ours). Anything
else (the user's own page, picture or notes) is refused before any work, naming `--force`.

Output paths (`check_output_file`, `write_or_fallback`): checked before any work, and a
finished output that still cannot be written goes to a new file in the current folder (else
the temp folder), the `OutputError` saying where. Missing folders are made one at a time
(`make_folders`), so any depth works and a path too long is an OSError, never a
RecursionError.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
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
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISREG, "a regular file"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def kind_at(path: Path) -> str:
    """'a file', 'a FIFO (named pipe)', ...: what is at an existing path that is no folder."""
    mode = path.stat().st_mode
    return "a file" if stat.S_ISREG(mode) else kind_of(mode)


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
        raise FileKindError(
            f"{what} {quoted_path(path)} is a {state}symbolic link (to "
            f"{quoted_path(Path(target))}); outputs are never written through a "
            f"link: give the target path itself"
        )
    if not stat.S_ISREG(info.st_mode):
        raise FileKindError(
            f"{what} {quoted_path(path)} is {kind_of(info.st_mode)}, not a regular "
            f"file; give a file path"
        )
    return info


@contextmanager
def open_output(path: str | Path, what: str = "output file") -> Iterator[BinaryIO]:
    """`with open_output(path) as file:` write bytes to `file`; when the block ends without
    an error, the file replaces `path` at once (see the module's rules). The folder must
    exist."""
    path = Path(path)
    before = check_output(path, what)
    temporary = path.with_name(f".{path.name[:60]}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY, 0o666
    )
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
        raise FileKindError(
            f"{what} {quoted_path(path)} is {kind_of(info.st_mode)}, not a regular file"
        )

    def too_large() -> FileKindError:
        return FileKindError(
            f"{what} {quoted_path(path)} is larger than {limit:,} bytes, the most this reads"
        )

    if info.st_size > limit:
        raise too_large()
    # O_NONBLOCK: a FIFO swapped in after the check does not make open() wait for a writer.
    descriptor = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY)
    with os.fdopen(descriptor, "rb") as file:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise FileKindError(
                f"{what} {quoted_path(path)} is {kind_of(mode)}, not a regular file"
            )
        data = file.read(limit + 1)
    if len(data) > limit:
        raise too_large()
    return data


# --------------------------------------------------------------------------- ours or not

#: the mark of this project's outputs: in an HTML page's generator meta tag, a GIF's comment
GENERATOR = "satellites-env"
GENERATOR_META = f'<meta name="generator" content="{GENERATOR}">'
_HEAD_BYTES = 8192  # a mark lies in a file's first bytes (a GIF: after its colour table)
_JSON_MARK_BYTES = 256 * 1024 * 1024  # the most read to recognise one of our JSON files


def _head(path: Path) -> bytes:
    with open(path, "rb") as file:
        return file.read(_HEAD_BYTES)


def _is_our_gif(head: bytes) -> bool:
    return head[:6] in (b"GIF87a", b"GIF89a") and GENERATOR.encode() in head


def _json_with(*keys: str) -> Callable[[Path], bool]:
    def ours(path: Path) -> bool:
        data = json.loads(read_input(path, _JSON_MARK_BYTES, "output file"))
        return isinstance(data, dict) and all(key in data for key in keys)

    return ours


#: how each kind of output is recognised as ours, from the file at its path
OURS: dict[str, Callable[[Path], bool]] = {
    "html": lambda path: GENERATOR_META.encode() in _head(path),
    "gif": lambda path: _is_our_gif(_head(path)),
    "results": _json_with("agents", "games_per_pairing", "seed", "complete", "games"),
    "record": _json_with("start_spn", "moves", "players", "result"),
}


def is_ours(path: Path, kind: str) -> bool:
    """Whether the regular file at `path` is an output of `kind` (a key of `OURS`) that this
    project wrote; a file that cannot be read or parsed is not."""
    try:
        return bool(OURS[kind](path))
    except (OSError, ValueError, RecursionError):
        return False


def refuse_unless_ours(path: Path, option: str, kind: str, force: bool) -> None:
    """Refuse (OutputError) to replace the regular file at `path` unless it is ours
    (`is_ours`) or `force`: the one rule for every output file and folder."""
    if force or not path.is_file() or path.is_symlink() or is_ours(path, kind):
        return
    raise OutputError(
        f"{option} {quoted_path(path)} exists and was not written by satellites; give "
        f"another path, or --force to replace it"
    )


def refuse_folder_unless_ours(
    folder: Path, option: str, marker: str, kind: str, force: bool
) -> None:
    """Refuse (OutputError) to write into `folder` unless it is new, empty, holds our `kind`
    of file named `marker` (so an earlier run of the command made it), or `force`."""
    if force or not folder.is_dir() or not any(folder.iterdir()):
        return
    if (folder / marker).is_file() and is_ours(folder / marker, kind):
        return
    raise OutputError(
        f"{option} {quoted_path(folder)} is a folder that satellites did not write (no "
        f"{marker} of its own in it); give a new or empty folder, or --force to write "
        f"into it"
    )


# --------------------------------------------------------------------------- output paths


class OutputError(ValueError):
    """An output path refused before any work is done (a folder, a special file, a link, a
    folder that cannot be written), or an output that could only be saved elsewhere: the
    message says where it went."""


def make_folders(folder: str | Path) -> None:
    """Create `folder` and the folders above it that are missing (`mkdir -p`), one at a time
    from the top: `Path.mkdir(parents=True)` and `os.makedirs` recurse once per missing
    folder, so a path some thousand folders deep would end in a RecursionError rather than
    the OSError a caller can handle."""
    folder = Path(folder)
    missing = []
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            if not path.is_dir():
                raise


def nearest_existing(path: str | Path) -> Path:
    """The nearest of `path` and the folders above it that exists (the root at worst)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _probe_folder(folder: Path) -> None:
    """Raise OSError unless a file can be created in `folder` (checked by creating one)."""
    with tempfile.TemporaryFile(dir=folder):
        pass


def check_output_file(
    path: Path, option: str, example: str, kind: str | None = None, force: bool = False
) -> None:
    """Refuse, before any work, an output file that cannot be written.

    Args:
        path: The output file (it may not exist yet, nor the folders above it).
        option: What names it in messages (`--out`).
        example: A file name suggested when `path` is a folder (`results.json`).
        kind: What the output is (a key of `OURS`): an existing file must be one of ours.
        force: Replace an existing file even when it is not ours.

    Raises:
        OutputError: `path` is a folder, a special file (a FIFO, a device), a symbolic link,
            lies under a file, cannot be written (a path too long included), or is a file
            this project did not write (without `force`).
    """
    try:
        if path.is_dir() and not path.is_symlink():
            raise OutputError(
                f"{option} {quoted_path(path)} is a directory; give a file path "
                f"such as {quoted_path(path / example)}"
            )
        ancestor = nearest_existing(path.parent)
        if not ancestor.is_dir():
            raise OutputError(
                f"{option} {quoted_path(path)}: {quoted_path(ancestor)} is a file, not a folder"
            )
        try:
            existing = check_output(path, option)
        except FileKindError as error:
            raise OutputError(str(error)) from None
        if existing is not None and not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        if existing is not None and kind is not None:
            refuse_unless_ours(path, option, kind, force)
        _probe_folder(ancestor)
    except OSError as error:
        raise OutputError(
            f"{option} {quoted_path(path)} cannot be written: {error.strerror or error}"
        ) from None


def check_output_folder(path: Path, option: str) -> None:
    """Refuse, before any work, an output folder that cannot be created or written.

    Raises:
        OutputError: Something above `path` is a file, or the nearest existing folder above
            it cannot be written (a path too long included).
    """
    try:
        ancestor = nearest_existing(path)
        if not ancestor.is_dir():
            raise OutputError(
                f"{option} {quoted_path(path)}: {quoted_path(ancestor)} is a file, not a folder"
            )
        _probe_folder(ancestor)
    except OSError as error:
        raise OutputError(
            f"{option} {quoted_path(path)} cannot be written: {error.strerror or error}"
        ) from None


def fallback_folders() -> list[Path]:
    """Where an output that cannot be written goes instead: the current folder, then the
    temp folder."""
    return [Path.cwd(), Path(tempfile.gettempdir())]


def stamp() -> str:
    """`20260101-120000-4242`: the time and process id, for the names of fallback files."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def write_or_fallback(write: Callable[[Path], object], path: Path, option: str) -> Path:
    """Write an output, or failing that a fresh file in a fallback folder, so that nothing
    finished is lost.

    Args:
        write: Writes the output to the path it is given.
        path: Where the output goes (missing folders above it are created).
        option: What names it in messages (`--out`).

    Returns:
        `path`, once written.

    Raises:
        OutputError: `path` could not be written (too long, too deep, no permission...): the
            message says why, and where the output was saved instead (a new file in the
            current folder, else the temp folder), or that no folder could take it.
    """
    try:
        make_folders(path.parent)
        write(path)
        return path
    except OSError as error:
        problem = f"could not write {option} {quoted_path(path)}: {error.strerror or error}"
    for folder in fallback_folders():
        try:
            handle, name = tempfile.mkstemp(
                prefix=f"satellites-{path.stem[:40] or 'output'}-{stamp()}-",
                suffix=path.suffix[:20],
                dir=folder,
            )
            os.close(handle)
            write(Path(name))
        except OSError:
            continue
        raise OutputError(f"{problem}; saved it to {quoted_path(Path(name))} instead")
    raise OutputError(f"{problem}; the current and temp folders cannot be written either")
