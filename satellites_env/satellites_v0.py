"""`satellites_v0`: `env()` (wrapped like PettingZoo's classic games) and `raw_env`."""

from .env import env, raw_env

__all__ = ["env", "raw_env"]
