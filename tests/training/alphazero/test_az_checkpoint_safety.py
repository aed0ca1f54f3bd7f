"""Resuming an AlphaZero run from a damaged or crafted checkpoint is a CheckpointError naming
the field, before anything of it is used: the replay buffer's stored positions are read by
numba kernels that do not check bounds, so they are checked first."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from checkpoint_fuzz import mutated, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_az_training import TINY, quiet

from satellites_env.core import engine
from satellites_env.core.board import N_ACTIONS, N_CELLS
from satellites_env.core.engine import fill_legal_mask, new_work
from satellites_env.core.state import (
    GRACE,
    MOVES,
    PASSES,
    PENDING_FROM,
    PENDING_PIECE,
    PENDING_PUSHES,
    PENDING_TARGET,
    STATE_LEN,
    TO_MOVE,
    check_state_rows,
)
from satellites_env.observation import N_PLANES, fill_observation
from training.alphazero.config import AZConfig
from training.alphazero.replay import make_batch
from training.alphazero.trainer import AZTrainer
from training.common.checkpoint import CheckpointError
from training.common.run_folder import RunError

CONFIG = {**TINY, "total_positions": 400}
_RUN: dict = {}


def pending_state() -> np.ndarray:
    """A position between the two steps of a displacement (a push to choose), from random
    play: rare in a tiny run's early moves, so one is put into its buffer."""
    rng = np.random.default_rng(0)
    for seed in range(100):
        state = engine.init(seed=seed)
        while not engine.is_terminal(state):
            if state[PENDING_TARGET] >= 0:
                return state
            state = engine.step(
                state, int(rng.choice(np.flatnonzero(engine.legal_action_mask(state))))
            )
    raise AssertionError("no displacement in 100 random games")


def run_checkpoint() -> dict:
    """A real AlphaZero checkpoint (a filled buffer, optimizer moments) whose first stored
    position is a pending displacement, made once."""
    if not _RUN:
        with tempfile.TemporaryDirectory() as folder:
            trainer = AZTrainer(AZConfig.from_dict(CONFIG), Path(folder), console=quiet())
            for _ in range(5):
                trainer.iterate()
            assert trainer.buffer.size > 0 and trainer.counters.train_steps > 0
            trainer.buffer.states[0] = pending_state()
            _RUN["payload"] = torch.load(trainer.save(), weights_only=True)
    return _RUN["payload"]


def resume(payload: dict) -> AZTrainer:
    with tempfile.TemporaryDirectory() as folder:
        torch.save(payload, Path(folder) / "checkpoint.pt")
        return AZTrainer(AZConfig.from_dict(CONFIG), folder, resume=True, console=quiet())


def with_states(change) -> dict:
    """The run's checkpoint with `change(states)` applied to a copy of its stored positions."""
    payload = run_checkpoint()
    states = payload["replay"]["states"].numpy().copy()
    change(states)
    return mutated(payload, ("replay", "states"), torch.from_numpy(states), False)


def test_the_real_checkpoint_resumes_and_holds_pending_displacements():
    payload = run_checkpoint()
    states = payload["replay"]["states"].numpy()
    assert states[0, PENDING_TARGET] >= 0  # the pending checks see a real case
    check_state_rows(states)
    trainer = resume(payload)
    assert trainer.buffer.size == len(states)


def _first_empty(state: np.ndarray) -> int:
    return int(np.flatnonzero(state[:N_CELLS] == 0)[0])


def _set_cell(states, code):
    states[1, _first_empty(states[1])] = code  # row 0 is the pending displacement


def _off_board_target(states):
    states[0, PENDING_TARGET] = N_CELLS + 50


def _every_push_bit(states):
    states[0, PENDING_PUSHES] = (1 << 16) - 1  # all 16 pushes: some land off the board or on
    # a satellite


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: _set_cell(s, 9), "cell codes outside -4..4"),
        (lambda s: _set_cell(s, 4), "not 3 red satellites of value 4"),
        (lambda s: s.__setitem__((1, TO_MOVE), 2), "to_move not 0 or 1"),
        (lambda s: s.__setitem__((1, GRACE), 7), "grace outside -1..3"),
        (lambda s: s.__setitem__((1, PASSES), -1), "passes outside 0..2"),
        (lambda s: s.__setitem__((1, MOVES), -5), "moves < 0"),
        (lambda s: s.__setitem__((1, PENDING_PIECE), 3), "pending fields set with no displacement"),
        (_off_board_target, "a pending displacement off the board"),
        (
            lambda s: s.__setitem__((0, PENDING_PIECE), 0),
            "a pending satellite that is not the opponent's",
        ),
        (_every_push_bit, "push bit landing off the board or on a satellite"),
    ],
)
def test_stored_positions_the_kernels_cannot_read_are_refused(change, message):
    with pytest.raises(CheckpointError, match=rf"damaged run state.*state row \d+: .*{message}"):
        resume(with_states(change))


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("replay", "size"), 10**9, "do not fit a ring buffer"),
        (("replay", "cursor"), -1, r"replay\.cursor must be an int >= 0"),
        (("replay", "actions"), None, r"replay\.actions must be a int16 tensor"),
        (("counters", "positions"), -3, r"counters\.positions must be a number in \[0, "),
        (("counters", "credit"), float("nan"), r"counters\.credit must be a number in \[0, "),
        (("history",), [{"progress": 5, "results": {"random": {"games": 0}}}], "bad counts"),
        (("config",), {"search": {"games": "many"}}, "no valid run config"),
    ],
)
def test_damaged_run_fields_are_checkpoint_errors_naming_the_field(path, value, message):
    with pytest.raises(CheckpointError, match=message):
        resume(mutated(run_checkpoint(), path, value, False))


