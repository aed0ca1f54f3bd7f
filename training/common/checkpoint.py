"""Checkpoints (atomic save, checked load) and the `checkpoint:PATH` agent.

A checkpoint is one `torch.save` file holding the network weights and shape, the optimizer,
the run config, the step counters, the RNG states, the opponent pool and the evaluation
history: everything to resume a run exactly, and to play with the policy.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch

from satellites_env.agents.base import Agent
from satellites_env.core.board import N_ACTIONS
from satellites_env.core.game import Game
from satellites_env.core.rules import new_scratch
from satellites_env.observation import N_PLANES, observe

from .features import LookaheadFeatures
from .network import PolicyValueNet, sample_masked

FORMAT = "satellites-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt or does not match this code."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write atomically: a crash mid-write leaves the previous checkpoint intact."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "version": VERSION, "planes": N_PLANES, "actions": N_ACTIONS,
               **payload}
    temporary = path.with_name(path.name + ".tmp")
    torch.save(payload, temporary)
    os.replace(temporary, path)
    return path


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a checkpoint; every failure is a CheckpointError naming the problem."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, OSError) as error:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a torch file: "
                              f"{error}") from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a satellites checkpoint (no "
                              f"format={FORMAT!r} entry)")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {str(path)!r} has format version "
                              f"{payload.get('version')}; this code reads version {VERSION}")
    if payload.get("planes") != N_PLANES or payload.get("actions") != N_ACTIONS:
        raise CheckpointError(
            f"checkpoint {str(path)!r} was made for {payload.get('planes')} observation planes "
            f"and {payload.get('actions')} actions; this code has {N_PLANES} and {N_ACTIONS}")
    for key in ("model", "model_shape"):
        if key not in payload:
            raise CheckpointError(f"checkpoint {str(path)!r} has no {key!r} entry")
    return payload


def network_from_checkpoint(payload: dict[str, Any], path: str | Path = "?") -> PolicyValueNet:
    shape = payload["model_shape"]
    net = PolicyValueNet(shape["channels"], shape["blocks"], shape.get("lookahead", 0.0))
    try:
        net.load_state_dict(payload["model"])
    except RuntimeError as error:
        raise CheckpointError(f"checkpoint {str(path)!r} weights do not fit the network "
                              f"{shape}: {error}") from error
    net.eval()
    return net


class PolicyAgent(Agent):
    """Plays a network's policy: the most likely legal action, or a sample when `sample`."""

    def __init__(self, net: PolicyValueNet, sample: bool = False, seed: int | None = None,
                 spec: str = "policy"):
        super().__init__(seed)
        self.net = net.eval()
        self.sample = sample
        self.spec = spec
        self._scratch = new_scratch()
        self._features = LookaheadFeatures() if net.uses_lookahead else None
        self._generator = torch.Generator().manual_seed(int(self.rng.integers(2**31)))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self._generator.manual_seed(int(self.rng.integers(2**31)))

    @torch.no_grad()
    def act(self, game: Game) -> int:
        obs = observe(game.state, game.to_move, game.max_moves, self._scratch)
        legal = game.legal_mask()
        lookahead = (torch.from_numpy(self._features.of(game, legal))[None]
                     if self._features else None)
        logits, _ = self.net.masked_forward(torch.from_numpy(obs)[None],
                                            torch.from_numpy(legal.copy())[None], lookahead)
        if self.sample:
            return int(sample_masked(logits, self._generator).item())
        return int(logits.argmax(-1).item())


class CheckpointAgent(PolicyAgent):
    """`checkpoint:PATH` (most likely action) or `checkpoint:PATH:sample` (sampled)."""

    @classmethod
    def from_spec(cls, argument: str, seed: int | None = None) -> "CheckpointAgent":
        path, sample = argument, False
        for suffix, flag in ((":sample", True), (":greedy", False)):
            if argument.endswith(suffix):
                path, sample = argument[: -len(suffix)], flag
        payload = load_checkpoint(path)
        return cls(network_from_checkpoint(payload, path), sample=sample, seed=seed,
                   spec=f"checkpoint:{argument}")

