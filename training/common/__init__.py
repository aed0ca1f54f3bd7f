"""Pieces every learner shares: the policy-value network, checkpoints, run configs, features."""
