"""The replay buffer: a numpy ring buffer of searched positions, and the training batches.

A position is stored small: its state array (108 int32; the observation planes and the legal
mask are recomputed from it when it is sampled), the improved policy over its legal actions
(action ids and probabilities, at most ``SLOTS``), its value target (the final result from the
view of the player to move: +1, -1 or 0) and its policy weight (1 for a full search; 0 for a
cheap one, as KataGo's playout-cap randomisation trains the policy only on full searches).

Sampling is uniform over the filled part. The trainer draws ``replay_ratio`` positions per new
position, so once the buffer is full each position is trained on ``replay_ratio`` times on
average over its life in the buffer (sampling ratio; before it is full the older positions
get a little more). Each sampled position is seen under one of the 8 board
symmetries drawn at random (states, planes and action ids transformed together).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch
from numba import njit, prange

from satellites_env.core.engine import (
    N_ACTIONS,
    N_CELLS,
    STATE_LEN,
    TO_MOVE,
    fill_legal_mask,
    new_work,
)
from satellites_env.core.state import check_state_rows
from satellites_env.observation import N_PLANES, fill_observation

from .search import SLOTS
from .symmetry import ACTION_MAP, CELL_MAP, DIR_MAP, transform_state_into

#: What a stored position holds (the arrays of `ReplayBuffer.add`, in its order).
FIELDS = ("states", "actions", "policy", "value", "policy_weight")


class PositionSink(Protocol):
    """Where self-play puts the positions of its finished games: the learner's
    `ReplayBuffer`, or a generator's `Collector` that hands them on to the learner."""

    def add(
        self,
        states: np.ndarray,
        actions: np.ndarray,
        policy: np.ndarray,
        value: np.ndarray,
        policy_weight: np.ndarray,
    ) -> None: ...


class ReplayBuffer:
    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.states = np.zeros((capacity, STATE_LEN), dtype=np.int32)
        self.actions = np.full((capacity, SLOTS), -1, dtype=np.int16)
        self.policy = np.zeros((capacity, SLOTS), dtype=np.float16)
        self.value = np.zeros(capacity, dtype=np.float32)
        self.policy_weight = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.cursor = 0  # next slot to write
        self.added = 0  # positions ever added

    def __len__(self) -> int:
        return self.size

    def add(
        self,
        states: np.ndarray,
        actions: np.ndarray,
        policy: np.ndarray,
        value: np.ndarray,
        policy_weight: np.ndarray,
    ) -> None:
        """Add n positions (arrays with a leading axis n); the oldest are overwritten."""
        n = len(states)
        for start in range(0, n, self.capacity):
            chunk = slice(start, min(n, start + self.capacity))
            count = chunk.stop - chunk.start
            where = (self.cursor + np.arange(count)) % self.capacity
            self.states[where] = states[chunk]
            self.actions[where] = actions[chunk]
            self.policy[where] = policy[chunk]
            self.value[where] = value[chunk]
            self.policy_weight[where] = policy_weight[chunk]
            self.cursor = int((self.cursor + count) % self.capacity)
            self.size = min(self.capacity, self.size + count)
            self.added += count

    def sample(self, batch: int, rng: np.random.Generator) -> np.ndarray:
        """Indices of `batch` positions drawn uniformly (with replacement)."""
        if self.size == 0:
            raise ValueError("sampling from an empty replay buffer")
        return rng.integers(0, self.size, size=batch)

    # Checkpoints hold tensors and plain data only.
    def state_dict(self) -> dict:
        n = self.size
        return {
            "capacity": self.capacity,
            "size": n,
            "cursor": self.cursor,
            "added": self.added,
            "states": torch.from_numpy(self.states[:n].copy()),
            "actions": torch.from_numpy(self.actions[:n].copy()),
            "policy": torch.from_numpy(self.policy[:n].copy()),
            "value": torch.from_numpy(self.value[:n].copy()),
            "policy_weight": torch.from_numpy(self.policy_weight[:n].copy()),
        }

    def load_state_dict(self, data: dict) -> None:
        """Restore a buffer saved by `state_dict`, checked first (ValueError naming the field):
        the batch kernels read these arrays without bounds checks, so a damaged or crafted
        checkpoint must fail here, with nothing of it loaded."""
        if not isinstance(data, dict):
            raise ValueError("replay must be a mapping")
        numbers: dict[str, int] = {}
        for key in ("capacity", "size", "cursor", "added"):
            value = data.get(key)
            if type(value) is not int or value < 0:
                raise ValueError(f"replay.{key} must be an int >= 0, got {value!r}")
            numbers[key] = value
        if numbers["capacity"] != self.capacity:
            raise ValueError(
                f"replay buffer capacity {numbers['capacity']} in the checkpoint, "
                f"{self.capacity} in the config"
            )
        n, cursor, added = numbers["size"], numbers["cursor"], numbers["added"]
        if not (
            n <= self.capacity
            and cursor < self.capacity
            and added >= n
            and cursor == added % self.capacity
        ):
            raise ValueError(
                f"replay size {n}, cursor {cursor} and added {added} do not fit "
                f"a ring buffer of {self.capacity}"
            )
        arrays = {}
        for key in FIELDS:
            kept = getattr(self, key)
            tensor = data.get(key)
            if not (
                isinstance(tensor, torch.Tensor)
                and tuple(tensor.shape) == (n, *kept.shape[1:])
                and tensor.dtype == torch.from_numpy(kept[:0]).dtype
            ):
                raise ValueError(
                    f"replay.{key} must be a {kept.dtype} tensor of shape "
                    f"{(n, *kept.shape[1:])}, got "
                    f"{getattr(tensor, 'dtype', type(tensor).__name__)} "
                    f"{tuple(getattr(tensor, 'shape', ()))}"
                )
            arrays[key] = tensor.numpy()
        check_state_rows(arrays["states"])
        actions, policy = arrays["actions"], arrays["policy"].astype(np.float32)
        checks = {
            "actions": ((actions >= -1) & (actions < N_ACTIONS)).all(),
            "policy": (np.isfinite(policy) & (policy >= 0) & (policy <= 1)).all(),
            "value": (np.isfinite(arrays["value"]) & (np.abs(arrays["value"]) <= 1)).all(),
            "policy_weight": (
                np.isfinite(arrays["policy_weight"]) & (arrays["policy_weight"] >= 0)
            ).all(),
        }
        limits = {
            "actions": f"action ids in -1..{N_ACTIONS - 1}",
            "policy": "numbers in 0..1",
            "value": "numbers in -1..1",
            "policy_weight": "numbers >= 0",
        }
        for key, fine in checks.items():
            if not fine:
                raise ValueError(f"replay.{key} must hold {limits[key]}")
        self.size, self.cursor, self.added = n, cursor, added
        for key, array in arrays.items():
            getattr(self, key)[:n] = array


