"""The learners for Satellites (needs PyTorch): Gumbel AlphaZero in `alphazero/`, PPO in
`ppo/`, what they share (the config system, the run loop, checkpoints) in `common/`, and
self-play on Ray in `distributed/`.

`satellites_env` never imports this package: the `satellites train` command and the agent
specs `checkpoint:`, `az:` and `rllib:` (registered through the `satellites.agents` entry
points, `training.agents`) load it when they are used.
"""

import os as _os
import sys as _sys

from satellites_env.core import batch as _batch


def _import_torch_without_the_engines_wait_policy() -> None:
    """Import torch with the user's OpenMP settings, not the engine's.

    satellites_env.core.batch sets OMP_WAIT_POLICY=PASSIVE (unless the user did) so that
    numba's idle OpenMP threads sleep. Torch's OpenMP reads the variable once, when torch is
    imported, and under PASSIVE every operator of a multi-threaded gradient step has to wake
    its helper threads: the learner's steps take about 1.5 times as long. numba reads the
    variable at its first parallel kernel, so it is set back for that."""
    if "torch" in _sys.modules or not _batch.WAIT_POLICY_SET_HERE:
        return
    policy = _os.environ.pop("OMP_WAIT_POLICY", None)
    try:
        import torch  # noqa: F401
    except ImportError:  # no train extra: the learners' own imports say so
        pass
    finally:
        if policy is not None:
            _os.environ["OMP_WAIT_POLICY"] = policy


_import_torch_without_the_engines_wait_policy()

# The learners' configs register themselves with the config system (torch-free modules).
from .alphazero import config as _alphazero_config  # noqa: E402, F401
from .ppo import config as _ppo_config  # noqa: E402, F401
