"""The raw policy of a trained network as an agent
([`PolicyAgent`][training.common.policy_agent.PolicyAgent], `checkpoint:PATH`), either
learner's, and the torch thread settings of its moves.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from satellites_env.agents.base import Agent
from satellites_env.core.engine import new_work
from satellites_env.core.game import Game
from satellites_env.observation import observe

from .network import PolicyValueNet, device_of, sample_masked

#: environment variable: torch threads of a policy agent's moves (default 1)
THREADS_VARIABLE = "SATELLITES_TORCH_THREADS"


def default_threads() -> int:
    """Torch threads for playing: $SATELLITES_TORCH_THREADS, else 1."""
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if not text:
        return 1
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a positive integer, got {text[:40]!r}")
    return threads


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` torch intra-op threads, then restore the previous count."""
    previous = torch.get_num_threads()
    if previous == threads:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def check_temperature(temperature: object) -> float:
    """A sampling temperature: a finite number above 0 (ValueError otherwise)."""
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not math.isfinite(temperature)
        or temperature <= 0
    ):
        raise ValueError(f"temperature must be a finite number above 0, got {temperature!r}")
    return float(temperature)


class PolicyAgent(Agent):
    """The raw policy, no search: the network's most likely legal action, or, with `sample`,
    a sample from softmax(logits / `temperature`) over the legal actions.

    One forward pass of batch 1 gains nothing from more torch threads, and extra threads that
    spin-wait on a busy machine make every move many times slower, so each move runs with
    `threads` torch threads (default: $SATELLITES_TORCH_THREADS, else 1); the process's own
    setting is restored after the move.
    """

    #: whether the moves depend on the observation planes alone (a batched search can make them)
    planes_only = True

    def __init__(
        self,
        net: PolicyValueNet,
        sample: bool = False,
        seed: int | None = None,
        spec: str = "policy",
        threads: int | None = None,
        temperature: float = 1.0,
    ):
        super().__init__(seed)
        self.net = net.eval()
        self.sample = sample
        self.temperature = check_temperature(temperature)
        self.spec = spec
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self._work = new_work()
        self._generator = torch.Generator().manual_seed(int(self.rng.integers(2**31)))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self._generator.manual_seed(int(self.rng.integers(2**31)))

    def settings_suffix(self) -> str:
        if not self.sample:
            return ""
        return ":sample" if self.temperature == 1.0 else f":sample={self.temperature!r}"

    @torch.inference_mode()
    def act(self, game: Game) -> int:
        obs = observe(game.state, game.to_move, game.max_moves, self._work)
        return self._choose(obs, game.legal_mask(), game)

    def policy(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action from an observation alone, planes (10, 10, 22) and mask (3217,), for an
        agent whose moves need nothing else (`planes_only`)."""
        return self._choose(np.asarray(observation, np.float32), np.asarray(action_mask), None)

    def _logits(
        self, x: torch.Tensor, mask: torch.Tensor, game: Game | None, legal: np.ndarray
    ) -> torch.Tensor:
        """The masked logits (1, 3217) of a position: planes `x`, legal actions `mask` (and
        `legal`), and its game where known (None for `policy`)."""
        logits, _ = self.net.masked_forward(x, mask)
        return logits

    @torch.inference_mode()
    def _choose(self, obs: np.ndarray, legal: np.ndarray, game: Game | None) -> int:
        device = device_of(self.net)
        x = torch.as_tensor(obs, device=device)[None]
        mask = torch.as_tensor(legal.copy(), device=device)[None]
        with torch_threads(self.threads):
            logits = self._logits(x, mask, game, legal)
        if self.sample:
            # in float64 (a temperature of 1e-300 or 1e300 is 0 or inf in float32) and shifted
            # so that the best legal logit is 0: no temperature makes it -inf or NaN
            shifted = (logits - logits.max(-1, keepdim=True).values).double().cpu()
            return int(sample_masked(shifted / self.temperature, self._generator).item())
        return int(logits.argmax(-1).item())
