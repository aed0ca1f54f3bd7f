"""The pairing rule: what game i of a pairing (a, b) seeded `seed` is, wherever it is played.

Game i starts from the R4 set-up of seed `seed + i // 2` (games 2j and 2j+1 share a set-up,
colours swapped), `a` is red in the even games, and each agent is reseeded before the game
from (seed, i). The arena, the ladder and the trainer's evaluations (batched or not) all read
it from here, so a game has the same set-up, colours and agent seeds whoever plays it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PairingGame:
    """Game `index` of a pairing: its set-up seed, the seeds `a` and `b` are reset with, and
    whether `a` is red."""

    index: int
    setup_seed: int
    seed_a: int
    seed_b: int
    a_is_red: bool

    def colors(self, a: str, b: str) -> dict[str, str]:
        """{"red": ..., "blue": ...}: who of `a` and `b` plays which colour."""
        return {"red": a, "blue": b} if self.a_is_red else {"red": b, "blue": a}


def pairing_game(i: int, seed: int) -> PairingGame:
    """Game `i` of the pairing seeded `seed` (the module docstring's rule)."""
    return PairingGame(
        index=i,
        setup_seed=seed + i // 2,
        seed_a=10_000 * (seed + i) + 7,
        seed_b=10_000 * (seed + i) + 8,
        a_is_red=i % 2 == 0,
    )
