"""Checks of the arguments users pass in, and bounded quotes of what they passed.

One rule for the whole package (README, "Errors and guarantees"): a bad argument raises a
ValueError (or one of the project's ValueError subclasses) whose message names the argument,
says what was expected and quotes at most about ``QUOTE_LIMIT`` characters of what was given
(`quoted`), so a 100 MB input never makes a 100 MB message, and a huge integer never
trips Python's limit on writing integers as text.

The ceilings: ``max_moves`` is 1 .. `satellites_env.core.board.MAX_MOVES_LIMIT`
(`satellites_env.core.board.check_max_moves`); a seed is None or 0 .. 2**64 - 1
(`check_seed`), the range every env and the batched engine can use. This module imports
nothing of the package, so that every module (the board's constants first) can use it.
"""

from __future__ import annotations

import reprlib

import numpy as np

QUOTE_LIMIT = 80  # characters of an input quoted in an error message
# characters of a file name quoted in an error message: enough for any path a user types, so
# the message says which file; only a name the system refuses anyway is cut
PATH_QUOTE_LIMIT = 1024
MAX_SEED = 2**64 - 1  # the batched engine keys its streams with a uint64 seed
_BIG_INT_BITS = 256  # longer integers are described by their size, not written out

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = QUOTE_LIMIT


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)``, cut to about `limit` characters with ``...`` (strings and bytes are
    cut before they are quoted, containers after a few items; a huge integer is described by
    its number of digits, an array by its shape and dtype); always one line."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (str, bytes)):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."
    if isinstance(value, int) and value.bit_length() > _BIG_INT_BITS:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'a negative' if value < 0 else 'an'} integer of about {digits} digits"
    try:
        text = _REPR.repr(value)
    except Exception:
        text = f"<a {type(value).__name__}>"
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."


def quoted_path(path: object) -> str:
    """A file name (a str or a Path) quoted for a message: whole up to PATH_QUOTE_LIMIT
    characters, cut beyond (see `quoted`)."""
    return quoted(str(path), PATH_QUOTE_LIMIT)


def check_int(name: str, value: object, low: int, high: int) -> int:
    """`value` as an int when it is an integer (an int or a numpy integer, not a bool) from
    `low` to `high`; otherwise ValueError naming `name` and the range."""
    if (
        isinstance(value, (int, np.integer))
        and not isinstance(value, bool)
        and low <= int(value) <= high
    ):
        return int(value)
    raise ValueError(f"{name} must be an integer from {low} to {high}, got {quoted(value)}")


def check_seed(seed: object) -> int | None:
    """`seed` as None or an int from 0 to 2**64 - 1; ValueError naming it otherwise."""
    return None if seed is None else check_int("seed", seed, 0, MAX_SEED)


__all__ = [
    "MAX_SEED",
    "PATH_QUOTE_LIMIT",
    "QUOTE_LIMIT",
    "check_int",
    "check_seed",
    "quoted",
    "quoted_path",
]
