"""The agent interface and `make_agent(spec)`.

An agent sees only the position (a [`Game`][satellites_env.core.Game], which is the whole
public state of the game: Satellites has no hidden information) and returns one legal action
id for the player to move. Agents are seedable and deterministic for a seed.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

from ..core.checks import check_seed, quoted
from ..core.game import Game


class Agent(ABC):
    """Base class: `act(game)` returns a legal action id for `game.to_move`."""

    #: the spec string that builds this agent again (`random`, `mcts:200`, ...)
    spec: str = ""
    #: the file (or folder) a trained agent was loaded from; None for the others
    source: Path | None = None

    def __init__(self, seed: int | None = None):
        """`seed`: None or an integer from 0 to 2**64 - 1 (ValueError naming it otherwise)."""
        self.rng = np.random.default_rng(check_seed(seed))

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseed when `seed` is given (as in the constructor)."""
        seed = check_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, game: Game) -> int:
        """A legal action for the player to move in `game` (which must not be over)."""

    def identity(self) -> str:
        """What makes two agents the same player (a rating ladder's key): the spec, and for
        an agent loaded from a file, that file's content instead of its path (a renamed file
        is the same player, a changed one another)."""
        if self.source is None:
            return self.spec
        name = self.spec.partition(":")[0]
        return f"{name}:sha256={digest_of(self.source)}{self.settings_suffix()}"

    def settings_suffix(self) -> str:
        """The part of a file agent's identity beside its file (`:32` simulations, ...)."""
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


class AgentSpecError(ValueError):
    """An agent spec that names no known agent or has a bad argument."""


def parse_int_argument(
    spec: str, name: str, argument: str | None, default: int, most: int | None = None
) -> int:
    """The integer argument of a spec (`mcts:N`): ASCII digits only, from 1 to `most` (the
    ceiling the agent can honour), checked before the number is built, so an argument of
    any length is one short AgentSpecError naming the spec; `default` when it is empty."""
    if argument is None or argument == "":
        return default
    limit = f" up to {most:,}" if most is not None else ""
    if not (argument.isascii() and argument.isdigit()):
        raise AgentSpecError(
            f"agent spec {quoted(spec)}: {name} must be a positive integer"
            f"{limit} (ASCII digits), got {quoted(argument, 30)}"
        )
    digits = argument.lstrip("0") or "0"
    ceiling = most if most is not None else 10**18
    if len(digits) > len(str(ceiling)) or int(digits) > ceiling:
        shown = digits if len(digits) <= 30 else f"{digits[:12]}... ({len(digits)} digits)"
        raise AgentSpecError(
            f"agent spec {quoted(spec)}: at most {ceiling:,} "
            f"{name.split()[-1]} (a ceiling this agent can honour), got "
            f"{shown}"
        )
    value = int(digits)
    if value < 1:
        raise AgentSpecError(f"agent spec {quoted(spec)}: {name} must be >= 1, got {value}")
    return value


def digest_of(path: str | Path) -> str:
    """The sha256 of a file's content, or of a folder's files (their relative paths and
    contents, in sorted order)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        with open(file, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()
