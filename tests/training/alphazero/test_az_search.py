"""The batched Gumbel search: schedules, improved-policy targets, finding a winning move."""

import numpy as np
import pytest
import torch

from satellites_env.core import engine
from satellites_env.core.board import N_ACTIONS, N_CELLS
from satellites_env.core.game import Game
from training.alphazero.agent import AZAgent
from training.alphazero.search import (
    FINISHED_FIELDS,
    TREE_FIELDS,
    BatchedSearch,
    Finished,
    Tree,
    considered_visits,
    new_finished,
    new_tree,
    search_options,
)
from training.common.network import BatchedInference, build_network


def uniform(obs, policy_rows=None):
    """A know-nothing evaluator: equal logits, value 0."""
    n = len(obs)
    return np.zeros((n, N_ACTIONS), np.float32), np.zeros(n, np.float32)


def test_the_typed_records_hold_the_arrays_their_tables_allocate():
    """`Tree` and `Finished` name the rows of TREE_FIELDS and FINISHED_FIELDS in their order:
    the records are filled positionally from the tables."""
    assert Tree._fields == tuple(row[0] for row in TREE_FIELDS)
    assert Finished._fields == tuple(row[0] for row in FINISHED_FIELDS)
    tree, finished = new_tree(2, 3), new_finished(2)
    for name, scope, shape, dtype, fill in TREE_FIELDS:
        array = getattr(tree, name)
        assert array.shape == ((2, 3) if scope == "node" else (2,)) + tuple(shape), name
        assert array.dtype == dtype and (array == fill).all(), name
    for name, shape, dtype in FINISHED_FIELDS:
        assert (
            getattr(finished, name).shape == (2, *shape) and getattr(finished, name).dtype == dtype
        )


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
                    if (
                        engine.status(after) != engine.ONGOING
                        and engine.winner(after[:N_CELLS]) == mover
                    ):
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
    search = BatchedSearch(len(states), search_options([simulations]))
    tree, out = search.tree, search.finished
    for b, state in enumerate(states):
        tree.game_state[b] = state
    if gumbel is not None:
        tree.gumbel[:] = gumbel
    done = np.zeros(len(states), bool)
    actions = np.zeros(len(states), np.int64)
    policies = [None] * len(states)
    for _ in range(10 * (simulations + 1)):
        search.step(evaluate)
        for b in np.flatnonzero(out.ready):
            if not done[b]:
                done[b] = True
                actions[b] = out.action[b]
                n = out.n_legal[b]
                policies[b] = (out.actions[b, :n].copy(), out.policy[b, :n].copy())
        tree.phase[done] = -1  # park finished games (never NEED_ROOT or SEARCHING again)
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
            state = engine.step(
                state, int(rng.choice(np.flatnonzero(engine.legal_action_mask(state))))
            )
        if engine.status(state) == engine.ONGOING:
            states.append(state)
    torch.manual_seed(0)
    evaluate = BatchedInference(build_network(16, 1, seed=0))
    gumbel = rng.gumbel(size=(len(states), 256)).astype(np.float32)
    _, policies = run_search(states, 8, evaluate, gumbel)
    for state, (actions, probs) in zip(states, policies, strict=False):
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
    only, as the network's evaluator does (or, with `every_row`, of every row), and counts the
    rows it was asked for."""

    def __init__(self, seed: int = 0, every_row: bool = False):
        rng = np.random.default_rng(seed)
        self.every_row = every_row
        self.w_logits = rng.normal(0, 0.3, (N_CELLS * 22, N_ACTIONS)).astype(np.float32)
        self.w_value = rng.normal(0, 0.05, N_CELLS * 22).astype(np.float32)
        self.rows = self.policy_rows = 0

    def __call__(self, obs, policy_rows=None):
        flat = obs.reshape(len(obs), -1)
        if policy_rows is None or self.every_row:
            policy_rows = np.arange(len(obs))
        self.rows += len(obs)
        self.policy_rows += len(policy_rows)
        logits = (
            np.stack([flat[i] @ self.w_logits for i in policy_rows])
            if len(policy_rows)
            else np.zeros((0, N_ACTIONS), np.float32)
        )
        values = np.array([np.tanh(flat[i] @ self.w_value) for i in range(len(obs))], np.float32)
        return logits.astype(np.float32), values


def searched_moves(search: BatchedSearch, evaluate, states, kinds, moves: int):
    """Each game's first `moves` finished searches: (state, action, legal actions, improved
    policy, root value), the games playing on from their moves."""
    tree, out = search.tree, search.finished
    for b, state in enumerate(states):
        tree.game_state[b] = state
    tree.kind[:] = kinds
    record = [[] for _ in states]
    while min(len(r) for r in record) < moves:
        for b in search.needs_root():  # the noise of game b's k-th search, whenever it starts
            tree.gumbel[b] = np.random.default_rng((b, len(record[b]))).gumbel(
                size=tree.gumbel.shape[1]
            )
        search.step(evaluate)
        for b in np.flatnonzero(out.ready):
            n = int(out.n_legal[b])
            record[b].append(
                (
                    out.state[b].tolist(),
                    int(out.action[b]),
                    out.actions[b, :n].tolist(),
                    out.policy[b, :n].tolist(),
                    float(out.value[b]),
                )
            )
            if out.done[b]:
                tree.game_state[b] = states[b]
    return [r[:moves] for r in record]


def test_the_search_asks_only_for_the_logits_it_reads_and_searches_the_same_with_all():
    """Leaves that are never descended from need their value alone: the search asks for far
    fewer logits than rows, and with an evaluator that returns every row's logits anyway it
    plays exactly the same moves and targets (the two forms `evaluate` may answer in)."""
    rng = np.random.default_rng(5)
    states = [engine.init(rng=rng) for _ in range(6)]
    kinds = [0, 1, 0, 1, 1, 0]
    options = search_options([8, 64], max_considered=64, c_scale=1.0, max_moves=200)
    lean, full = RowWise(), RowWise(every_row=True)
    first = searched_moves(BatchedSearch(6, options), lean, states, kinds, 12)
    second = searched_moves(BatchedSearch(6, options), full, states, kinds, 12)
    assert first == second
    assert lean.policy_rows < 0.5 * lean.rows
    assert full.policy_rows == full.rows


def test_considered_actions_follow_the_budget():
    from training.alphazero.search import considered_for

    assert considered_for(64, 128) == 64  # every considered action visited at least once
    assert considered_for(64, 64) == 64
    assert considered_for(16, 8) == 4  # a small budget halves: rounds to halve in
    assert considered_for(16, 2) == 2 and considered_for(1, 8) == 1


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
            maps[value - 1, int(LANDING[action])].item(), abs=1e-5
        )
    assert values == {1, 2, 3, 4}


def test_a_norm_free_trunk_starts_as_the_identity_learns_its_gains_and_round_trips():
    """norm: none (SkipInit): each block's residual gain starts at 0, so a block passes its
    (non-negative) input through unchanged; the gains get gradients, the network has no
    GroupNorm, and the flag survives a checkpoint round trip."""
    from satellites_env.observation import observe
    from training.common.checkpoint import load_network

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
    assert all(
        block.gain.grad is not None and block.gain.grad.abs().item() > 0 for block in net.trunk
    )
    copy = load_network({"model": net.state_dict(), "model_shape": net.shape})
    assert copy.norm == "none"
    with torch.no_grad():
        for a, b in zip(copy(obs), net(obs), strict=False):
            assert torch.allclose(a, b)
    with pytest.raises(ValueError, match="norm must be one of"):
        build_network(16, 2, norm="batch")


def test_the_network_plugs_into_the_uct_search_as_its_evaluator():
    """NetworkEvaluator gives MCTSAgent the network's prior over the legal actions and its
    value from the player to move's side; the shipped network searched that way beats random."""
    from satellites_env.agents import MCTSAgent, make_agent
    from satellites_env.arena import match
    from satellites_env.observation import observe
    from training.alphazero.agent import NetworkEvaluator
    from training.common.checkpoint import load_network

    net = load_network("pretrained")
    evaluator = NetworkEvaluator(net)
    game = Game.new(seed=3)
    game.play(int(game.legal_actions()[5]))
    legal = np.flatnonzero(game.legal_mask())
    evaluation = evaluator.evaluate(game.state, legal, game.max_moves)
    logits, value = BatchedInference(net)(
        observe(game.state, game.to_move, game.max_moves, engine.new_work())[None]
    )
    expected = np.exp(logits[0, legal] - logits[0, legal].max())
    np.testing.assert_allclose(evaluation.policy, expected / expected.sum(), rtol=1e-5)
    assert evaluation.value == pytest.approx(float(value[0]), abs=1e-6)
    agent = MCTSAgent(16, seed=0, evaluator=evaluator)
    result = match(agent, make_agent("random", seed=1), 2, seed=4, max_moves=120)
    assert result.a_wins == 2, result.as_dict()


