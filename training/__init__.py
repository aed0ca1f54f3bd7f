"""Self-play training, checkpoints and evaluation for Satellites (the trainer needs PyTorch)."""
