"""`rllib:PATH`: a policy trained with RLlib, playing in the arena like any other agent.

PATH is an RLModule saved by RLlib (``module.save_to_path(PATH)``, as
``examples/rllib_ppo_selfplay.py`` does, or the module folder of an Algorithm checkpoint,
``.../learner_group/learner/rl_module/<policy id>``) whose observation space is
`satellites_env.wrappers.masked_dict_space` (the action-masking module of RLlib's examples).
The agent builds that observation from the game, runs the module's inference forward pass and
plays the most likely legal action.

Unlike `checkpoint:PATH` (data only), RLlib saves modules with pickle: loading one runs code
from it, so load only modules you trust.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from satellites_env.agents.base import Agent, AgentSpecError
from satellites_env.core.checks import quoted, quoted_path
from satellites_env.core.game import Game
from satellites_env.observation import Observer
from satellites_env.wrappers import ACTION_MASK, OBSERVATIONS, masked_dict


class RLlibAgent(Agent):
    """The most likely legal action of an RLlib RLModule (see the module docstring)."""

    def __init__(self, path: str | Path, seed: int | None = None, threads: int | None = None):
        super().__init__(seed)
        import torch

        from training.common.policy_agent import default_threads

        path = Path(path)
        spec = quoted(f"rllib:{path}")
        try:
            is_dir = path.is_dir()
        except (OSError, ValueError) as error:  # a name too long, a loop of links, a NUL
            detail = getattr(error, "strerror", None) or error
            raise AgentSpecError(f"agent spec {spec}: cannot read the folder: {detail}") from None
        if not is_dir:
            raise AgentSpecError(
                f"agent spec {spec}: {quoted_path(path)} is not a folder "
                f"saved by RLModule.save_to_path"
            )
        try:
            from ray.rllib.core.rl_module.rl_module import RLModule
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {spec} needs RLlib: install the 'rllib' "
                f"extra (pip install 'satellites-env[rllib]'); import failed: "
                f"{error}"
            ) from None
        try:
            self.module = RLModule.from_checkpoint(str(path.absolute()))
        except Exception as error:
            raise AgentSpecError(
                f"agent spec {spec}: cannot load an RLModule from "
                f"{quoted_path(path)}: {type(error).__name__}: "
                f"{str(error)[:200]}"
            ) from None
        space: Any = getattr(self.module, "observation_space", None)
        try:
            shape = space[OBSERVATIONS].shape
            space[ACTION_MASK]
        except (KeyError, TypeError, IndexError):
            raise AgentSpecError(
                f"agent spec {spec}: the module does not observe "
                f"{{'{OBSERVATIONS}', '{ACTION_MASK}'}} (observation space "
                f"{space})"
            ) from None
        self.flatten = len(shape) == 1
        self.spec = f"rllib:{path}"
        self.source = path
        self.threads = default_threads() if threads is None else int(threads)
        self._torch = torch
        self._observers: dict[int, Observer] = {}
        # a torch RLModule is an nn.Module too; RLModule's own type has no `eval`
        self.module.eval()  # type: ignore[attr-defined]

    def act(self, game: Game) -> int:
        from ray.rllib.core.columns import Columns

        from training.common.policy_agent import torch_threads

        torch = self._torch
        observer = self._observers.setdefault(game.max_moves, Observer(game.max_moves))
        observation = masked_dict(
            observer.observe(game, game.to_move, True, copy=False), self.flatten
        )
        batch = {
            Columns.OBS: {key: torch.from_numpy(value)[None] for key, value in observation.items()}
        }
        with torch.no_grad(), torch_threads(self.threads):
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        logits = logits.numpy().astype(np.float64)
        logits[observation[ACTION_MASK] == 0] = -np.inf  # never an illegal action
        return int(np.argmax(logits))
