"""Policy-value network over the observation planes, with masked action distributions.

The policy head is spatial and matches the action encoding (RULES.md section 8) directly:
a 1x1 convolution gives 32 logits per cell (8 directions x 4 distances) and, flattened
cell-major, these are exactly the move ids `cell * 32 + direction * 4 + (k - 1)`. Each move
also gets the logit of its landing cell from a second 1x1 map, gathered through the board's
ray table: what a move does depends mostly on where it lands (a legal move landing next to an
opponent is a connection), and this way the network can say so directly. The 16 push logits are
read at the cell the displaced satellite waits on (the `pushed` plane), and the pass logit
comes from pooled features. Illegal actions get -inf, so they are never sampled.

Optionally (`lookahead > 0`) each logit also gets `lookahead_weight` x the action's one-ply
lookahead value (:mod:`training.features`), a learned scalar that starts at `lookahead`:
the policy then starts near the greedy baseline and the network learns the correction.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from satellites_env.core.board import N_ACTIONS, N_CELLS, N_PUSH_ACTIONS, RAY
from satellites_env.observation import N_PLANES, PLANE_INDEX
from training.common.config import NORMS

MOVES_PER_CELL = 32
PUSHED_PLANE = PLANE_INDEX["pushed"]
# Landing cell of every move action (off-board moves point at a padding cell; they are
# never legal, so their logit does not matter).
LANDING = torch.from_numpy(RAY.reshape(-1).copy()).where(
    torch.from_numpy(RAY.reshape(-1).copy()) >= 0, torch.tensor(N_CELLS))
LANDING_BY_CELL = LANDING.view(N_CELLS, MOVES_PER_CELL)


def norm_layer(channels: int, norm: str) -> nn.Module:
    """The normalisation after a trunk convolution: GroupNorm for `group`, none for `none`."""
    return nn.GroupNorm(8, channels) if norm == "group" else nn.Identity()


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions and a skip. `norm="group"`: GroupNorm after each convolution.
    `norm="none"` (SkipInit, De & Smith 2020): biases instead, and the residual branch scaled
    by a learned scalar that starts at 0, so each block starts as the identity. On a CPU the
    norm-free trunk is much faster: the trunk runs channels-last (the observation's layout),
    where torch's GroupNorm is slow (`benchmarks/az_trunk.py`)."""

    def __init__(self, channels: int, norm: str = "group", global_pool: bool = False):
        super().__init__()
        self.grouped = norm == "group"
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=not self.grouped)
        self.norm1 = norm_layer(channels, norm)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=not self.grouped)
        self.norm2 = norm_layer(channels, norm)
        if not self.grouped:
            self.gain = nn.Parameter(torch.zeros(()))
        # global_pool (KataGo's global pooling bias, Wu 2019): each channel's board mean and
        # maximum after the first convolution set a per-channel bias of the second one, so
        # whole-board facts (colonies controlled, the lowest colony total: R22, R23) reach
        # every cell in one block instead of through the 3x3 receptive field
        self.pool_bias = nn.Linear(2 * channels, channels) if global_pool else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.norm1(self.conv1(x)))
        if self.pool_bias is not None:
            pooled = torch.cat([y.mean(dim=(2, 3)), y.amax(dim=(2, 3))], dim=1)
            y = y + self.pool_bias(pooled)[:, :, None, None]
        branch = self.norm2(self.conv2(y))
        return F.relu(x + (branch if self.grouped else self.gain * branch))


