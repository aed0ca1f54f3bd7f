"""PettingZoo wrappers that reshape what `satellites_v0` shows, for other libraries' models.

`MaskedDictObservation` gives the observation the form RLlib's action-masking RLModule
(`ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule`)
reads: ``{"observations": planes, "action_mask": float32 mask}``. The planes stay
(10, 10, 22) for a convolutional model, or are flattened to (2200,) with ``flatten=True``
for a fully connected one; the mask becomes float32 (RLlib takes its logarithm). Nothing
here imports Ray:

    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from satellites_env import satellites_v0
    from satellites_env.wrappers import MaskedDictObservation

    env = PettingZooEnv(MaskedDictObservation(satellites_v0.env(), flatten=True))
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from .core.board import N_ACTIONS
from .core.checks import quoted
from .observation import OBSERVATION_SHAPE

OBSERVATIONS, ACTION_MASK = "observations", "action_mask"


def masked_dict_space(flatten: bool = False) -> spaces.Dict:
    """The observation space of `MaskedDictObservation`."""
    shape = (int(np.prod(OBSERVATION_SHAPE)),) if flatten else OBSERVATION_SHAPE
    return spaces.Dict(
        {
            OBSERVATIONS: spaces.Box(0.0, 1.0, shape, dtype=np.float32),
            ACTION_MASK: spaces.Box(0.0, 1.0, (N_ACTIONS,), dtype=np.float32),
        }
    )


def masked_dict(observation: dict, flatten: bool = False) -> dict[str, np.ndarray]:
    """`satellites_v0`'s ``{"observation", "action_mask"}`` as ``{"observations",
    "action_mask"}`` (new arrays): the one conversion, used by the wrapper and by agents that
    feed such a model from a Game."""
    planes = np.asarray(observation["observation"], dtype=np.float32)
    return {
        OBSERVATIONS: planes.reshape(-1).copy() if flatten else planes.copy(),
        ACTION_MASK: np.asarray(observation["action_mask"], dtype=np.float32),
    }


class MaskedDictObservation(BaseWrapper):
    """`satellites_v0.env()` with ``{"observations", "action_mask"}`` observations (see the
    module docstring); actions, rewards, the illegal-action rule and infos are unchanged."""

    def __init__(self, env: AECEnv, flatten: bool = False):
        if not isinstance(flatten, (bool, np.bool_)):
            raise ValueError(f"flatten must be True or False, got {quoted(flatten)}")
        super().__init__(env)
        self.flatten = bool(flatten)
        self._space = masked_dict_space(self.flatten)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        observation = self.env.observe(agent)
        return None if observation is None else masked_dict(observation, self.flatten)

    def __str__(self) -> str:
        return f"MaskedDictObservation<{self.env}>"
