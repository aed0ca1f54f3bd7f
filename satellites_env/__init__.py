"""Satellites: an exact, fast PettingZoo environment for a two-player area-majority game.

>>> from satellites_env import satellites_v0
>>> env = satellites_v0.env()

Importing this package registers ``satellites/Satellites-v0`` in PettingZoo's registry (the AEC
env) and in Gymnasium's (the single-agent env of
[`satellites_env.gym_env`][satellites_env.gym_env]).
"""

import gymnasium as _gymnasium
from pettingzoo import register as _register

from . import satellites_v0
from .core import Game, IllegalActionError, NotationError

__version__ = "0.1.0"

ENV_ID = "satellites/Satellites-v0"
_register("aec", ENV_ID, entry_point="satellites_env.satellites_v0:env")

# The single-agent Gymnasium env (satellites_env.gym_env.SatellitesGymEnv), same id, in
# Gymnasium's registry: gymnasium.make(ENV_ID, opponent="random", agent_color="red").
if ENV_ID not in _gymnasium.registry:
    _gymnasium.register(ENV_ID, entry_point="satellites_env.gym_env:SatellitesGymEnv")

__all__ = ["ENV_ID", "Game", "IllegalActionError", "NotationError", "satellites_v0"]
