"""The learners for Satellites (needs PyTorch): shared pieces in `common/`, PPO in `ppo/`.

`satellites_env` never imports this package; the `satellites train` command and
`checkpoint:PATH` agent specs load it lazily.
"""

import os as _os
import sys as _sys

from satellites_env.core import batch as _batch


def _import_torch_without_the_engines_wait_policy() -> None:
    """Import torch with the user's OpenMP settings, not the engine's.

    satellites_env.core.batch sets OMP_WAIT_POLICY=PASSIVE (unless the user did) so that
    numba's idle OpenMP threads sleep; torch's OpenMP reads the variable once, when torch is
    imported, and PASSIVE makes every operator of a multi-threaded gradient step wake its
    helper threads: the AlphaZero learner's steps took about 1.5 times as long
    (`benchmarks/az_step_threads.py --cli-order`; docs/alphazero.md, ninth round). numba reads
    it at its first parallel kernel, so the variable is back for that."""
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
