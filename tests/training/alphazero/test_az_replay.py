"""The replay buffer: ring overwrite, sampling, batches under symmetries."""

import numpy as np
import pytest

from satellites_env.core import engine
from satellites_env.core.board import N_ACTIONS
from training.alphazero.replay import ReplayBuffer, make_batch
from training.alphazero.search import SLOTS
from training.alphazero.symmetry import ACTION_MAP


def positions(n, seed=0):
    rng = np.random.default_rng(seed)
    states, actions, policy = [], [], []
    state = engine.init(rng=rng)
    while len(states) < n:
        legal = np.flatnonzero(engine.legal_action_mask(state))
        probs = rng.random(len(legal))
        probs /= probs.sum()
        row_a = np.full(SLOTS, -1, np.int16)
        row_p = np.zeros(SLOTS, np.float16)
        row_a[: len(legal)] = legal
        row_p[: len(legal)] = probs
        states.append(state.copy())
        actions.append(row_a)
        policy.append(row_p)
        state = engine.step(state, int(rng.choice(legal)))
        if engine.status(state) != engine.ONGOING:
            state = engine.init(rng=rng)
    return np.stack(states), np.stack(actions), np.stack(policy)


def test_ring_buffer_overwrites_the_oldest():
    states, actions, policy = positions(7)
    buffer = ReplayBuffer(5)
    value = np.arange(7, dtype=np.float32)
    buffer.add(states[:3], actions[:3], policy[:3], value[:3], np.ones(3, np.float32))
    assert (len(buffer), buffer.cursor, buffer.added) == (3, 3, 3)
    buffer.add(states[3:], actions[3:], policy[3:], value[3:], np.zeros(4, np.float32))
    assert (len(buffer), buffer.cursor, buffer.added) == (5, 2, 7)
    assert sorted(buffer.value.tolist()) == [2, 3, 4, 5, 6]  # 0 and 1 overwritten
    assert buffer.value.tolist() == [5, 6, 2, 3, 4]
    assert np.array_equal(buffer.states[0], states[5])
    # adding more than the capacity at once keeps the last `capacity`
    big = ReplayBuffer(3)
    big.add(states, actions, policy, value, np.ones(7, np.float32))
    assert sorted(big.value.tolist()) == [4, 5, 6]


def test_sampling_is_uniform_over_the_filled_part():
    states, actions, policy = positions(4)
    buffer = ReplayBuffer(100)
    buffer.add(states, actions, policy, np.zeros(4, np.float32), np.ones(4, np.float32))
    rows = buffer.sample(4000, np.random.default_rng(0))
    assert rows.min() == 0 and rows.max() == 3
    assert np.bincount(rows).min() > 900
    with pytest.raises(ValueError):
        ReplayBuffer(3).sample(1, np.random.default_rng(0))


def test_state_dict_round_trip():
    states, actions, policy = positions(6)
    buffer = ReplayBuffer(4)
    buffer.add(
        states, actions, policy, np.linspace(-1, 1, 6, dtype=np.float32), np.ones(6, np.float32)
    )
    other = ReplayBuffer(4)
    other.load_state_dict(buffer.state_dict())
    for name in ("states", "actions", "policy", "value", "policy_weight"):
        assert np.array_equal(getattr(other, name), getattr(buffer, name))
    assert (other.size, other.cursor, other.added) == (4, 2, 6)


@pytest.mark.parametrize("sym", [0, 3, 5])
def test_batches_map_targets_with_the_symmetry(sym):
    states, actions, policy = positions(12, seed=sym)
    buffer = ReplayBuffer(20)
    buffer.add(states, actions, policy, np.ones(12, np.float32), np.ones(12, np.float32))
    rows = np.arange(12)
    batch = make_batch(buffer, rows, np.full(12, sym), 400)
    plain = make_batch(buffer, rows, np.zeros(12, np.int64), 400)
    target, mask = batch["policy"].numpy(), batch["mask"].numpy()
    assert batch["obs"].shape == (12, 10, 10, 22)
    assert np.allclose(target.sum(1), 1.0, atol=1e-5)
    assert (target[mask == 0] == 0).all()
    for i in range(12):
        legal = np.flatnonzero(engine.legal_action_mask(states[i]))
        assert np.array_equal(np.flatnonzero(plain["mask"][i].numpy()), legal)
        assert np.allclose(target[i, ACTION_MAP[sym]], plain["policy"][i].numpy())
    assert target.shape == (12, N_ACTIONS)