def test_search_games_played_all_at_once_are_the_search_agents_games():
    """play_search_games finds the search's moves of every game in one batched search; each
    game is the one `arena.play_pairing_game` plays with an `AZAgent` (same set-up, colours,
    opponent seeds and moves)."""
    from satellites_env.agents import make_agent
    from satellites_env.arena import play_pairing_game
    from training.alphazero.config import AZSearchConfig
    from training.alphazero.games import play_search_games

    net = build_network(8, 1, seed=0)
    settings = AZSearchConfig(max_considered=8, c_scale=1.0)
    games = [0, 1, 2, 5]
    batched = play_search_games(net, "greedy", games, 7, 60, simulations=6, settings=settings)
    agent = AZAgent(net, simulations=6, settings=settings)
    assert [i for i, _ in batched] == games
    for i, record in batched:
        alone = play_pairing_game(agent, make_agent("greedy", seed=0), i, 7, 60)
        assert record.moves == alone.moves and record.start_spn == alone.start_spn
        assert record.result == alone.result
        side = "red" if i % 2 == 0 else "blue"
        assert record.players[side] == "az-search:6"


def test_raw_policy_games_played_all_at_once_are_the_arenas_games():
    """The trainer's raw-policy games, played all at once (one forward pass a move for every
    waiting game), are the games `arena.play_pairing_game` plays with the raw policy."""
    from satellites_env.agents import make_agent
    from satellites_env.arena import play_pairing_game
    from training.alphazero.trainer import play_policy_games, raw_policy

    net = build_network(8, 1, seed=0)
    for opponent in ("random", "greedy"):
        games = [0, 1, 2, 3, 6]
        batched = play_policy_games(net, opponent, games, 3, 60)
        assert [i for i, _ in batched] == games
        for i, record in batched:
            alone = play_pairing_game(raw_policy(net), make_agent(opponent, seed=0), i, 3, 60)
            assert record.moves == alone.moves and record.start_spn == alone.start_spn
            assert record.result == alone.result and record.players == alone.players


@pytest.mark.parametrize("rival", ["az:pretrained:3", "checkpoint:pretrained"])
def test_search_games_against_a_network_batch_its_moves_too(rival):
    """A network opponent's moves in play_search_games come from its own batched search
    (`BatchedPlayer`); the games are still the ones the arena plays one at a time."""
    from satellites_env.agents import make_agent
    from satellites_env.arena import play_pairing_game
    from training.alphazero.config import AZSearchConfig
    from training.alphazero.games import play_search_games

    net = build_network(8, 1, seed=0)
    settings = AZSearchConfig(max_considered=8, c_scale=1.0)
    batched = play_search_games(net, rival, [0, 1, 2], 4, 40, simulations=4, settings=settings)
    agent = AZAgent(net, simulations=4, settings=settings)
    for i, record in batched:
        alone = play_pairing_game(agent, make_agent(rival, seed=0), i, 4, 40)
        assert record.moves == alone.moves and record.result == alone.result