# nogil: with `overlap: true` self-play runs in another thread meanwhile.
@njit(parallel=True, cache=True, nogil=True)
def _fill_batch(
    states, actions, policy, syms, max_moves, obs, masks, targets, scratch_states, works
):
    for i in prange(states.shape[0]):
        t = syms[i]
        transform_state_into(states[i], t, scratch_states[i], CELL_MAP, DIR_MAP)
        state = scratch_states[i]
        fill_observation(state, state[TO_MOVE], max_moves, obs[i], works[i])
        fill_legal_mask(state, masks[i], works[i])
        targets[i, :] = 0.0
        for j in range(actions.shape[1]):
            a = actions[i, j]
            if a < 0:
                break
            targets[i, ACTION_MAP[t, a]] = policy[i, j]


def make_batch(
    buffer: ReplayBuffer, rows: np.ndarray, syms: np.ndarray, max_moves: int
) -> dict[str, torch.Tensor]:
    """Tensors for positions `rows` under symmetries `syms`: obs (n, 10, 10, 22), mask
    (n, 3217) int8, policy target (n, 3217), value target (n,), policy weight (n,)."""
    n = len(rows)
    obs = np.zeros((n, N_CELLS, N_PLANES), dtype=np.float32)
    masks = np.zeros((n, N_ACTIONS), dtype=np.int8)
    targets = np.zeros((n, N_ACTIONS), dtype=np.float32)
    scratch = np.zeros((n, STATE_LEN), dtype=np.int32)
    works = np.zeros((n, *new_work().shape), np.int32)
    _fill_batch(
        buffer.states[rows],
        buffer.actions[rows],
        buffer.policy[rows].astype(np.float32),
        syms.astype(np.int64),
        max_moves,
        obs,
        masks,
        targets,
        scratch,
        works,
    )
    targets /= np.maximum(targets.sum(axis=1, keepdims=True), 1e-12)  # float16 rounding
    return {
        "obs": torch.from_numpy(obs.reshape(n, 10, 10, N_PLANES)),
        "mask": torch.from_numpy(masks),
        "policy": torch.from_numpy(targets),
        "value": torch.from_numpy(buffer.value[rows].copy()),
        "policy_weight": torch.from_numpy(buffer.policy_weight[rows].copy()),
    }
