"""Satellites: an exact, fast PettingZoo environment for a two-player area-majority game.

>>> from satellites_env import satellites_v0
>>> env = satellites_v0.env()

Importing this package registers ``satellites/Satellites-v0`` in PettingZoo's registry.
"""

from pettingzoo import register as _register

from . import satellites_v0
from .core import Game, IllegalActionError, NotationError

__version__ = "0.1.0"

ENV_ID = "satellites/Satellites-v0"
_register("aec", ENV_ID, entry_point="satellites_env.satellites_v0:env")

__all__ = ["ENV_ID", "Game", "IllegalActionError", "NotationError", "satellites_v0"]
