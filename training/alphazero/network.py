"""The network of the AlphaZero learner and its batched evaluator.

It is :class:`training.common.network.PolicyValueNet` without the lookahead prior
(``lookahead=0``): observation planes in, logits over the 3217 actions (a spatial head that
follows the action encoding) and a value in [-1, 1] out. Nothing else goes in: no heuristic,
no lookahead features. The checkpoint therefore also loads as a plain ``checkpoint:PATH``
policy.
"""

from __future__ import annotations

import numpy as np
import torch

from training.common.network import PolicyValueNet


def build_network(channels: int, blocks: int, seed: int | None = None,
                  ownership: bool = False, landing_values: bool = False) -> PolicyValueNet:
    """A fresh network; with `seed`, its initial weights come from torch.manual_seed(seed)."""
    if seed is not None:
        torch.manual_seed(seed)
    return PolicyValueNet(channels, blocks, lookahead=0.0, ownership=ownership,
                          landing_values=landing_values)


def network_shape(net: PolicyValueNet) -> dict:
    return net.shape


class Evaluator:
    """`evaluator(obs)` -> (logits, values) as float32 numpy arrays, one forward pass in
    inference mode (the search's network call)."""

    def __init__(self, net: PolicyValueNet):
        self.net = net

    @torch.inference_mode()
    def __call__(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.net.eval()
        logits, values = self.net(torch.from_numpy(obs))
        return logits.numpy(), values.numpy()