class PolicyValueNet(nn.Module):
    """Residual CNN: (B, 10, 10, 22) observations -> (B, 3217) logits, (B,) values in [-1, 1]."""

    def __init__(self, channels: int = 64, blocks: int = 4, lookahead: float = 0.0,
                 ownership: bool = False, landing_values: bool = False,
                 max_pool: bool = False, norm: str = "group", global_pool: bool = False):
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        self.channels = channels
        self.blocks = blocks
        self.lookahead = float(lookahead)
        self.has_ownership = bool(ownership)
        self.landing_values = bool(landing_values)
        self.max_pool = bool(max_pool)
        self.norm = norm
        self.global_pool = bool(global_pool)
        self.stem = nn.Sequential(
            nn.Conv2d(N_PLANES, channels, 3, padding=1, bias=norm != "group"),
            norm_layer(channels, norm), nn.ReLU())
        self.trunk = nn.Sequential(*(ResidualBlock(channels, norm, self.global_pool)
                                     for _ in range(blocks)))
        self.move_head = nn.Conv2d(channels, MOVES_PER_CELL, 1)
        # One landing map, or one per value of the satellite that moves (landing_values):
        # what a landing does depends on the value that lands (R21 sums).
        self.landing_head = nn.Conv2d(channels, 4 if self.landing_values else 1, 1)
        self.push_head = nn.Conv2d(channels, N_PUSH_ACTIONS, 1)
        self.pass_head = nn.Linear(channels, 1)
        # max_pool: the value head also sees the board-wide maximum of each channel (KataGo's
        # global pooling), so a single decisive colony is not averaged away.
        self.value_head = nn.Sequential(nn.Linear(channels * (2 if self.max_pool else 1),
                                                  channels), nn.ReLU(),
                                        nn.Linear(channels, 1))
        if self.has_ownership:
            # Auxiliary head (KataGo's ownership): per cell, who controls the colony its
            # satellite is in at the end of the game, in [-1, 1] from the observer's view.
            self.ownership_head = nn.Conv2d(channels, 1, 1)
        if self.lookahead:
            self.lookahead_weight = nn.Parameter(torch.tensor(self.lookahead))
            # The learned logits start at exactly 0, so the first policy is softmax of the
            # scaled lookahead values: greedy-like play instead of random-init noise.
            for head in (self.move_head, self.landing_head, self.push_head, self.pass_head):
                nn.init.zeros_(head.weight)
                nn.init.zeros_(head.bias)

    @property
    def shape(self) -> dict:
        """The constructor arguments: `PolicyValueNet(**net.shape)` is a blank twin."""
        shape = {"channels": self.channels, "blocks": self.blocks, "lookahead": self.lookahead}
        if self.has_ownership:
            shape["ownership"] = True
        if self.landing_values:
            shape["landing_values"] = True
        if self.max_pool:
            shape["max_pool"] = True
        if self.norm != "group":
            shape["norm"] = self.norm
        if self.global_pool:
            shape["global_pool"] = True
        return shape

    @property
    def uses_lookahead(self) -> bool:
        return self.lookahead != 0.0

    def forward(self, observation: torch.Tensor, lookahead: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw (unmasked) logits and values; `lookahead` (B, 3217) is required when the
        network uses the lookahead prior and ignored otherwise."""
        x, h = self._trunk(observation)
        return self._heads(x, h, lookahead)

    def forward_all(self, observation: torch.Tensor, rows: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Logits, values (B,) and the ownership map (B, 100), None without that head. With
        `rows` (an index tensor) the logits are those of these positions only, (len(rows),
        3217): a training batch whose policy targets cover a tenth of its positions (playout
        caps) skips the policy heads, half of a forward pass, for the rest."""
        x, h = self._trunk(observation)
        pooled = h.mean(dim=(2, 3))
        if rows is None:
            logits = self._policy(x, h, pooled, None)
        else:
            logits = self._policy(x[rows], h[rows], pooled[rows], None)
        ownership = (torch.tanh(self.ownership_head(h)).flatten(1) if self.has_ownership
                     else None)
        return logits, self._value_of(h, pooled), ownership

    def _heads(self, x: torch.Tensor, h: torch.Tensor, lookahead: torch.Tensor | None
               ) -> tuple[torch.Tensor, torch.Tensor]:
        pooled = h.mean(dim=(2, 3))
        return self._policy(x, h, pooled, lookahead), self._value_of(h, pooled)

    def _policy(self, x: torch.Tensor, h: torch.Tensor, pooled: torch.Tensor,
                lookahead: torch.Tensor | None) -> torch.Tensor:
        pushed_at = (x[:, PUSHED_PLANE] > 0).to(x.dtype)  # (B, 10, 10), one cell or none
        n_moves = N_CELLS * MOVES_PER_CELL  # explicit sizes: a batch may hold no position
        moves = self.move_head(h).permute(0, 2, 3, 1).reshape(x.shape[0], n_moves)
        if self.landing_values:
            # (B, 4 x 101): the map of value v + 1 at [v * 101 + cell]; each move reads the
            # map of the value on its from-cell (own_1..own_4 planes) at its landing cell.
            landing = F.pad(self.landing_head(h).flatten(2), (0, 1)).flatten(1)
            value_at = x[:, :4].argmax(1).flatten(1)  # (B, 100): own_k plane -> k - 1
            # move ids are cell-major (from-cell x 32 + direction x 4 + distance - 1), so each
            # cell's map offset broadcast over its 32 moves is every move's (a third faster
            # than a fancy index of the from-cells)
            offset = (value_at * (N_CELLS + 1)).unsqueeze(2)  # (B, 100, 1)
            index = torch.add(LANDING_BY_CELL, offset).view(x.shape[0], n_moves)
            moves = moves + torch.gather(landing, 1, index)
        else:
            landing = F.pad(self.landing_head(h).flatten(1), (0, 1))  # (B, 101), padding last
            moves = moves + landing[:, LANDING]
        pushes = torch.einsum("bchw,bhw->bc", self.push_head(h), pushed_at)
        passes = self.pass_head(pooled)
        logits = torch.cat([moves, pushes, passes], dim=1)
        if self.uses_lookahead:
            if lookahead is None:
                raise ValueError("this network adds one-ply lookahead values to its logits: "
                                 "pass lookahead (B, 3217), see training.features")
            logits = logits + self.lookahead_weight * lookahead
        return logits

    def value(self, observation: torch.Tensor) -> torch.Tensor:
        """The values alone (B,), without the policy heads."""
        _, h = self._trunk(observation)
        return self._value_of(h, h.mean(dim=(2, 3)))

    def _trunk(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = observation.permute(0, 3, 1, 2)  # channels-last planes -> NCHW
        return x, self.trunk(self.stem(x))

    def _value_of(self, h: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        if self.max_pool:
            pooled = torch.cat([pooled, h.amax(dim=(2, 3))], dim=1)
        return torch.tanh(self.value_head(pooled)).squeeze(1)

    def masked_forward(self, observation: torch.Tensor, mask: torch.Tensor,
                       lookahead: torch.Tensor | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits with illegal actions at -inf (mask: (B, 3217), nonzero = legal), and values."""
        logits, value = self(observation, lookahead)
        return mask_logits(logits, mask), value


def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    if logits.shape[-1] != N_ACTIONS:
        raise ValueError(f"expected {N_ACTIONS} logits, got {logits.shape[-1]}")
    return logits.masked_fill(mask == 0, float("-inf"))


def masked_entropy(masked_logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the masked categorical (illegal actions contribute exactly 0)."""
    log_probs = torch.log_softmax(masked_logits, dim=-1)
    probs = log_probs.exp()
    return -(probs * log_probs.nan_to_num(neginf=0.0)).sum(-1)


def sample_masked(masked_logits: torch.Tensor, generator: torch.Generator | None = None
                  ) -> torch.Tensor:
    """One action per row from softmax(masked_logits) by the Gumbel-max trick (much faster than
    torch.multinomial over 3217 actions); -inf (illegal) actions are never chosen."""
    uniform = torch.rand(masked_logits.shape, generator=generator).clamp_(min=1e-20)
    return (masked_logits - torch.log(-torch.log(uniform))).argmax(dim=-1)
