"""The batched Gumbel search: schedules, improved-policy targets, finding a winning move."""

import numpy as np
import pytest
import torch

from satellites_env.core import engine
from satellites_env.core.board import N_ACTIONS, N_CELLS
from satellites_env.core.game import Game
from training.alphazero.agent import AZAgent
from training.alphazero.network import Evaluator, build_network
from training.alphazero.search import NEED_ROOT, BatchedSearch, considered_visits


def uniform(obs, policy_rows=None):
    """A know-nothing evaluator: equal logits, value 0."""
    n = len(obs)
    return np.zeros((n, N_ACTIONS), np.float32), np.zeros(n, np.float32)


def test_sequential_halving_schedule_matches_mctx():
    assert considered_visits(4, 8) == [0, 0, 0, 0, 1, 1, 2, 2]
    assert considered_visits(16, 32) == [0] * 16 + [1] * 8 + [2] * 4 + [3] * 4
    assert considered_visits(1, 3) == [0, 1, 2]
    assert considered_visits(2, 4) == [0, 0, 1, 1]


def winning_positions(limit: int, max_legal: int, seed: int = 0):
    """(state, winning action) where exactly one legal action ends the game with a win for the
    player who plays it, and there are at most `max_legal` legal actions."""
    rng = np.random.default_rng(seed)
    work = engine.new_work()
    found = []
    for _ in range(400):
        state = engine.init(rng=rng)
        while engine.game_status(state, 400) == engine.ONGOING:
            legal = np.flatnonzero(engine.legal_action_mask(state, work))
            if 2 <= len(legal) <= max_legal:
                mover = int(state[N_CELLS])
                wins = []
                for a in legal:
                    after = engine.step(state, int(a), work)
                    if engine.status(after) != engine.ONGOING and \
                            engine.winner(after[:N_CELLS]) == mover:
                        wins.append(int(a))
                if len(wins) == 1:
                    found.append((state.copy(), wins[0]))
                    if len(found) >= limit:
                        return found
            engine.apply_unchecked(state, int(rng.choice(legal)), work)
    return found


@pytest.fixture(scope="module")
def wins():
    found = winning_positions(4, max_legal=8)
    assert found, "no position with exactly one winning move"
    return found


def run_search(states, simulations, evaluate, gumbel=None):
    search = BatchedSearch(len(states), [simulations])
    trees = search.trees
    for b, state in enumerate(states):
        trees.game_state[b] = state
    if gumbel is not None:
        trees.gumbel[:] = gumbel
    done = np.zeros(len(states), bool)
    actions = np.zeros(len(states), np.int64)
    policies = [None] * len(states)
    for _ in range(10 * (simulations + 1)):
        search.step(evaluate)
        for b in np.flatnonzero(trees.out_ready):
            if not done[b]:
                done[b] = True
                actions[b] = trees.out_action[b]
                n = trees.out_count[b]
                policies[b] = (trees.out_actions[b, :n].copy(), trees.out_policy[b, :n].copy())
        trees.phase[done] = -1  # park finished games (never NEED_ROOT or SEARCHING again)
        if done.all():
            break
    assert done.all()
    return actions, policies


def test_search_finds_the_one_winning_move_with_few_simulations(wins):
    states = [s for s, _ in wins]
    actions, _ = run_search(states, 16, uniform)
    assert actions.tolist() == [a for _, a in wins]


def test_search_agent_finds_the_winning_move_through_the_game_api(wins):
    state, winning = wins[0]
    net = build_network(16, 1, seed=0)
    agent = AZAgent(net, simulations=16)
    assert agent.act(Game(state.copy())) == winning