def test_optimizer_moments_of_the_wrong_shape_are_refused_at_resume():
    payload = run_checkpoint()
    optimizer = {**payload["optimizer"], "state": dict(payload["optimizer"]["state"])}
    optimizer["state"][0] = {**optimizer["state"][0], "exp_avg": torch.zeros(5)}
    with pytest.raises(CheckpointError, match=r"optimizer state 'exp_avg' of parameter 0 has"):
        resume(mutated(payload, ("optimizer",), optimizer, False))


def test_damaged_replay_targets_are_refused():
    payload = run_checkpoint()
    for key, bad, message in (
        ("actions", N_ACTIONS, "action ids in -1..3216"),
        ("value", 2.0, r"numbers in -1\.\.1"),
        ("policy", float("inf"), r"numbers in 0\.\.1"),
        ("policy_weight", -1.0, "numbers >= 0"),
    ):
        array = payload["replay"][key].clone()
        array.view(-1)[0] = bad
        with pytest.raises(CheckpointError, match=rf"replay\.{key} must hold {message}"):
            resume(mutated(payload, ("replay", key), array, False))


RUN_PATHS = [
    ("counters",),
    ("counters", "positions"),
    ("counters", "seconds"),
    ("counters", "credit"),
    ("history",),
    ("optimizer",),
    ("optimizer", "state"),
    ("optimizer", "param_groups"),
    ("replay",),
    ("replay", "size"),
    ("replay", "cursor"),
    ("replay", "added"),
    ("replay", "capacity"),
    ("replay", "states"),
    ("replay", "actions"),
    ("replay", "policy"),
    ("replay", "value"),
    ("replay", "policy_weight"),
    ("rng",),
    ("rng", "train"),
    ("rng", "torch"),
    ("generators",),
    ("config",),
    ("config", "seed"),
    ("model",),
    ("model_shape", "channels"),
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(RUN_PATHS), values, st.booleans())
def test_fuzz_resuming_from_a_mutated_az_checkpoint_is_a_checkpoint_error(path, value, delete):
    payload = mutated(run_checkpoint(), path, value, delete)
    try:
        trainer = resume(payload)
    except CheckpointError:
        return
    except RunError as error:  # a config that differs from the run's: named as such
        assert "the config differs from the run" in str(error), error
        return
    trainer.state_payload()  # a state that was accepted is whole and can be trained on
    n = min(4, trainer.buffer.size)
    make_batch(trainer.buffer, np.arange(n), np.zeros(n, np.int64), trainer.config.search.max_moves)


FIELDS = list(range(STATE_LEN))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 3), st.sampled_from(FIELDS), st.integers(-(2**31), 2**31 - 1))
def test_fuzz_any_state_the_check_accepts_is_read_by_the_kernels_in_range(row, field, code):
    """One field of a real stored position (row 0: a pending displacement) set to any int32:
    the check refuses it with a ValueError, or the legal mask and the observation come out in
    range."""
    state = run_checkpoint()["replay"]["states"].numpy()[row].copy()
    state[field] = code
    try:
        check_state_rows(state[None])
    except ValueError as error:
        assert str(error).startswith("state row 0: "), error
        return
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    count = fill_legal_mask(state, mask, new_work())
    assert count == mask.sum() and set(np.unique(mask)) <= {0, 1}
    planes = np.zeros((N_CELLS, N_PLANES), dtype=np.float32)
    fill_observation(state, state[TO_MOVE], 400, planes, new_work())
    assert np.isfinite(planes).all() and np.abs(planes).max() <= 1.0 + 1e-6
    assert state[PENDING_FROM] != state[PENDING_TARGET] or state[PENDING_TARGET] < 0
