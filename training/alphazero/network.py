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
                  ownership: bool = False, landing_values: bool = False,
                  max_pool: bool = False, norm: str = "group",
                  global_pool: bool = False) -> PolicyValueNet:
    """A fresh network; with `seed`, its initial weights come from torch.manual_seed(seed)."""
    if seed is not None:
        torch.manual_seed(seed)
    return PolicyValueNet(channels, blocks, lookahead=0.0, ownership=ownership,
                          landing_values=landing_values, max_pool=max_pool, norm=norm,
                          global_pool=global_pool)


def network_for(model, seed: int | None = None) -> PolicyValueNet:
    """A fresh network of a config's `model:` section (an AZModelConfig): every head option
    it names, so callers do not list them again."""
    return build_network(model.channels, model.blocks, seed=seed, ownership=model.ownership,
                         landing_values=model.landing_values, max_pool=model.max_pool,
                         norm=model.norm, global_pool=model.global_pool)


def network_shape(net: PolicyValueNet) -> dict:
    return net.shape


def resolve_device(name: str) -> torch.device:
    """The torch device of a config's `device`: `auto` is cuda when torch sees a GPU, else cpu;
    asking for cuda without one is a ValueError (a run never silently falls back)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r}: torch sees no CUDA GPU here (use auto or cpu)")
    return torch.device(name)


def device_of(net: torch.nn.Module) -> torch.device:
    """Where the network's parameters live (the CPU for a network without any)."""
    first = next(net.parameters(), None)
    return first.device if first is not None else torch.device("cpu")


class Evaluator:
    """`evaluator(obs, policy_rows=None)` -> (logits, values) as float32 numpy arrays, one
    forward pass in inference mode on the network's device (the search's network call). With
    `policy_rows` (indices into obs) the logits are those rows' only: the policy heads (a
    quarter of az_quick's forward pass) skip the positions whose value alone the search needs."""

    def __init__(self, net: PolicyValueNet):
        self.net = net
        self.device = device_of(net)

    @torch.inference_mode()
    def __call__(self, obs: np.ndarray, policy_rows: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        self.net.eval()
        x = torch.from_numpy(obs).to(self.device)
        if policy_rows is None or len(policy_rows) == len(obs):
            logits, values = self.net(x)
        else:
            rows = torch.from_numpy(np.asarray(policy_rows, dtype=np.int64)).to(self.device)
            logits, values, _ = self.net.forward_all(x, rows)
        return logits.float().cpu().numpy(), values.float().cpu().numpy()
