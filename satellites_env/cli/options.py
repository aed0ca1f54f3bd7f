"""The argument types and option adders that several `satellites` commands share: ranged
integers and numbers, Ray addresses, paths, and `--ray`, `--force`, `--seed` and `--max-moves`."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from ..core.board import DEFAULT_MAX_MOVES
from ..placement import check_address

#: what `add_subparsers` returns: each command group adds its commands to it
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high` (argparse names the option)."""

    def parse(text: str) -> int:
        value = None
        if text.strip().lstrip("+-").isascii() and text.strip().lstrip("+-").isdigit():
            value = int(text)
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r}"
            )
        return value

    return parse


def float_in(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number with low < value <= high."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low < value <= high):
            raise argparse.ArgumentTypeError(
                f"expected a number greater than {low:g} and at most {high:g}, got {text!r}"
            )
        return value

    return parse


def ray_address(text: str) -> str:
    """An argparse type: a Ray address (`auto`, `HOST:PORT`, `ray://HOST:PORT`); "" (what
    `--ray` alone gives) starts a local Ray."""
    if text == "":
        return text
    text = text.strip()
    try:
        check_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def path_arg(text: str) -> Path:
    """An argparse type: a file or folder path; an empty one (which would mean the current
    folder) is refused."""
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return Path(text)


def add_ray_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--ray [ADDRESS]`: alone, "" (a local Ray); with an address, that cluster."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        type=ray_address,
        help=help_text,
    )


def add_force(parser: argparse.ArgumentParser, outputs: str) -> None:
    """`--force`: replace `outputs` even when satellites did not write what is there."""
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"replace {outputs} even when it is a file (or folder) that satellites did not "
        "write; without it, only new paths and satellites' own outputs are replaced",
    )


GAMES = int_in(1, 1_000_000)
SEED = int_in(0, 2**32 - 1)
WORKERS = int_in(1, 256)
MAX_MOVES = int_in(1, 1_000_000)
FRAME_SIZE = int_in(64, 4096)


def FPS(text: str) -> float:
    """An argparse type: a GIF frame rate, MIN_FPS to MAX_FPS (render.files)."""
    from ..render.files import check_fps

    try:
        return check_fps(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            "expected " + str(error).removeprefix("fps must be ")
        ) from None


PORT = int_in(0, 65535)
MINUTES = float_in(0, 10**6)


def add_seed(parser: argparse.ArgumentParser, of: str) -> None:
    """`--seed`, default 0: the seed `of` what (for the help)."""
    parser.add_argument(
        "--seed", type=SEED, default=0, help=f"seed of {of}, 0-4294967295 (default 0)"
    )


def add_max_moves(parser: argparse.ArgumentParser) -> None:
    """`--max-moves`, the move cap (R20), default DEFAULT_MAX_MOVES."""
    parser.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=DEFAULT_MAX_MOVES,
        help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})",
    )


#: the help's note on the first run of a command that searches
COMPILE_NOTE = (
    "The search kernels are compiled on first use, then cached for later runs (the times: "
    "the README's table of times)."
)
#: the agent specs, as the helps list them
AGENT_SPECS = (
    "random, greedy, mcts:N, openspiel-mcts:N[:heuristic], checkpoint:PATH, az:PATH[:SIMS], "
    "rllib:PATH"
)
