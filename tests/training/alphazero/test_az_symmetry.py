"""The 8 board symmetries: a group, and exact on legal masks, observations and results."""

import numpy as np
import pytest

from satellites_env.core import engine
from satellites_env.core.board import N_ACTIONS, N_CELLS, PUSH_BASE, RAY
from satellites_env.core.state import NO_PENDING, PENDING_TARGET
from satellites_env.observation import observe
from training.alphazero.symmetry import (
    ACTION_MAP,
    CELL_MAP,
    COMPOSE,
    INVERSE,
    transform_mask,
    transform_planes,
    transform_state,
)

IDENTITY = np.arange(N_ACTIONS)


def random_positions(count: int, seed: int = 0) -> list[np.ndarray]:
    """Positions from random games, displacements (pending pushes) preferred when possible."""
    rng = np.random.default_rng(seed)
    work = engine.new_work()
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    positions: list[np.ndarray] = []
    while len(positions) < count:
        state = engine.init(rng=rng)
        while engine.game_status(state, 400) == engine.ONGOING and len(positions) < count:
            engine.fill_legal_mask(state, mask, work)
            legal = np.flatnonzero(mask)
            displacements = [
                a for a in legal if a < PUSH_BASE and state[RAY[a // 32, (a // 4) % 8, a % 4]] != 0
            ]
            if displacements and rng.random() < 0.7:
                action = int(rng.choice(displacements))
            else:
                action = int(rng.choice(legal))
            engine.apply_unchecked(state, action, work)
            if rng.random() < 0.08 or state[PENDING_TARGET] != NO_PENDING:
                positions.append(state.copy())
    return positions


def test_tables_are_permutations_and_a_group():
    for t in range(8):
        assert np.array_equal(np.sort(ACTION_MAP[t]), IDENTITY)
        assert np.array_equal(np.sort(CELL_MAP[t]), np.arange(N_CELLS))
        assert np.array_equal(ACTION_MAP[INVERSE[t]][ACTION_MAP[t]], IDENTITY)
    assert np.array_equal(ACTION_MAP[0], IDENTITY)
    # a quarter turn applied 4 times, and a mirror applied twice, are the identity
    for generator, order in ((1, 4), (4, 2)):
        mapping = IDENTITY
        for i in range(order):
            mapping = ACTION_MAP[generator][mapping]
            assert np.array_equal(mapping, IDENTITY) == (i == order - 1)
    # closed under composition: every row and column of the table is a permutation of 0..7
    for t in range(8):
        assert sorted(COMPOSE[t]) == list(range(8)) and sorted(COMPOSE[:, t]) == list(range(8))
        for u in range(8):
            assert np.array_equal(ACTION_MAP[t][ACTION_MAP[u]], ACTION_MAP[COMPOSE[t, u]])
    assert ACTION_MAP[:, N_ACTIONS - 1].tolist() == [N_ACTIONS - 1] * 8  # pass is fixed


def test_legal_mask_observation_and_result_commute_with_symmetries():
    positions = random_positions(40)
    assert any(p[PENDING_TARGET] != NO_PENDING for p in positions), "no displacement position"
    for state in positions:
        mask = engine.legal_action_mask(state)
        planes = observe(state, int(state[N_CELLS]), 400, engine.new_work())
        for t in range(8):
            image = transform_state(state, t)
            assert np.array_equal(engine.legal_action_mask(image), transform_mask(mask, t))
            assert np.array_equal(
                observe(image, int(image[N_CELLS]), 400, engine.new_work()),
                transform_planes(planes, t),
            )
            assert engine.status(image) == engine.status(state)
            assert engine.winner(image[:N_CELLS]) == engine.winner(state[:N_CELLS])
            back = transform_state(image, INVERSE[t])
            assert np.array_equal(back, state)


@pytest.mark.parametrize("t", range(8))
def test_playing_commutes_with_symmetries(t):
    """Applying T(a) to T(s) gives T(apply a to s), for every legal action of a few positions."""
    for state in random_positions(6, seed=t + 1):
        for action in np.flatnonzero(engine.legal_action_mask(state)):
            after = engine.step(state, int(action))
            image = engine.step(transform_state(state, t), int(ACTION_MAP[t, action]))
            assert np.array_equal(image, transform_state(after, t))
