"""The batched engine (`satellites_env.core.batch`) against `Game`, move for move.

Many games are played in one `BatchedEngine` and, beside each, a `Game` over a copy of the
same position; after every step each state row, legal mask, status, reward and auto-reset is
compared. Policies mix uniform random play with a "finale-seeking" one (prefers
displacements, then moves that touch an opponent) so that colonies, grace moves,
displacements, passes, the R16 end and the move cap all occur (counted and asserted).
"""

from __future__ import annotations

from collections import Counter

import numba
import numpy as np
import pytest

from satellites_env.core import Game, IllegalActionError
from satellites_env.core.batch import (
    BatchedEngine,
    apply_actions,
    final_rewards,
    legal_masks,
    new_batch_scratch,
    random_legal_actions,
    random_legal_actions_of,
    reset_states,
    setup_state,
    statuses,
)
from satellites_env.core.board import (
    N_ACTIONS,
    N_CELLS,
    N_MOVE_ACTIONS,
    ORTHO,
    PASS_ACTION,
    PUSH_BASE,
    RAY,
)
from satellites_env.core.notation import parse_spn, to_spn
from satellites_env.core.rules import ONGOING, TRUNCATED
from satellites_env.core.state import GRACE, MOVES, NO_GRACE, STATE_LEN, TO_MOVE

# Hand-made end-phase positions (from tests/core/test_reference_crosscheck.py): both players
# boxed in (two passes end the game, R19), and red in grace with nothing to move (R18 + R19).
BOTH_STUCK = (
    "AB......ba/Cc......Dd/........../..AaBbCc../........../..aAbBcC../........../"
    "..DdDd..../........../.......... r - 0 50"
)
GRACE_STUCK = (
    "AB......BA/Cc......cC/........../..a...b.../.aAb.cDd../..a...b.../........../"
    ".BdC..DdD./........../.......... r 3 0 80"
)


