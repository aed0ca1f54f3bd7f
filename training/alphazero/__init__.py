"""Gumbel AlphaZero for Satellites: batched array-tree Gumbel MCTS in numba, self-play with
playout-cap randomisation, a replay buffer with the 8 board symmetries, and the trainer.

Entry points: :class:`AZConfig` / :func:`load_az_config` (config), :class:`AZTrainer`
(``AZTrainer(config, run_dir, resume=False, console=None).run()``), :class:`AZAgent`
(search, ``az:PATH[:SIMS]``) and :class:`AZPolicyAgent` (raw policy). See docs/alphazero.md.
"""

from .config import AZConfig, AZConfigError, az_config_from_dict, load_az_config

__all__ = ["AZAgent", "AZConfig", "AZConfigError", "AZPolicyAgent", "AZTrainer",
           "az_config_from_dict", "load_az_config"]


def __getattr__(name):  # torch-heavy parts load lazily
    if name in ("AZAgent", "AZPolicyAgent"):
        from . import agent

        return getattr(agent, name)
    if name == "AZTrainer":
        from .trainer import AZTrainer

        return AZTrainer
    raise AttributeError(name)
