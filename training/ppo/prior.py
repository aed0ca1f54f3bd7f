"""PPO's hand-made prior: one-ply lookahead values per action added to the network's logits.

For each legal action, the value for the mover of the position it leads to, exactly as the
`greedy` baseline scores it (`satellites_env.agents.lookahead.action_values`: +-10 for a
won or lost game, 0 for a draw, the heuristic in (-1, 1) otherwise; a displacement is worth
its best push). [`PriorNet`][training.ppo.prior.PriorNet] (`model.lookahead > 0`) is the AlphaZero
network plus a learned multiple of these, its own heads starting at zero: it starts from greedy-like
play and learns what one ply of lookahead misses. Such a policy needs the game, not only the
observation planes (one lookahead costs about the price of one greedy move).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from satellites_env.agents.lookahead import Lookahead
from satellites_env.core.engine import N_ACTIONS
from satellites_env.core.game import Game

from ..common.network import PolicyValueNet, mask_logits
from ..common.policy_agent import PolicyAgent


class LookaheadFeatures:
    """Reusable buffers for `fill`; one instance per thread of play."""

    def __init__(self):
        self._lookahead = Lookahead()
        self._values = np.empty(N_ACTIONS, dtype=np.float64)

    def fill(self, game: Game, mask: np.ndarray, out: np.ndarray) -> None:
        """out[a] = lookahead value of legal action a (mask[a] != 0), 0 for illegal ones."""
        out[:] = 0.0
        legal = np.flatnonzero(mask)
        values = self._values[: len(legal)]
        self._lookahead.values(game, legal, values)
        out[legal] = values

    def of(self, game: Game, mask: np.ndarray) -> np.ndarray:
        """A fresh (3217,) float32 vector of lookahead values."""
        out = np.empty(N_ACTIONS, dtype=np.float32)
        self.fill(game, mask, out)
        return out


class PriorNet(PolicyValueNet):
    """The network with the lookahead prior: logits + `lookahead_weight` x the lookahead values
    (B, 3217) of the positions, a learned scalar that starts at `lookahead`."""

    def __init__(
        self,
        channels: int = 64,
        blocks: int = 4,
        lookahead: float = 10.0,
        landing_values: bool = False,
        norm: str = "group",
    ):
        super().__init__(channels, blocks, landing_values, norm)
        self.lookahead = float(lookahead)
        self.lookahead_weight = nn.Parameter(torch.tensor(self.lookahead))
        # The learned logits start at exactly 0, so the first policy is softmax of the scaled
        # lookahead values: greedy-like play instead of random-init noise.
        for head in (self.move_head, self.landing_head, self.push_head, self.pass_head):
            # the heads are convolutions and a linear layer, each with a bias
            assert isinstance(head, (nn.Conv2d, nn.Linear)) and head.bias is not None
            nn.init.zeros_(head.weight)
            nn.init.zeros_(head.bias)
        self._features: LookaheadFeatures | None = None

    @property
    def shape(self) -> dict:
        return {**super().shape, "lookahead": self.lookahead}

    def forward(
        self, observation: torch.Tensor, lookahead: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw logits with the prior added, and values; `lookahead` (B, 3217) is required."""
        if lookahead is None:
            raise ValueError(
                "this network adds one-ply lookahead values to its logits: pass "
                "lookahead (B, 3217), see training.ppo.prior"
            )
        logits, values = super().forward(observation)
        return logits + self.lookahead_weight * lookahead, values

    def masked_forward(
        self, observation: torch.Tensor, mask: torch.Tensor, lookahead: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self(observation, lookahead)
        return mask_logits(logits, mask), value

    def lookahead_values(self, game: Game, mask: np.ndarray) -> torch.Tensor:
        """The (1, 3217) lookahead values of `game` (its legal actions: `mask`)."""
        if self._features is None:
            self._features = LookaheadFeatures()
        return torch.from_numpy(self._features.of(game, mask))[None]


class PriorAgent(PolicyAgent):
    """The raw policy of a network with the prior (`checkpoint:PATH` of such a run): each move
    adds the game's lookahead values to the logits, so it needs the game, not only the planes
    (`policy` is a ValueError)."""

    planes_only = False
    net: PriorNet

    def _logits(
        self, x: torch.Tensor, mask: torch.Tensor, game: Game | None, legal: np.ndarray
    ) -> torch.Tensor:
        lookahead = None if game is None else self.net.lookahead_values(game, legal).to(x.device)
        logits, _ = self.net.masked_forward(x, mask, lookahead)
        return logits


def policy_agent(net: PolicyValueNet, **options: Any) -> PolicyAgent:
    """The raw-policy agent of a network (`PolicyAgent`'s options): a `PriorAgent` for one
    with the prior."""
    return (PriorAgent if isinstance(net, PriorNet) else PolicyAgent)(net, **options)


def network_from_shape(shape: dict) -> PolicyValueNet:
    """A blank network of a checkpoint's (checked) `model_shape`: PPO's with a prior
    (`lookahead` > 0) or AlphaZero's."""
    shape = dict(shape)
    lookahead = shape.pop("lookahead", 0.0)
    return PriorNet(lookahead=lookahead, **shape) if lookahead else PolicyValueNet(**shape)


def masked_logits(
    net: PolicyValueNet,
    observation: torch.Tensor,
    mask: torch.Tensor,
    lookahead: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`net.masked_forward` with the lookahead values where the network has the prior."""
    if isinstance(net, PriorNet):
        return net.masked_forward(observation, mask, lookahead)
    return net.masked_forward(observation, mask)
