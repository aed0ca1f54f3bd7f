"""The league: past networks (and fixed networks such as exploiters) that a share of the
AlphaZero learner's self-play games are played against, chosen by prioritised fictitious
self-play (PFSP, AlphaStar: Vinyals et al., Nature 2019).

Every `league.snapshot_every` iterations a frozen copy of the learner's network joins the
league (the oldest copy leaves beyond `league.size`); the networks of `league.opponents`
(checkpoint files, e.g. exploiters trained by `satellites exploit`) are members for the whole
run. A new self-play game is, with probability `league.share`, against a member drawn with
weight f(p), p the learner's score against it so far (wins + draws / 2 over games, with one
win and one loss of prior so that a new member counts as even):

* `hard`: f(p) = (1 - p)^2, the members that beat the learner, most (AlphaStar's f_hard);
* `variance`: f(p) = p (1 - p), the members of the learner's strength;
* `uniform`: f(p) = 1, fictitious self-play.

The member plays one colour with its own network and the run's search, its searches in the
same batch as the learner's (`BatchedSearch.step` with a route); only the learner's positions
are stored. The learner (this class) keeps the members and their results and checkpoints them;
the generators get the members' weights and the draw's probabilities with the learner's
weights (`broadcast`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from satellites_env.core.checks import quoted

from ..common.checkpoint import CheckpointError, are_counts, check_shape, load_weights
from ..common.network import PolicyValueNet

#: the PFSP weightings `league.weighting` names
WEIGHTINGS = ("hard", "variance", "uniform")


@dataclass
class Member:
    """A league member: its `name` (`iteration-N` for a snapshot, the file for a fixed one),
    network `shape` and `weights` (a CPU state dict), and the learner's results against it."""

    name: str
    shape: dict
    weights: dict
    fixed: bool = False  # a league.opponents network: never leaves
    games: int = 0
    wins: int = 0  # the learner's
    draws: int = 0

    @property
    def score(self) -> float:
        """The learner's score against this member, with one win and one loss of prior."""
        return (self.wins + 0.5 * self.draws + 1.0) / (self.games + 2.0)


def pfsp_weights(scores: np.ndarray, weighting: str) -> np.ndarray:
    """The PFSP weight of each member from the learner's score against it (module docstring)."""
    if weighting == "hard":
        return (1.0 - scores) ** 2
    if weighting == "variance":
        return scores * (1.0 - scores)
    if weighting == "uniform":
        return np.ones_like(scores)
    raise ValueError(f"league weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")


class League:
    """The members and the learner's results against them (module docstring)."""

    def __init__(self, size: int, weighting: str):
        self.size, self.weighting = size, weighting
        self.members: list[Member] = []
        self.version = 0  # changes whenever a member joins or leaves

    def add(self, member: Member) -> None:
        """`member` joins; the oldest snapshot leaves when there are more than `size`."""
        if any(m.name == member.name for m in self.members):
            raise ValueError(f"the league has a member named {member.name!r} already")
        self.members.append(member)
        snapshots = [m for m in self.members if not m.fixed]
        if len(snapshots) > self.size:
            self.members.remove(snapshots[0])
        self.version += 1

    def probabilities(self) -> np.ndarray:
        """The chance of each member (in order) to be drawn for a league game."""
        if not self.members:
            return np.zeros(0)
        weights = pfsp_weights(np.array([m.score for m in self.members]), self.weighting)
        total = weights.sum()
        return weights / total if total > 0 else np.full(len(weights), 1.0 / len(weights))

    def record(self, results: dict[str, list[int]]) -> None:
        """Add the generators' results: {member name: [games, learner wins, draws]}; the
        results of a member that has left since are dropped."""
        by_name = {m.name: m for m in self.members}
        for name, (games, wins, draws) in results.items():
            if name in by_name:
                member = by_name[name]
                member.games += games
                member.wins += wins
                member.draws += draws

    def broadcast(self) -> dict:
        """What the generators need: {"version", "members": [(name, shape, weights)],
        "probabilities"} (the weights are the members' own: the receiver copies them)."""
        return {
            "version": self.version,
            "members": [(m.name, m.shape, m.weights) for m in self.members],
            "probabilities": self.probabilities(),
        }

    # ------------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict:
        return {
            "version": self.version,
            "members": [
                {
                    "name": m.name,
                    "shape": dict(m.shape),
                    "weights": m.weights,
                    "fixed": m.fixed,
                    "games": m.games,
                    "wins": m.wins,
                    "draws": m.draws,
                }
                for m in self.members
            ],
        }

    def load_state_dict(self, state: Any, path: str | Path) -> None:
        """The members of a checkpoint, each field checked (damage is a CheckpointError)."""

        def bad(what: str) -> CheckpointError:
            return CheckpointError(f"checkpoint {str(path)!r}: league {what}"[:300])

        if not isinstance(state, dict) or not isinstance(state.get("members"), list):
            raise bad("must be a mapping with a list of members")
        version = state.get("version")
        if type(version) is not int or not 0 <= version < 2**62:
            raise bad(f"version must be a non-negative int, got {version!r}")
        members = []
        for item in state["members"]:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise bad("member must be a mapping with a name")
            counts = [item.get(key) for key in ("games", "wins", "draws")]
            if not are_counts(counts, below=2**62) or counts[1] + counts[2] > counts[0]:
                raise bad(
                    f"member {item['name']!r}: games, wins and draws must be counts "
                    f"with wins + draws <= games, got {counts}"
                )
            if type(item.get("fixed")) is not bool:
                raise bad(f"member {item['name']!r}: fixed must be a bool")
            shape = check_shape(item.get("shape"), path)
            if shape.pop("lookahead", 0.0):
                raise bad(f"member {item['name']!r}: a network with PPO's lookahead prior")
            # filled once into a network of its shape: names and shapes checked here, not in
            # a generator when the member first plays
            load_weights(
                PolicyValueNet(**shape),
                item.get("weights"),
                path,
                f"league member {quoted(item['name'])}",
            )
            members.append(Member(item["name"], shape, item["weights"], item["fixed"], *counts))
        if len({m.name for m in members}) != len(members):
            raise bad("names a member twice")
        self.members, self.version = members, version