def choose(state: np.ndarray, mask: np.ndarray, rng: np.random.Generator, bias: float) -> int:
    """A legal action: with probability `bias` a displacement, else a move next to an
    opponent satellite, when there is one; otherwise uniform."""
    legal = np.flatnonzero(mask)
    if bias and rng.random() < bias:
        moves = legal[legal < N_MOVE_ACTIONS]
        if len(moves):
            source = moves // 32
            target = RAY[source, (moves // 4) % 8, moves % 4]
            mover = state[source]
            displacing = moves[state[target] * mover < 0]
            if len(displacing):
                return int(rng.choice(displacing))
            near = ORTHO[target]
            touches = (
                (state[np.where(near >= 0, near, 0)] * mover[:, None] < 0) & (near >= 0)
            ).any(axis=1)
            if touches.any():
                return int(rng.choice(moves[touches]))
    return int(rng.choice(legal))


def play_against_games(
    engine: BatchedEngine,
    steps: int,
    seed: int,
    biases,
    stats: Counter,
    games: list[Game] | None = None,
) -> None:
    """Step `engine` with the policy and compare every game with a `Game` at every step."""
    n = engine.num_games
    rng = np.random.default_rng(seed)
    if games is None:
        games = [Game(engine.states[i].copy(), engine.max_moves) for i in range(n)]
    for i, game in enumerate(games):
        np.testing.assert_array_equal(engine.masks[i], game.legal_mask())
    for _ in range(steps):
        actions = np.array(
            [
                choose(engine.states[i], engine.masks[i], rng, biases[i % len(biases)])
                for i in range(n)
            ]
        )
        for i, a in enumerate(actions):
            if a == PASS_ACTION:
                stats["pass"] += 1
            elif a >= PUSH_BASE:
                stats["displacement"] += 1
            if games[i].grace is not None:
                stats["grace move"] += 1
            games[i].play(int(a))
        rewards, terminated, truncated = engine.step(actions)
        for i, game in enumerate(games):
            assert terminated[i] == game.terminated and truncated[i] == game.truncated, i
            if game.is_over:
                stats["terminated" if game.terminated else "truncated"] += 1
                np.testing.assert_array_equal(engine.final_states[i], game.state)
                result = game.score()
                assert rewards[i].tolist() == [result.reward(0), result.reward(1)], i
                if result.winner is None:
                    stats["draw"] += 1
                # Same-step reset: the row already holds the next episode's set-up.
                fresh = np.zeros(STATE_LEN, dtype=np.int32)
                setup_state(fresh, np.uint64(engine.seed), i, engine.episodes[i])
                np.testing.assert_array_equal(engine.states[i], fresh)
                games[i] = game = Game(engine.states[i].copy(), engine.max_moves)
            else:
                assert rewards[i].tolist() == [0.0, 0.0]
                np.testing.assert_array_equal(engine.states[i], game.state)
            np.testing.assert_array_equal(engine.masks[i], game.legal_mask())
            assert engine.counts[i] == game.legal_mask().sum()


def test_matches_game_move_for_move():
    """Natural ends (R16, R18, R19) with the default cap of 400."""
    stats: Counter = Counter()
    engine = BatchedEngine(48, seed=7)
    play_against_games(engine, 420, seed=1, biases=(0.0, 0.9, 0.6), stats=stats)
    assert stats["displacement"] > 20 and stats["grace move"] > 0, stats
    assert stats["terminated"] >= 20, stats


def test_matches_game_at_the_move_cap():
    """Truncation (R20) with a small cap, and games loaded from SPN that pass (R19)."""
    stats: Counter = Counter()
    engine = BatchedEngine(24, max_moves=60, seed=3)
    for i in (0, 5):
        engine.load(i, parse_spn(BOTH_STUCK))
    assert engine.masks[0].tolist() == [0] * PASS_ACTION + [1]
    play_against_games(engine, 130, seed=2, biases=(0.0, 0.9), stats=stats)
    assert stats["truncated"] >= 20 and stats["pass"] >= 4, stats
    with pytest.raises(ValueError, match="over"):
        engine.load(1, parse_spn(GRACE_STUCK))  # 80 moves: past this engine's cap


def test_setups_follow_r4_and_are_uniform():
    engine = BatchedEngine(4000, seed=11)
    boards = engine.states[:, :N_CELLS]
    red_edge = np.zeros(N_CELLS, bool)
    red_edge[[r * 10 + c for r in (0, 1, 8, 9) for c in range(2, 8)]] = True
    blue_edge = np.zeros(N_CELLS, bool)
    blue_edge[[r * 10 + c for r in range(2, 8) for c in (0, 1, 8, 9)]] = True
    assert ((boards > 0) <= red_edge).all() and ((boards < 0) <= blue_edge).all()
    for v in range(1, 5):
        assert ((boards == v).sum(axis=1) == 3).all() and ((boards == -v).sum(axis=1) == 3).all()
    assert (engine.states[:, N_CELLS:] == Game.new(seed=0).state[N_CELLS:]).all()
    # Red's first north slot (c10 or c9): each value appears about 1/4 of the time.
    first = np.where(boards[:, 2] != 0, boards[:, 2], boards[:, 12])
    freq = np.bincount(first, minlength=5)[1:] / len(first)
    assert np.all(np.abs(freq - 0.25) < 0.03), freq
    # Every set-up is a legal position that SPN writes and reads back.
    for i in range(0, 4000, 397):
        assert (parse_spn(to_spn(engine.states[i])) == engine.states[i]).all()


def test_seed_reproducibility_and_independence():
    a = BatchedEngine(16, seed=5)
    b = BatchedEngine(16, seed=5, num_chunks=3)  # another split of the games: same games
    c = BatchedEngine(6, seed=5)  # game i's set-ups do not depend on the batch size
    assert (a.states[:6] == c.states).all()
    assert not (BatchedEngine(16, seed=6).states == a.states).all()
    for t in range(300):
        actions = a.random_actions(t)
        a.step(actions)
        b.step(actions)
    assert (a.states == b.states).all() and (a.episodes == b.episodes).all()
    assert a.episodes.sum() > 0  # some games reset on the way
    # Episode e of game i is a function of (seed, i, e) only.
    i = int(np.argmax(a.episodes))
    fresh = np.zeros(STATE_LEN, dtype=np.int32)
    setup_state(fresh, np.uint64(5), i, 0)
    assert (fresh == c.states[i]).all() if i < 6 else True
    a.reset(5)
    assert (a.states[:6] == c.states).all() and a.episodes.sum() == 0
    unseeded = BatchedEngine(4)
    assert unseeded.seed != BatchedEngine(4).seed


def test_thread_count_does_not_change_games():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread only")
    results = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        try:
            engine = BatchedEngine(32, seed=9)
            for t in range(200):
                engine.step(engine.random_actions(t))
            results.append(engine.states.copy())
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert (results[0] == results[1]).all()


def test_illegal_action_names_the_game_and_changes_nothing():
    engine = BatchedEngine(5, seed=1)
    before = engine.states.copy()
    actions = engine.masks.argmax(axis=1)
    bad = actions.copy()
    bad[3] = PASS_ACTION  # never legal in a set-up
    with pytest.raises(IllegalActionError, match=r"game 3: action 3216 is not legal"):
        engine.step(bad)
    bad = actions.copy()
    bad[2] = N_ACTIONS
    with pytest.raises(IllegalActionError, match=r"game 2: action 3217 is out of range"):
        engine.step(bad)
    with pytest.raises(IllegalActionError, match="shape"):
        engine.step(actions[:4])
    with pytest.raises(IllegalActionError, match="integer"):
        engine.step(actions.astype(float))
    assert (engine.states == before).all()
    engine.step(actions)
    assert (engine.states[:, MOVES] == 1).all()


def test_pure_kernels_agree_with_game():
    n = 40
    scratch = new_batch_scratch(5)
    states = np.zeros((n, STATE_LEN), dtype=np.int32)
    episodes = np.arange(n, dtype=np.int64)
    reset_states(states, np.uint64(21), episodes)
    games = [Game(states[i].copy(), max_moves=30) for i in range(n)]
    masks = np.zeros((n, N_ACTIONS), dtype=np.int8)
    counts = np.zeros(n, dtype=np.int32)
    status = np.zeros(n, dtype=np.int64)
    rewards = np.zeros((n, 2), dtype=np.float32)
    actions = np.zeros(n, dtype=np.int64)
    seen = Counter()
    for t in range(70):
        legal_masks(states, 30, masks, counts, scratch)
        for i, game in enumerate(games):
            assert (masks[i] == game.legal_mask()).all() and counts[i] == game.legal_mask().sum()
        random_legal_actions(masks, counts, np.uint64(4), t, actions)
        for i, game in enumerate(games):
            if game.is_over:
                assert actions[i] == -1  # nothing legal: the kernels leave the game alone
            else:
                assert masks[i, actions[i]] == 1
                game.play(int(actions[i]))
        apply_actions(states, actions, scratch)
        statuses(states, 30, status)
        final_rewards(states, status, rewards, scratch)
        for i, game in enumerate(games):
            assert (states[i] == game.state).all() and status[i] == game.status
            seen[game.status] += 1
            expected = [0, 0] if not game.is_over else [game.score().reward(p) for p in (0, 1)]
            assert rewards[i].tolist() == expected
    assert seen[TRUNCATED] and seen[ONGOING], seen


def test_random_legal_actions_are_uniform():
    engine = BatchedEngine(1, seed=2)
    legal = np.flatnonzero(engine.masks[0])
    rows = 200 * len(legal)  # one position repeated: row i draws from the stream (1, i, 0)
    masks = np.repeat(engine.masks, rows, axis=0)
    counts = np.repeat(engine.counts, rows)
    out = np.zeros(rows, dtype=np.int64)
    random_legal_actions(masks, counts, np.uint64(1), 0, out)
    picks = Counter(out.tolist())
    assert set(picks) == set(legal.tolist())
    assert max(picks.values()) < 300 and min(picks.values()) > 120, picks


def test_random_legal_actions_of_matches_the_full_scan():
    # The fast chooser (own satellites' blocks, pushes, pass) picks exactly the action of the
    # full mask scan, over games with displacements, passes, grace and auto-resets.
    engine = BatchedEngine(64, max_moves=60, seed=8)
    fast = np.zeros(64, dtype=np.int64)
    full = np.zeros(64, dtype=np.int64)
    for t in range(300):
        random_legal_actions_of(engine.states, engine.masks, engine.counts, np.uint64(3), t, fast)
        random_legal_actions(engine.masks, engine.counts, np.uint64(3), t, full)
        assert (fast == full).all()
        engine.step(fast)
    engine = BatchedEngine(2, seed=0)
    engine.load(0, parse_spn(GRACE_STUCK))
    engine.load(1, parse_spn(BOTH_STUCK))
    fast = np.zeros(2, dtype=np.int64)
    random_legal_actions_of(engine.states, engine.masks, engine.counts, np.uint64(3), 0, fast)
    assert fast[0] == PASS_ACTION and fast[1] == PASS_ACTION


def test_observe_matches_the_batched_planes_kernel():
    from satellites_env.core.planes import fill_observations, observe_states

    engine = BatchedEngine(8, seed=5)
    for t in range(30):
        engine.step(engine.random_actions(t))
    players = engine.states[:, TO_MOVE].copy()
    out = np.zeros((8, N_CELLS, 22), dtype=np.float32)
    fill_observations(engine.states, players, engine.max_moves, out, engine.scratch)
    assert (out.reshape(8, 10, 10, 22) == engine.observe()).all()
    observe_states(engine.states, engine.max_moves, out, engine.scratch)
    assert (out.reshape(8, 10, 10, 22) == engine.observe()).all()


def test_grace_and_two_passes_end_in_the_batch():
    engine = BatchedEngine(2, seed=0)
    engine.load(0, parse_spn(GRACE_STUCK))
    engine.load(1, parse_spn(BOTH_STUCK))
    assert engine.states[0, GRACE] == 3 and engine.states[1, GRACE] == NO_GRACE
    rewards, terminated, _ = engine.step(np.array([PASS_ACTION, PASS_ACTION]))
    assert not terminated.any() and engine.states[0, GRACE] == 2 and engine.states[1, TO_MOVE] == 1
    rewards, terminated, truncated = engine.step(np.array([PASS_ACTION, PASS_ACTION]))
    assert terminated.all() and not truncated.any()
    assert rewards.tolist() == [[1.0, -1.0], [1.0, -1.0]]  # both won by red (see the crosscheck)
    assert (engine.episodes == 1).all() and (engine.states[:, MOVES] == 0).all()
    assert to_spn(engine.final_states[1]).endswith(" r - 2 52")


def test_observe_matches_the_single_game_planes():
    from satellites_env.core.engine import new_work
    from satellites_env.observation import fill_observation

    engine = BatchedEngine(6, seed=4)
    for t in range(40):
        engine.step(engine.random_actions(t))
    planes = engine.observe()
    assert planes.shape == (6, 10, 10, 22) and planes.dtype == np.float32
    one = np.zeros((N_CELLS, 22), dtype=np.float32)
    for i in range(6):
        fill_observation(
            engine.states[i], int(engine.states[i, TO_MOVE]), engine.max_moves, one, new_work()
        )
        assert (planes[i].reshape(N_CELLS, 22) == one).all()
    flat = np.zeros((6, N_CELLS, 22), dtype=np.float32)
    assert (engine.observe(flat).reshape(planes.shape) == planes).all()
    with pytest.raises(ValueError):
        engine.observe(np.zeros((6, N_CELLS, 22), dtype=np.float64))
