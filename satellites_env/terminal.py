"""The terminal: the console every command prints on, progress bars, and single key presses.

`console` (standard output) and `errors` (standard error) are the rich consoles of the
`satellites` command; `say` prints a line that is never read as markup, and `progress_bar`
is the bar its long steps show.

`read_key` returns a key name (``"right"``, ``"left"``, ``"home"``, ``"end"``,
``"space"``, ``"enter"``, ``"escape"``, or the character typed) without waiting for Enter,
for `satellites replay` stepping through a game. It needs a terminal on standard input
(`interactive`); elsewhere the caller prints instead of stepping. Ctrl-C raises
KeyboardInterrupt as usual; Ctrl-D reads as ``"eof"``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

# Long messages stay on one line (greppable); tables keep their columns when piped to a file.
console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, soft_wrap=True, highlight=False)


class CliError(ValueError):
    """A user error found by the command line itself (an output path, a refused folder...)."""


def say(message: str) -> None:
    """Print a plain line: text from users, files or errors is never read as rich markup."""
    console.print(message, markup=False, highlight=False)


def progress_bar(
    label: str = "{task.description}", *columns: ProgressColumn, **options: Any
) -> Progress:
    """A progress bar on `console`: the label, the bar, done of total, `columns`, the time
    taken and the time left (rich's estimate from the speed so far).

    Args:
        label: The text before the bar (a rich format string; the default is the task's
            description).
        *columns: More columns after the count (a status text, say).
        **options: Passed to rich's `Progress` (`transient`, `disable`, `console`,
            `speed_estimate_period`).
    """
    options.setdefault("console", console)
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        *columns,
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        **options,
    )


_SEQUENCES = {
    "[A": "up",
    "[B": "down",
    "[C": "right",
    "[D": "left",
    "[H": "home",
    "[F": "end",
    "OH": "home",
    "OF": "end",
    "[1~": "home",
    "[4~": "end",
    "[7~": "home",
    "[8~": "end",
    "[5~": "pageup",
    "[6~": "pagedown",
}
_PLAIN = {
    " ": "space",
    "\r": "enter",
    "\n": "enter",
    "\x1b": "escape",
    "\x04": "eof",
    "\x7f": "backspace",
}


def interactive() -> bool:
    """True when standard input and output are both terminals (keys can be read)."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def _name(text: str) -> str:
    if text == "\x03":
        raise KeyboardInterrupt
    if text.startswith("\x1b") and len(text) > 1:
        return _SEQUENCES.get(text[1:], "escape")
    return _PLAIN.get(text, text)


def read_key() -> str:
    """Wait for one key press and return its name (see the module docstring)."""
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import msvcrt

        char = msvcrt.getwch()
        if char in ("\x00", "\xe0"):  # arrows and Home/End come as two characters
            return {"M": "right", "K": "left", "G": "home", "O": "end", "H": "up", "P": "down"}.get(
                msvcrt.getwch(), "other"
            )
        return _name(char)
    import select
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd, termios.TCSANOW)  # keep keys typed ahead (TCSAFLUSH would drop them)
        text = os.read(fd, 1).decode("utf-8", "replace")
        if text == "\x1b":  # an escape sequence follows at once; a lone Esc does not
            while select.select([fd], [], [], 0.05)[0]:
                text += os.read(fd, 1).decode("utf-8", "replace")
                if len(text) > 2 and (text[-1].isalpha() or text[-1] == "~"):
                    break
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    return _name(text)
