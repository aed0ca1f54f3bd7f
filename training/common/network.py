"""The network: a residual CNN over the observation planes with a spatial policy head and a
value head, its batched evaluator for the search, and masked action distributions.

AlphaZero trains it from the rules alone: observation planes in, logits over the 3217 actions
and a value in [-1, 1] out. PPO trains the same network, optionally with its hand-made one-ply
prior added to the logits ([`PriorNet`][training.ppo.prior.PriorNet]).

The policy head is spatial and matches the action encoding (RULES.md section 8) directly:
a 1x1 convolution gives 32 logits per cell (8 directions x 4 distances) and, flattened
cell-major, these are exactly the move ids `cell * 32 + direction * 4 + (k - 1)`. Each move
also gets the logit of its landing cell from a second 1x1 map, gathered through the board's
ray table: what a move does depends mostly on where it lands (a legal move landing next to an
opponent is a connection), and this way the network can say so directly. The 16 push logits are
read at the cell the displaced satellite waits on (the `pushed` plane), and the pass logit
comes from pooled features. Illegal actions get -inf, so they are never sampled.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from satellites_env.core.board import N_ACTIONS, N_CELLS, N_PUSH_ACTIONS, RAY
from satellites_env.observation import N_PLANES, PLANE_INDEX
from training.common.config import NORMS, NetworkSettings

MOVES_PER_CELL = 32
PUSHED_PLANE = PLANE_INDEX["pushed"]
# Landing cell of every move action (off-board moves point at a padding cell; they are
# never legal, so their logit does not matter).
LANDING = torch.from_numpy(RAY.reshape(-1).copy()).where(
    torch.from_numpy(RAY.reshape(-1).copy()) >= 0, torch.tensor(N_CELLS)
)
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

    def __init__(self, channels: int, norm: str = "group"):
        super().__init__()
        self.grouped = norm == "group"
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=not self.grouped)
        self.norm1 = norm_layer(channels, norm)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=not self.grouped)
        self.norm2 = norm_layer(channels, norm)
        if not self.grouped:
            self.gain = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.norm1(self.conv1(x)))
        branch = self.norm2(self.conv2(y))
        return F.relu(x + (branch if self.grouped else self.gain * branch))


class PolicyValueNet(nn.Module):
    """Residual CNN: (B, 10, 10, 22) observations -> (B, 3217) logits, (B,) values in [-1, 1]."""

    def __init__(
        self, channels: int = 64, blocks: int = 4, landing_values: bool = False, norm: str = "group"
    ):
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        self.channels = channels
        self.blocks = blocks
        self.landing_values = bool(landing_values)
        self.norm = norm
        self.stem = nn.Sequential(
            nn.Conv2d(N_PLANES, channels, 3, padding=1, bias=norm != "group"),
            norm_layer(channels, norm),
            nn.ReLU(),
        )
        self.trunk = nn.Sequential(*(ResidualBlock(channels, norm) for _ in range(blocks)))
        self.move_head = nn.Conv2d(channels, MOVES_PER_CELL, 1)
        # One landing map, or one per value of the satellite that moves (landing_values):
        # what a landing does depends on the value that lands (R21 sums).
        self.landing_head = nn.Conv2d(channels, 4 if self.landing_values else 1, 1)
        self.push_head = nn.Conv2d(channels, N_PUSH_ACTIONS, 1)
        self.pass_head = nn.Linear(channels, 1)
        self.value_head = nn.Sequential(
            nn.Linear(channels, channels), nn.ReLU(), nn.Linear(channels, 1)
        )

    @property
    def shape(self) -> dict[str, Any]:
        """The constructor arguments: `type(net)(**net.shape)` is a blank twin."""
        shape: dict[str, Any] = {"channels": self.channels, "blocks": self.blocks}
        if self.landing_values:
            shape["landing_values"] = True
        if self.norm != "group":
            shape["norm"] = self.norm
        return shape

    def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw (unmasked) logits (B, 3217) and values (B,)."""
        x, h = self._trunk(observation)
        pooled = h.mean(dim=(2, 3))
        return self._policy(x, h, pooled), self._value_of(h, pooled)

    def forward_all(
        self, observation: torch.Tensor, rows: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and values (B,). With `rows` (an index tensor) the logits are those of these
        positions only, (len(rows), 3217): a training batch whose policy targets cover a tenth
        of its positions (playout caps) skips the policy heads, half of a forward pass, for
        the rest."""
        x, h = self._trunk(observation)
        pooled = h.mean(dim=(2, 3))
        if rows is None:
            logits = self._policy(x, h, pooled)
        else:
            logits = self._policy(x[rows], h[rows], pooled[rows])
        return logits, self._value_of(h, pooled)

    def _policy(self, x: torch.Tensor, h: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
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
        return torch.cat([moves, pushes, passes], dim=1)

    def value(self, observation: torch.Tensor) -> torch.Tensor:
        """The values alone (B,), without the policy heads."""
        _, h = self._trunk(observation)
        return self._value_of(h, h.mean(dim=(2, 3)))

    def _trunk(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = observation.permute(0, 3, 1, 2)  # channels-last planes -> NCHW
        return x, self.trunk(self.stem(x))

    def _value_of(self, h: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.value_head(pooled)).squeeze(1)

    def masked_forward(
        self, observation: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits with illegal actions at -inf (mask: (B, 3217), nonzero = legal), and values."""
        logits, value = self(observation)
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


def sample_masked(
    masked_logits: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """One action per row from softmax(masked_logits) by the Gumbel-max trick (much faster than
    torch.multinomial over 3217 actions); -inf (illegal) actions are never chosen."""
    uniform = torch.rand(masked_logits.shape, generator=generator).clamp_(min=1e-20)
    return (masked_logits - torch.log(-torch.log(uniform))).argmax(dim=-1)


def build_network(
    channels: int,
    blocks: int,
    seed: int | None = None,
    landing_values: bool = False,
    norm: str = "group",
) -> PolicyValueNet:
    """A fresh network; with `seed`, its initial weights come from torch.manual_seed(seed)."""
    if seed is not None:
        torch.manual_seed(seed)
    return PolicyValueNet(channels, blocks, landing_values=landing_values, norm=norm)


def network_for(model: NetworkSettings, seed: int | None = None) -> PolicyValueNet:
    """A fresh network of a config's `model:` section (an AZModelConfig): every head option
    it names, so callers do not list them again."""
    return build_network(
        model.channels,
        model.blocks,
        seed=seed,
        landing_values=model.landing_values,
        norm=model.norm,
    )


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


# glibc's mallopt parameters: allocations below the threshold come from the heap, and the
# heap keeps up to the trim threshold of freed memory instead of returning it.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEEP_BYTES = 32 * 2**20


@functools.cache
def reuse_freed_memory() -> bool:
    """Let the process reuse freed memory for the network's activations.

    glibc serves each activation of the batched forward and backward passes (a few hundred
    kB to a few MB) from a fresh mmap and unmaps it when freed, so every pass faults its
    pages in again: about 1,700 page faults a self-play forward pass, most of its time on a
    busy 2-core machine. Keeping such blocks in the heap removes them. A no-op where the C
    library has no `mallopt` (not glibc); called once per process.

    Returns:
        Whether the allocator's settings were changed.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(
        mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES) and mallopt(_M_TRIM_THRESHOLD, 8 * _KEEP_BYTES)
    )


class BatchedInference:
    """The Gumbel search's network call (not an MCTS
    [`Evaluator`][satellites_env.agents.mcts.Evaluator]): `infer(obs, policy_rows=None)` ->
    (logits, values) as float32 numpy arrays, one batched forward pass in inference mode on
    the network's device. With
    `policy_rows` (indices into obs) the logits are those rows' only: the policy heads (a
    quarter of az_quick's forward pass) skip the positions whose value alone the search needs.

    The network's convolution weights are put in channels-last layout (in place), the
    observation's own layout: a quarter less time a forward pass on a CPU than the default
    layout (`benchmarks/az_phases.py`). The trainer keeps its network channels-last too, so
    that its runs are the same whether self-play evaluates with that network or a copy."""

    def __init__(self, net: PolicyValueNet):
        reuse_freed_memory()
        # the ignore: torch's stubs lack Module.to's memory_format keyword
        self.net = net.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
        self.device = device_of(net)

    @torch.inference_mode()
    def __call__(
        self, obs: np.ndarray, policy_rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        self.net.eval()
        x = torch.from_numpy(obs).to(self.device)
        if policy_rows is None or len(policy_rows) == len(obs):
            logits, values = self.net(x)
        else:
            rows = torch.from_numpy(np.asarray(policy_rows, dtype=np.int64)).to(self.device)
            logits, values = self.net.forward_all(x, rows)
        return logits.float().cpu().numpy(), values.float().cpu().numpy()
