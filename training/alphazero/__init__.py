"""Gumbel AlphaZero for Satellites: batched array-tree Gumbel MCTS in numba (`search`),
self-play with playout-cap randomisation (`selfplay`), a replay buffer with the 8 board
symmetries (`replay`, `symmetry`), the network (`network`), its agents (`agent`) and the
learner (`trainer`). The config is `config.AZConfig`.
"""
