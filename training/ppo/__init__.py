"""PPO self-play: rollouts (`selfplay`), the update (`update`), the run loop (`trainer`)."""
