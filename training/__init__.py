"""The learners for Satellites (needs PyTorch): Gumbel AlphaZero in `alphazero/`, PPO in
`ppo/`, what they share (the config system, the run loop, checkpoints) in `common/`, and
self-play on Ray in `distributed/`.

`satellites_env` never imports this package: the `satellites train` command and the agent
specs `checkpoint:`, `az:` and `rllib:` (registered through the `satellites.agents` entry
points, `training.agents`) load it when they are used.
"""

# The learners' configs register themselves with the config system (torch-free modules).
from .alphazero import config as _alphazero_config  # noqa: F401
from .ppo import config as _ppo_config  # noqa: F401