def test_improved_policy_is_a_distribution_over_the_legal_actions_only():
    rng = np.random.default_rng(3)
    states = []
    for _ in range(6):
        state = engine.init(rng=rng)
        for _ in range(int(rng.integers(0, 40))):
            if engine.status(state) != engine.ONGOING:
                break
            state = engine.step(state, int(rng.choice(np.flatnonzero(
                engine.legal_action_mask(state)))))
        if engine.status(state) == engine.ONGOING:
            states.append(state)
    torch.manual_seed(0)
    evaluate = Evaluator(build_network(16, 1, seed=0))
    gumbel = rng.gumbel(size=(len(states), 256)).astype(np.float32)
    _, policies = run_search(states, 8, evaluate, gumbel)
    for state, (actions, probs) in zip(states, policies):
        legal = np.flatnonzero(engine.legal_action_mask(state))
        assert sorted(actions.tolist()) == legal.tolist()
        dense = np.zeros(N_ACTIONS)
        dense[actions] = probs
        assert dense.sum() == pytest.approx(1.0, abs=1e-5)
        assert (dense[engine.legal_action_mask(state) == 0] == 0).all()
        assert (probs > 0).all()


class RowWise:
    """A fixed random linear evaluator computed one row at a time, so a position's logits and
    value do not depend on the other rows of the batch; it returns the logits of `policy_rows`
    only, as the network's evaluator does, and counts the rows it was asked for."""

    def __init__(self, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.w_logits = rng.normal(0, 0.3, (N_CELLS * 22, N_ACTIONS)).astype(np.float32)
        self.w_value = rng.normal(0, 0.05, N_CELLS * 22).astype(np.float32)
        self.rows = self.policy_rows = 0

    def __call__(self, obs, policy_rows=None):
        flat = obs.reshape(len(obs), -1)
        policy_rows = np.arange(len(obs)) if policy_rows is None else policy_rows
        self.rows += len(obs)
        self.policy_rows += len(policy_rows)
        logits = np.stack([flat[i] @ self.w_logits for i in policy_rows]) if len(policy_rows) \
            else np.zeros((0, N_ACTIONS), np.float32)
        values = np.array([np.tanh(flat[i] @ self.w_value) for i in range(len(obs))], np.float32)
        return logits.astype(np.float32), values


def searched_moves(search: BatchedSearch, evaluate, states, kinds, moves: int):
    """Each game's first `moves` finished searches: (state, action, legal actions, improved
    policy, root value), the games playing on from their moves."""
    trees = search.trees
    for b, state in enumerate(states):
        trees.game_state[b] = state
    trees.kind[:] = kinds
    record = [[] for _ in states]
    while min(len(r) for r in record) < moves:
        for b in search.needs_root():  # the noise of game b's k-th search, whenever it starts
            trees.gumbel[b] = np.random.default_rng((b, len(record[b]))).gumbel(
                size=trees.gumbel.shape[1])
        search.step(evaluate)
        for b in np.flatnonzero(trees.out_ready):
            n = int(trees.out_count[b])
            record[b].append((trees.out_state[b].tolist(), int(trees.out_action[b]),
                              trees.out_actions[b, :n].tolist(), trees.out_policy[b, :n].tolist(),
                              float(trees.out_value[b])))
            if trees.out_done[b]:
                trees.game_state[b] = states[b]
    return [r[:moves] for r in record]


def test_value_only_leaves_search_exactly_as_leaves_with_logits():
    """The policy heads skip the leaves that are never descended from; the searches are the
    same as with every leaf's logits, move for move, in full (16 simulations over 16 actions:
    every leaf value-only), cheap (4 over 2: the root's children need their logits) and
    late-game searches (fewer legal actions than considered: deeper trees). Forcing every leaf
    to be value-only (a wrong schedule) still searches the same, through refills."""
    rng = np.random.default_rng(11)
    states = []
    while len(states) < 8:  # half of them openings, half late positions with few moves
        state = engine.init(rng=rng)
        few = len(states) % 2 == 1
        for _ in range(0 if not few else 400):
            legal = np.flatnonzero(engine.legal_action_mask(state))
            if len(legal) <= 12 or engine.status(state) != engine.ONGOING:
                break
            state = engine.step(state, int(rng.choice(legal)))
        if engine.status(state) == engine.ONGOING:
            states.append(state)
    kinds = np.array([0, 1] * 4, np.int32)
    settings = dict(budgets=[4, 16], max_considered=16, c_scale=1.0, max_moves=200)

    def run(value_only, force=False):
        search = BatchedSearch(len(states), value_only_leaves=value_only, **settings)
        if force:
            search.trees.revisits[:] = 1  # only roots get logits: every descent refills
        evaluate = RowWise()
        record = searched_moves(search, evaluate, states, kinds, moves=6)
        return record, evaluate, search.trees.refills

    peer, peer_eval, peer_refills = run(False)
    shipped, shipped_eval, shipped_refills = run(True)
    forced, forced_eval, forced_refills = run(True, force=True)
    assert shipped == peer
    assert forced == peer
    assert peer_refills == 0 and peer_eval.policy_rows == peer_eval.rows
    assert shipped_refills == 0  # sequential halving predicts every descent
    assert shipped_eval.rows == peer_eval.rows  # no extra evaluation, fewer policy heads
    assert shipped_eval.policy_rows < 0.6 * shipped_eval.rows
    assert forced_refills > 0
    late = [len(moves) for r in peer for _, _, moves, _, _ in r]
    assert min(late) < 16  # some searches had fewer legal actions than considered


def test_considered_actions_follow_the_budget():
    from training.alphazero.search import considered_for

    assert considered_for(64, 128) == 64  # every considered action visited at least once
    assert considered_for(64, 64) == 64
    assert considered_for(16, 8) == 4  # a small budget halves: rounds to halve in
    assert considered_for(16, 2) == 2 and considered_for(1, 8) == 1


@pytest.mark.parametrize("rescale", [True, False])
def test_rescaling_decides_whether_small_q_differences_make_sharp_targets(rescale):
    """Values that differ by at most 0.01: min-max rescaling (mctx) stretches them to the whole
    sigma range, a near one-hot target; without it the target stays near the flat prior."""
    rng = np.random.default_rng(5)
    state = engine.init(rng=rng)
    for _ in range(30):
        state = engine.step(state, int(rng.choice(np.flatnonzero(
            engine.legal_action_mask(state)))))

    def tiny_values(obs, policy_rows=None):
        n = len(obs)
        values = (np.abs(obs.reshape(n, -1) * np.arange(2200)).sum(1) % 101) / 10_000
        return np.zeros((n, N_ACTIONS), np.float32), values.astype(np.float32)

    search = BatchedSearch(1, [128], max_considered=64, c_scale=1.0, rescale=rescale)
    search.trees.game_state[0] = state
    for _ in range(200):
        search.step(tiny_values)
        if search.trees.out_ready[0]:
            break
    n = int(search.trees.out_count[0])
    top = float(search.trees.out_policy[0, :n].max())
    if rescale:
        assert top > 0.5
    else:
        assert top < 3.0 / n


def test_landing_values_head_reads_the_map_of_the_moving_value():
    """With landing_values, a move's logit is the landing map of the value on its from-cell,
    at its landing cell (plus the move head, zeroed here)."""
    from satellites_env.observation import observe
    from training.common.network import LANDING

    net = build_network(16, 1, seed=0, landing_values=True)
    torch.nn.init.zeros_(net.move_head.weight)
    torch.nn.init.zeros_(net.move_head.bias)
    state = engine.init(seed=3)
    obs = torch.as_tensor(observe(state, 0, 400, engine.new_work()))[None]
    with torch.no_grad():
        logits, _ = net(obs)
        maps = net.landing_head(net.trunk(net.stem(obs.permute(0, 3, 1, 2))))[0].flatten(1)
    legal = np.flatnonzero(engine.legal_action_mask(state))
    values = set()
    for action in legal:
        value = abs(int(state[action // 32]))
        values.add(value)
        assert logits[0, action].item() == pytest.approx(
            maps[value - 1, int(LANDING[action])].item(), abs=1e-5)
    assert values == {1, 2, 3, 4}


def test_max_pool_value_head_sees_one_cell_the_mean_hides():
    """With max_pool the value reads each channel's board maximum as well as its mean, and the
    flag survives a checkpoint round trip."""
    from training.common.checkpoint import network_from_checkpoint

    net = build_network(16, 1, seed=0, max_pool=True)
    assert net.value_head[0].in_features == 32
    h = torch.zeros(2, 16, 10, 10)
    h[1, 3, 4, 5] = 50.0  # same mean per channel as a board spread evenly...
    h[0, 3] = 0.5  # ...but only one cell carries it
    pooled = h.mean(dim=(2, 3))
    assert torch.allclose(pooled[0], pooled[1])
    values = net._value_of(h, pooled)
    assert values[0].item() != pytest.approx(values[1].item(), abs=1e-6)
    state = engine.init(seed=1)
    from satellites_env.observation import observe
    obs = torch.as_tensor(observe(state, 0, 400, engine.new_work()))[None]
    copy = network_from_checkpoint({"model": net.state_dict(), "model_shape": net.shape})
    assert copy.max_pool and net.shape["max_pool"] is True
    with torch.no_grad():
        assert torch.allclose(copy(obs)[1], net(obs)[1])


def test_a_norm_free_trunk_starts_as_the_identity_learns_its_gains_and_round_trips():
    """norm: none (SkipInit): each block's residual gain starts at 0, so a block passes its
    (non-negative) input through unchanged; the gains get gradients, the network has no
    GroupNorm, and the flag survives a checkpoint round trip."""
    from satellites_env.observation import observe
    from training.common.checkpoint import network_from_checkpoint

    net = build_network(16, 2, seed=0, landing_values=True, norm="none")
    assert not any(isinstance(m, torch.nn.GroupNorm) for m in net.modules())
    assert net.shape["norm"] == "none" and "norm" not in build_network(16, 2, seed=0).shape
    x = torch.relu(torch.randn(3, 16, 10, 10))
    for block in net.trunk:
        assert torch.equal(block(x), x)
    state = engine.init(seed=2)
    obs = torch.as_tensor(observe(state, 0, 400, engine.new_work()))[None]
    logits, value = net(obs)
    (logits.logsumexp(1).sum() + value.sum()).backward()
    assert all(block.gain.grad is not None and block.gain.grad.abs().item() > 0
               for block in net.trunk)
    copy = network_from_checkpoint({"model": net.state_dict(), "model_shape": net.shape})
    assert copy.norm == "none"
    with torch.no_grad():
        for a, b in zip(copy(obs), net(obs)):
            assert torch.allclose(a, b)
    with pytest.raises(ValueError, match="norm must be one of"):
        build_network(16, 2, norm="batch")


@pytest.mark.parametrize("global_pool", [False, True])
def test_global_pooling_lets_one_block_see_the_far_corner(global_pool):
    """model.global_pool (KataGo's global pooling bias): a block's second convolution gets a
    per-channel bias from its first one's board mean and maximum, so one block's output at
    cell (9, 9) depends on its input at (0, 0); without it a block sees 2 cells around. The
    flag survives a checkpoint round trip, and a shape with a non-boolean flag is refused."""
    from training.common.checkpoint import CheckpointError, check_shape, network_from_checkpoint

    net = build_network(16, 1, seed=0, norm="none", global_pool=global_pool)
    block = net.trunk[0]
    with torch.no_grad():
        block.gain.fill_(1.0)  # SkipInit starts each block as the identity
    x = torch.relu(torch.randn(1, 16, 10, 10, generator=torch.Generator().manual_seed(0)))
    far = x.clone()
    far[0, :, 0, 0] += 5.0
    with torch.no_grad():
        changed = (block(far) - block(x)).abs().amax(dim=1)[0]
    assert (changed[9, 9].item() > 1e-4) == global_pool
    assert changed[:3, :3].amax().item() > 1e-4
    assert net.shape.get("global_pool", False) is global_pool
    copy = network_from_checkpoint({"model": net.state_dict(), "model_shape": net.shape})
    obs = torch.rand(2, 10, 10, 22)
    with torch.no_grad():
        for a, b in zip(copy(obs), net(obs)):
            assert torch.allclose(a, b)
    with pytest.raises(CheckpointError, match="global_pool must be true or false"):
        check_shape({**net.shape, "global_pool": 1})


def _brute_wins_at_once(state, max_moves):
    """The rules' answer through Game: can the player to move end the game with a win now?"""
    game = Game(state.copy(), max_moves)
    me = game.to_move
    for action in game.legal_actions():
        after = game.clone()
        after.play(int(action))
        finals = [after]
        if after.pending_push is not None:
            finals = []
            for push in after.legal_actions():
                pushed = after.clone()
                pushed.play(int(push))
                finals.append(pushed)
        for final in finals:
            outcome = final.outcome()
            if outcome is not None and outcome.winner is not None and int(outcome.winner) == me:
                return True
    return False


def _late_states(count: int, max_moves: int, seed: int):
    """States from random games, sampled over the whole game (endgames, grace moves and
    pending pushes included)."""
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        state = engine.init(rng=rng)
        while engine.status(state, max_moves) == engine.ONGOING:
            late = sum(engine.count_connected(state[:N_CELLS])) >= 13
            if rng.random() < (0.04 if late else 0.004):  # spread over many games
                states.append(state.copy())
            state = engine.step(state, int(rng.choice(np.flatnonzero(
                engine.legal_action_mask(state)))))
    return states[:count]


def test_win_check_finds_exactly_the_one_move_wins():
    """wins_at_once agrees with the rules played out through Game on states from the whole
    game, with the move cap near and far; both answers occur."""
    from training.alphazero.search import wins_at_once

    scratch = np.zeros((2, engine.STATE_LEN), np.int32)
    masks = np.zeros((2, N_ACTIONS), np.int8)
    work = engine.new_work()
    answers = []
    for max_moves in (400, 60):
        for state in _late_states(400, max_moves, seed=max_moves):
            expected = _brute_wins_at_once(state, max_moves)
            assert wins_at_once(state, max_moves, scratch, masks, work) == expected, \
                Game(state.copy(), max_moves).to_spn()
            answers.append(expected)
    assert 5 <= sum(answers) <= len(answers) - 5


def test_win_check_values_a_leaf_the_opponent_wins_from_as_lost():
    """With win_check, a root move after which the opponent can win at once is valued -1
    exactly (no network call for that leaf): with flat logits and zero values its target
    probability falls below every other move's; without it every move stays equal (a search
    that visits each root move once)."""
    from training.alphazero.search import wins_at_once

    scratch = np.zeros((2, engine.STATE_LEN), np.int32)
    masks = np.zeros((2, N_ACTIONS), np.int8)
    work = engine.new_work()
    for state in _late_states(400, 400, seed=3):
        legal = np.flatnonzero(engine.legal_action_mask(state))
        if not 2 <= len(legal) <= 64:
            continue
        solved, opponent_wins = [], []
        for a in legal:
            child = engine.step(state, int(a))
            solved.append(wins_at_once(child, 400, scratch, masks, work))
            opponent_wins.append(solved[-1] and child[engine.TO_MOVE] != state[engine.TO_MOVE])
        solved, opponent_wins = np.array(solved), np.array(opponent_wins)
        if 0 < opponent_wins.sum() < len(legal) and not any(
                engine.status(engine.step(state, int(a)), 400) != engine.ONGOING
                for a in legal):
            break
    else:
        pytest.fail("no state with both kinds of moves")

    def flat(obs, policy_rows=None):
        n = len(obs) if policy_rows is None else len(policy_rows)
        flat.rows += len(obs)
        return np.zeros((n, N_ACTIONS), np.float32), np.zeros(len(obs), np.float32)

    targets = {}
    for check in (False, True):
        flat.rows = 0
        search = BatchedSearch(1, [len(legal)], max_considered=len(legal), c_scale=1.0,
                               rescale=False, win_check=check)
        search.trees.game_state[0] = state
        while not search.trees.out_ready[0]:
            search.step(flat)
        n = int(search.trees.out_count[0])
        policy = dict(zip(search.trees.out_actions[0, :n].tolist(),
                          search.trees.out_policy[0, :n].tolist()))
        targets[check] = np.array([policy[int(a)] for a in legal])
        # the root and every leaf but (with the check) those solved by a one-move win
        assert flat.rows == 1 + len(legal) - (solved.sum() if check else 0)
    assert np.allclose(targets[False], 1.0 / len(legal), rtol=1e-4)
    assert targets[True][opponent_wins].max() < targets[True][~opponent_wins].min()
