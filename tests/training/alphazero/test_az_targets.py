"""End-to-end checks of what the learner trains on and how it plays (bug hunt of issue 13):

* value targets of finished self-play games = the final result (engine.winner_code on the
  final board) from the view of the player to move in each stored position;
* policy targets of a training batch map with the same symmetry as the planes and the mask,
  and their argmax, mapped back, is legal in the stored state;
* the search with a knowledgeable evaluator (the documented heuristic as value, flat priors)
  beats `random`: isolates the search from the learning;
* the raw-policy agent takes the argmax over legal actions only, from the observation of the
  player to move.
"""

import dataclasses

import numpy as np
import pytest
import torch

from satellites_env.agents import make_agent
from satellites_env.agents.heuristic import heuristic_value
from satellites_env.arena import match
from satellites_env.core import engine
from satellites_env.core.board import N_ACTIONS, N_CELLS, PASS_ACTION
from satellites_env.core.game import Game
from satellites_env.core.state import MOVES, TO_MOVE
from satellites_env.observation import observe
from training.alphazero.agent import AZAgent, AZPolicyAgent
from training.alphazero.config import AZSearchConfig
from training.alphazero.network import build_network
from training.alphazero.replay import ReplayBuffer, make_batch
from training.alphazero.search import NEED_ROOT, SLOTS
from training.alphazero.selfplay import SelfPlay
from training.alphazero.symmetry import ACTION_MAP, INVERSE, transform_mask, transform_planes


def noisy_logits(obs, policy_rows=None):
    """Random logits, value 0: a stand-in network (targets do not depend on its quality)."""
    n = len(obs)
    rng = np.random.default_rng(n)
    return rng.normal(size=(n, N_ACTIONS)).astype(np.float32), np.zeros(n, np.float32)


@pytest.fixture(scope="module")
def played():
    """Self-play with a 60-move cap so that games finish; (selfplay, buffer, finished games
    as (final state, winner, length, first buffer row))."""
    config = AZSearchConfig(games=6, max_moves=60, full_simulations=8, cheap_simulations=4,
                            full_fraction=0.5)
    selfplay = SelfPlay(config, seed=1)
    buffer = ReplayBuffer(5_000)
    finals = []
    game_over = selfplay._game_over

    def capture(b, winner, buf):
        finals.append((selfplay.search.trees.game_state[b].copy(), winner,
                       len(selfplay.trajectories[b]), buf.size))
        return game_over(b, winner, buf)

    selfplay._game_over = capture
    selfplay.play(400, noisy_logits, buffer)
    assert len(finals) >= 4
    return selfplay, buffer, finals


def test_value_targets_are_the_final_result_for_the_player_to_move(played):
    _, buffer, finals = played
    work = engine.new_work()
    results = set()
    for final, winner, length, start in finals:
        code = engine.winner_code(final[:N_CELLS], work)
        assert code == winner
        results.add(code)
        for row in range(start, start + length):
            state = buffer.states[row]
            expected = 0.0 if code == engine.DRAW else (1.0 if state[TO_MOVE] == code else -1.0)
            assert buffer.value[row] == expected
    # the ownership target: the final control map (red's view) on every position of the game
    control = np.zeros(N_CELLS, np.int8)
    for final, _, length, start in finals:
        engine.fill_control_map(final[:N_CELLS], work, control)
        assert (buffer.ownership[start:start + length] == control).all()
    # consecutive stored positions of one game follow each other by one legal action
    final, _, length, start = finals[0]
    for row in range(start, start + length - 1):
        state = buffer.states[row]
        nxt = buffer.states[row + 1]
        legal = np.flatnonzero(engine.legal_action_mask(state, work))
        assert any(np.array_equal(engine.step(state, int(a), work), nxt) for a in legal)


def test_policy_targets_map_with_the_planes_and_point_at_legal_actions(played):
    _, buffer, _ = played
    rows = np.flatnonzero(buffer.policy_weight[:buffer.size] > 0)
    assert len(rows) > 20
    syms = np.random.default_rng(0).integers(0, 8, len(rows))
    batch = make_batch(buffer, rows, syms, 60)
    work = engine.new_work()
    for k, (row, t) in enumerate(zip(rows, syms)):
        state = buffer.states[row]
        legal = engine.legal_action_mask(state, work)
        target = batch["policy"][k].numpy()
        assert legal[ACTION_MAP[INVERSE[t], int(target.argmax())]]
        stored = np.zeros(N_ACTIONS, np.float32)
        n = int((buffer.actions[row] >= 0).sum())
        stored[buffer.actions[row, :n]] = buffer.policy[row, :n]
        np.testing.assert_allclose(transform_mask(stored, t), target, atol=2e-3)
        planes = observe(state, int(state[TO_MOVE]), 60, work)
        np.testing.assert_array_equal(transform_planes(planes, t), batch["obs"][k].numpy())
        np.testing.assert_array_equal(transform_mask(legal, t), batch["mask"][k].numpy())


def _heuristic_evaluator():
    work = engine.new_work()

    def evaluate(obs, policy_rows=None):
        n = len(obs)
        planes = obs.reshape(n, N_CELLS, -1)
        values = np.zeros(n, np.float32)
        for i in range(n):
            board = np.zeros(N_CELLS, np.int32)
            for v in range(4):  # own values on planes 0..3, the opponent's on 4..7
                board += (v + 1) * (planes[i, :, v] > 0)
                board -= (v + 1) * (planes[i, :, 4 + v] > 0)
            values[i] = heuristic_value(board, 1, work)
        return np.zeros((n, N_ACTIONS), np.float32), values

    return evaluate


class _NoisyRootAgent(AZAgent):
    """AZAgent with Gumbel root noise (as in self-play): with flat priors, g = 0 would always
    consider the same first m action ids."""

    def act(self, game):
        search = self._search_for(game.max_moves)
        trees = search.trees
        trees.game_state[0] = game.state
        trees.phase[0] = NEED_ROOT
        trees.kind[0] = 0
        trees.gumbel[0] = self.rng.gumbel(size=SLOTS).astype(np.float32)
        while True:
            search.step(self._evaluate)
            if trees.out_ready[0]:
                return int(trees.out_action[0])


def test_search_with_a_knowledgeable_value_beats_random():
    agent = _NoisyRootAgent(build_network(8, 0, seed=0), simulations=16, seed=3)
    agent._evaluate = _heuristic_evaluator()
    result = match(agent, make_agent("random", seed=1), 6, seed=5, max_moves=200)
    assert result.a_wins >= 4 and result.b_wins == 0, result.as_dict()  # draws: capped games


class _Recorder(torch.nn.Module):
    """A fake network: records its input, puts the largest logit on `favourite`."""

    def __init__(self, favourite):
        super().__init__()
        self.favourite = favourite
        self.seen = None

    def forward(self, x):
        self.seen = x.clone()
        logits = torch.arange(N_ACTIONS, dtype=torch.float32)[None] * 1e-3
        logits[0, self.favourite] = 100.0
        return logits, torch.zeros(1)


@pytest.mark.parametrize("moves", [0, 1, 7])
def test_raw_policy_argmax_is_legal_and_sees_the_player_to_move(moves):
    rng = np.random.default_rng(moves)
    game = Game(engine.init(rng=rng))
    for _ in range(moves):
        game.play(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    legal = np.flatnonzero(game.legal_mask())
    illegal = int(np.flatnonzero(game.legal_mask() == 0)[0])
    net = _Recorder(illegal)
    action = AZPolicyAgent(net).act(game)
    assert action == legal.max()  # the largest legal logit, never the illegal favourite
    seen = net.seen[0].numpy()
    expected = observe(game.state, game.to_move, game.max_moves, engine.new_work())
    np.testing.assert_array_equal(seen, expected)
    net.favourite = int(legal[0])
    assert AZPolicyAgent(net).act(game) == legal[0]
    assert PASS_ACTION == N_ACTIONS - 1


def test_training_loop_fits_greedy_targets_under_symmetries():
    """Supervised sanity check of the loss and the batches: a small network trained with the
    trainer's loss on one-hot targets of the greedy agent (random symmetries) learns to pick
    greedy's move in the untransformed positions far above chance."""
    from training.alphazero.trainer import policy_value_loss

    rng = np.random.default_rng(0)
    greedy = make_agent("greedy", seed=0)
    buffer = ReplayBuffer(256)
    game = Game(engine.init(rng=rng))
    while buffer.size < 48:
        if game.is_over:
            game = Game(engine.init(rng=rng))
        action = greedy.act(game)
        actions = np.full((1, SLOTS), -1, np.int16)
        actions[0, 0] = action
        policy = np.zeros((1, SLOTS), np.float16)
        policy[0, 0] = 1.0
        if len(game.legal_actions()) > 1:
            buffer.add(game.state[None].copy(), actions, policy, np.zeros(1, np.float32),
                       np.ones(1, np.float32))
        game.play(int(rng.choice(game.legal_actions())) if rng.random() < 0.5 else action)
    torch.manual_seed(0)
    net = build_network(32, 1, seed=0)
    optimizer = torch.optim.AdamW(net.parameters(), lr=3e-3)
    train_rng = np.random.default_rng(1)
    rows = np.arange(buffer.size)
    for _ in range(120):
        batch = make_batch(buffer, rows, train_rng.integers(0, 8, len(rows)), 400)
        net.train()
        loss, _ = policy_value_loss(net, batch, 1.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    net.eval()
    plain = make_batch(buffer, rows, np.zeros(len(rows), np.int64), 400)
    with torch.no_grad():
        logits, _ = net(plain["obs"])
    picks = logits.masked_fill(plain["mask"] == 0, float("-inf")).argmax(1)
    accuracy = float((picks == plain["policy"].argmax(1)).float().mean())
    assert accuracy >= 0.8, accuracy  # chance: about 1 / 60


@pytest.mark.parametrize("ownership", [False, True])
def test_the_loss_runs_the_policy_heads_on_policy_targets_only_and_stays_the_full_batch_loss(
        ownership):
    """policy_value_loss feeds only the positions with a policy weight > 0 to the policy heads;
    its loss and every gradient equal those of the whole batch's weighted cross-entropy (rows of
    weight 0 add exactly 0); a batch without policy targets trains the value alone."""
    from training.alphazero.trainer import policy_value_loss

    rng = np.random.default_rng(3)
    buffer = ReplayBuffer(64)
    game = Game(engine.init(rng=rng))
    while buffer.size < 12:
        if game.is_over:
            game = Game(engine.init(rng=rng))
        legal = game.legal_actions()
        actions = np.full((1, SLOTS), -1, np.int16)
        picks = rng.choice(legal, size=min(3, len(legal)), replace=False)
        actions[0, :len(picks)] = picks
        policy = np.zeros((1, SLOTS), np.float16)
        policy[0, :len(picks)] = 1.0 / len(picks)
        weight = [0.0, 1.0, 0.0, 0.5][buffer.size % 4]
        buffer.add(game.state[None].copy(), actions, policy,
                   np.array([rng.choice([-1.0, 1.0])], np.float32), np.array([weight], np.float32))
        game.play(int(rng.choice(legal)))
    net = build_network(8, 1, seed=0, ownership=ownership, landing_values=True)
    batch = make_batch(buffer, np.arange(buffer.size), rng.integers(0, 8, buffer.size), 200)
    loss, _ = policy_value_loss(net, batch, 0.7, ownership_coef=0.3)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in net.named_parameters()}
    net.zero_grad()
    logits, value, owned = net.forward_all(batch["obs"])  # every row through every head
    illegal = batch["mask"] == 0
    log_probs = torch.log_softmax(logits.masked_fill(illegal, float("-inf")), -1)
    per_sample = -(batch["policy"] * log_probs.masked_fill(illegal, 0.0)).sum(-1)
    weight = batch["policy_weight"]
    expected = ((per_sample * weight).sum() / weight.sum()
                + 0.7 * torch.mean((value - batch["value"]) ** 2))
    if ownership:
        expected = expected + 0.3 * torch.mean((owned - batch["ownership"]) ** 2)
    expected.backward()
    torch.testing.assert_close(loss, expected)
    for name, p in net.named_parameters():
        torch.testing.assert_close(grads[name], p.grad, msg=name)

    value_only = dict(batch, policy_weight=torch.zeros_like(weight))
    loss, parts = policy_value_loss(net, value_only, 1.0)
    assert parts["policy"] == 0.0 and parts["entropy"] == 0.0
    torch.testing.assert_close(loss, torch.mean((value - batch["value"]) ** 2).detach())


def test_value_mix_blends_the_result_with_the_root_value():
    """replay.value_mix = a: the value target is (1 - a) z + a v_root, v_root the position's own
    search value (in [-1, 1], same view as z)."""
    config = AZSearchConfig(games=4, max_moves=40, full_simulations=4, cheap_simulations=2,
                            full_fraction=0.5)
    plain, mixed = ReplayBuffer(2_000), ReplayBuffer(2_000)

    def small_values(obs, policy_rows=None):  # a value that varies with the position, so roots differ from 0
        n = len(obs)
        return np.zeros((n, N_ACTIONS), np.float32), (obs.reshape(n, -1).sum(1) % 7 / 10
                                                      - 0.3).astype(np.float32)

    SelfPlay(config, seed=2).play(200, small_values, plain)
    SelfPlay(config, seed=2, value_mix=0.25).play(200, small_values, mixed)
    n = plain.size
    assert n > 40 and mixed.size == n
    assert np.array_equal(plain.states[:n], mixed.states[:n])  # same games
    z = plain.value[:n]
    root = (mixed.value[:n] - 0.75 * z) / 0.25
    assert np.abs(root).max() <= 1.0 + 1e-5
    assert np.abs(root).max() > 0.05  # the root values took part


def test_cheap_policy_weight_weighs_only_the_cheap_searches_targets():
    """replay.cheap_policy_weight = w: a cheap search's improved policy is stored with weight w,
    a full search's with 1, a forced move's (one legal action, no search) with 0; the games,
    values and targets are those of the run without it."""
    config = AZSearchConfig(games=4, max_moves=40, full_simulations=8, cheap_simulations=4,
                            full_fraction=0.3)
    plain, weighted = ReplayBuffer(2_000), ReplayBuffer(2_000)
    SelfPlay(config, seed=3).play(200, noisy_logits, plain)
    SelfPlay(config, seed=3, cheap_policy_weight=0.25).play(200, noisy_logits, weighted)
    n = plain.size
    assert n > 40 and weighted.size == n
    for name in ("states", "actions", "policy", "value"):
        assert np.array_equal(getattr(plain, name)[:n], getattr(weighted, name)[:n]), name
    before, after = plain.policy_weight[:n], weighted.policy_weight[:n]
    assert set(np.unique(before)) <= {0.0, 1.0}
    assert np.array_equal(after[before == 1.0], before[before == 1.0])
    assert set(np.unique(after[before == 0.0])) <= {0.0, 0.25}
    cheap = np.flatnonzero(after == 0.25)
    assert len(cheap) > 10
    policy = weighted.policy[cheap].astype(np.float32)
    assert np.allclose(policy.sum(1), 1.0, atol=1e-2)  # a distribution ...
    assert np.all(weighted.actions[cheap][policy > 0] >= 0)  # ... over listed legal actions


def test_noise_moves_limits_the_gumbel_noise_to_each_games_opening():
    """search.noise_moves = N: a search starting at move N or later of its game has no root
    noise (g = 0: the search's best move), an earlier one has its Gumbel draw."""
    config = AZSearchConfig(games=4, max_moves=40, full_simulations=8, cheap_simulations=4,
                            full_fraction=0.3, noise_moves=6)
    selfplay = SelfPlay(config, seed=5)
    trees = selfplay.search.trees
    new_roots = selfplay._new_roots
    seen = {"early": 0, "late": 0}

    def checked_new_roots():
        rows = selfplay.search.needs_root()
        new_roots()
        for b in rows:
            noise = np.abs(trees.gumbel[b]).max()
            if trees.game_state[b, MOVES] >= 6:
                assert noise == 0.0
                seen["late"] += 1
            else:
                assert noise > 0.0
                seen["early"] += 1

    selfplay._new_roots = checked_new_roots
    buffer = ReplayBuffer(2_000)
    selfplay.play(200, noisy_logits, buffer)
    assert seen["early"] >= 20 and seen["late"] >= 100 and buffer.size > 40


def _lowest_first(obs, policy_rows=None):
    """A network that strongly prefers low action ids (logit -0.5 x id), value 0."""
    n = len(obs)
    return np.broadcast_to(-0.5 * np.arange(N_ACTIONS, dtype=np.float32),
                           (n, N_ACTIONS)).copy(), np.zeros(n, np.float32)


@pytest.mark.parametrize("random_moves", [0.0, 1.0])
def test_random_moves_are_uniform_over_the_legal_actions_and_set_no_policy_target(random_moves):
    """search.random_moves = 1: every move is a uniform draw over the legal actions, whatever
    the network prefers (here its lowest legal id), and no position becomes a policy target;
    with 0 the same network's search plays its preferred move."""
    config = AZSearchConfig(games=8, max_moves=30, full_simulations=8, cheap_simulations=4,
                            full_fraction=1.0, max_considered=16, random_moves=random_moves)
    selfplay = SelfPlay(config, seed=2)
    trees = selfplay.search.trees
    ranks, lowest = [], 0
    while len(ranks) < 400:
        selfplay._new_roots()
        selfplay.search.step(_lowest_first)
        for b in np.flatnonzero(trees.out_ready):
            legal = sorted(Game(trees.out_state[b].copy()).legal_actions())
            if len(legal) < 2:
                continue
            rank = legal.index(int(trees.out_action[b]))
            ranks.append(rank / (len(legal) - 1))
            lowest += rank == 0
            assert trees.out_kind[b] == (0 if random_moves else 1)
    if random_moves:
        assert abs(np.mean(ranks) - 0.5) < 0.05 and lowest / len(ranks) < 0.05
    else:
        assert lowest / len(ranks) > 0.5
    buffer = ReplayBuffer(4_000)
    selfplay.play(600, _lowest_first, buffer)
    assert buffer.size > 0
    assert (buffer.policy_weight[:buffer.size] > 0).any() == (random_moves == 0.0)


def _record_selfplay(selfplay, evaluate, n_games):
    """Plays until n_games games have ended; returns the moves played, (state, action, search
    kind, random side, dagger side) each, the games, (random side, dagger side, winner, its
    trajectory, the buffer rows it added) each, and the buffer."""
    trees, moves, games = selfplay.search.trees, [], []
    game_over, step = selfplay._game_over, selfplay.search.step

    def sides(b):
        return int(selfplay.random_side[b]), int(selfplay.dagger_side[b])

    def recorded_game_over(b, winner, buffer):
        game_sides, trajectory, before = sides(b), list(selfplay.trajectories[b]), buffer.size
        added = game_over(b, winner, buffer)  # (which may start the next game in slot b)
        assert added == len(trajectory) == buffer.size - before
        games.append((*game_sides, winner, trajectory, slice(before, buffer.size)))
        return added

    def recorded_step(evaluate):
        step(evaluate)
        for b in np.flatnonzero(trees.out_ready):
            moves.append((trees.out_state[b].copy(), int(trees.out_action[b]),
                          int(trees.out_kind[b]), *sides(b)))

    selfplay._game_over, selfplay.search.step = recorded_game_over, recorded_step
    buffer = ReplayBuffer(10_000)
    while len(games) < n_games:
        selfplay.play(100, evaluate, buffer)
    return moves, games, buffer


def test_a_random_opponent_plays_one_colour_uniformly_and_sets_no_policy_target():
    """search.random_opponent = 1: in every game one colour (each in some games) plays uniform
    random moves, whatever the network prefers; the other colour searches (and plays the
    network's preferred move); the random colour's positions are value targets only."""
    config = AZSearchConfig(games=8, max_moves=40, full_simulations=8, cheap_simulations=4,
                            full_fraction=1.0, max_considered=16, random_opponent=1.0)
    selfplay = SelfPlay(config, seed=3)
    moves, games, buffer = _record_selfplay(selfplay, _lowest_first, 24)
    ranks = {"random": [], "search": []}
    for state, action, kind, random_side, _ in moves:
        legal = sorted(Game(state.copy()).legal_actions())
        if len(legal) >= 2:
            player = "random" if state[TO_MOVE] == random_side else "search"
            ranks[player].append(legal.index(action) / (len(legal) - 1))
            assert kind == (0 if player == "random" else 1)
    for opponent, _, _, trajectory, rows in games:
        to_move = [int(s[0][TO_MOVE]) for s in trajectory]
        assert list(buffer.states[rows, TO_MOVE]) == to_move
        assert list(buffer.policy_weight[rows]) == [float(t != opponent and s[6])
                                                    for t, s in zip(to_move, trajectory)]
    assert {m[3] for m in moves} == {0, 1} and {g[0] for g in games} == {0, 1}
    assert abs(np.mean(ranks["random"]) - 0.5) < 0.05
    assert np.mean(np.array(ranks["search"]) == 0.0) > 0.5
    assert selfplay.stats.opponent_games == len(games) == selfplay.stats.games


def test_lambda_returns_bootstrap_from_the_next_root_values_in_each_players_view():
    """TD(lambda) targets by hand: the last position keeps its result; the sign flips where the
    player to move changes and not through grace moves; a forced move (no search) passes the
    return on. lambda = 1 gives the results, lambda = 0 the next root value."""
    from training.alphazero.config import az_config_from_dict
    from training.alphazero.generator import build_selfplay
    from training.alphazero.selfplay import lambda_returns

    to_move = np.array([0, 1, 0, 0, 1])  # red, blue, then red twice (a grace move), blue
    root = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    searched = np.array([1, 1, 0, 1, 1], bool)  # position 2 was a forced move
    result = np.array([1, -1, 1, 1, -1], np.float32)  # red won
    np.testing.assert_allclose(lambda_returns(to_move, root, searched, result, 0.5),
                               [0.0625, -0.325, 0.325, 0.25, -1.0], rtol=1e-6)
    np.testing.assert_allclose(lambda_returns(to_move, root, searched, result, 1.0), result)
    np.testing.assert_allclose(lambda_returns(to_move, root, searched, result, 0.0),
                               [-0.2, -0.4, 0.4, -0.5, -1.0], rtol=1e-6)
    assert build_selfplay(az_config_from_dict({"replay": {"td_lambda": 0.7}}), 0, 2).td_lambda \
        == 0.7


@pytest.mark.parametrize("capped_value", [0.0, 0.5])
def test_capped_value_scales_the_value_targets_of_games_the_cap_stopped_only(capped_value):
    """replay.capped_value c: a game the training cap stopped (R20 truncation) gives c times its
    score at the cap to each of its positions (0: as a draw); a game the rules ended keeps its
    result. The same games with and without it."""
    rng = np.random.default_rng(0)
    state = engine.init(seed=2)
    history = [state]
    while not engine.is_terminal(state, 10**6):  # a random game that the rules end
        state = engine.step(state, int(rng.choice(np.flatnonzero(engine.legal_action_mask(state)))))
        history.append(state)
    late = history[-3]  # 2 of its 6 legal moves end the game by the rules; the cap 4 moves away
    config = AZSearchConfig(games=8, max_moves=int(late[MOVES]) + 4, full_simulations=4,
                            cheap_simulations=2, full_fraction=0.5)
    runs = []
    for scale in (1.0, capped_value):
        selfplay, buffer, ends = SelfPlay(config, seed=4, capped_value=scale), \
            ReplayBuffer(2_000), []
        for b in range(config.games):
            selfplay.search.trees.game_state[b] = late
        game_over = selfplay._game_over

        def capture(b, winner, buf, selfplay=selfplay, game_over=game_over, ends=ends):
            final = selfplay.search.trees.game_state[b]
            ends.append((engine.status(final, config.max_moves), buf.size,
                         len(selfplay.trajectories[b])))
            return game_over(b, winner, buf)

        selfplay._game_over = capture
        selfplay.play(config.games * 10, noisy_logits, buffer)
        runs.append((buffer, ends[:config.games]))
    (plain, ends), (capped, capped_ends) = runs
    assert ends == capped_ends  # the same games
    statuses = {status for status, _, _ in ends}
    assert statuses == {engine.TERMINATED, engine.TRUNCATED}  # both kinds of end occur
    for status, start, length in ends:
        rows = slice(start, start + length)
        assert np.array_equal(plain.states[rows], capped.states[rows])
        if status == engine.TRUNCATED:
            assert (plain.value[rows] != 0).any()
            assert np.array_equal(capped.value[rows], capped_value * plain.value[rows])
        else:
            assert np.array_equal(capped.value[rows], plain.value[rows])


def test_dagger_colour_plays_the_raw_policys_move_and_its_positions_stay_targets():
    """search.dagger = 1: in every game one colour (each in some games) plays the most likely
    legal action of the network's prior (the raw-policy agent's move), whatever its search
    prefers; the other colour plays its search's choice; every position is stored as before,
    full searches of both colours as policy targets."""
    config = AZSearchConfig(games=8, max_moves=40, full_simulations=8, cheap_simulations=4,
                            full_fraction=0.5, max_considered=16, dagger=1.0)
    prior = np.random.default_rng(0).normal(size=N_ACTIONS).astype(np.float32)

    def fixed_prior(obs, policy_rows=None):
        n = len(obs)
        return np.broadcast_to(prior, (n, N_ACTIONS)).copy(), np.zeros(n, np.float32)

    selfplay = SelfPlay(config, seed=5)
    moves, games, buffer = _record_selfplay(selfplay, fixed_prior, 16)
    raw_moves = {"dagger": [], "search": []}
    for state, action, _, _, dagger_side in moves:
        legal = np.array(sorted(Game(state.copy()).legal_actions()))
        if len(legal) >= 2:
            player = "dagger" if state[TO_MOVE] == dagger_side else "search"
            raw_moves[player].append(action == int(legal[np.argmax(prior[legal])]))
    for _, _, _, trajectory, rows in games:
        assert list(buffer.policy_weight[rows]) == [float(s[5] and s[6]) for s in trajectory]
    assert {m[4] for m in moves} == {0, 1} and {g[1] for g in games} == {0, 1}
    assert all(raw_moves["dagger"]) and len(raw_moves["dagger"]) > 100
    assert np.mean(raw_moves["search"]) < 0.8  # the Gumbel search samples other moves
    assert selfplay.stats.dagger_games == len(games) == selfplay.stats.games
    assert selfplay.stats.dagger_wins == sum(g[1] == g[2] for g in games)
    off = SelfPlay(dataclasses.replace(config, dagger=0.0), seed=5)
    assert (off.dagger_side == -1).all() and not off.search.trees.raw_move.any()


def test_surprise_weights_share_a_games_policy_weight_by_kl_to_the_prior():
    """replay.surprise_weight = s (KataGo's policy surprise weighting): a game's full searches
    keep their total policy weight, a share 1 - s spread evenly and s in proportion to each
    one's KL(improved policy || prior); the games, values and targets are unchanged."""
    config = AZSearchConfig(games=6, max_moves=40, full_simulations=16, cheap_simulations=4,
                            full_fraction=0.5, max_considered=16)
    prior = np.random.default_rng(1).normal(size=N_ACTIONS).astype(np.float32)

    def prior_and_values(obs, policy_rows=None):  # values that vary, so the targets move off the prior
        n = len(obs)
        return (np.broadcast_to(prior, (n, N_ACTIONS)).copy(),
                (obs.reshape(n, -1).sum(1) % 7 / 10 - 0.3).astype(np.float32))

    _, plain_games, plain = _record_selfplay(SelfPlay(config, seed=6), prior_and_values, 6)
    _, games, weighted = _record_selfplay(SelfPlay(config, seed=6, surprise_weight=0.5),
                                          prior_and_values, 6)
    n = min(plain.size, weighted.size)
    for name in ("states", "actions", "policy", "value"):
        assert np.array_equal(getattr(plain, name)[:n], getattr(weighted, name)[:n]), name
    assert len(games) >= 6 and [len(g[3]) for g in games[:6]] == [len(g[3]) for g in plain_games[:6]]
    spread = []
    for _, _, _, trajectory, rows in games:
        full = np.array([bool(s[5]) for s in trajectory])
        weights = weighted.policy_weight[rows]
        assert np.all(weights[~full] == 0.0)
        if not full.any():
            continue
        surprise = np.array([s[7] for s in trajectory])[full]
        # the stored surprise is the KL of the stored target from the prior over the legal actions
        for row, kl in zip(np.arange(rows.start, rows.stop)[full], surprise):
            count = int((weighted.actions[row] >= 0).sum())
            target = weighted.policy[row, :count].astype(np.float64)
            logits = prior[weighted.actions[row, :count]].astype(np.float64)
            log_prior = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
            kept = target > 0
            expected = float((target[kept] * (np.log(target[kept]) - log_prior[kept])).sum())
            assert kl == pytest.approx(expected, rel=0.02, abs=2e-3)
        assert weights[full].sum() == pytest.approx(full.sum(), rel=1e-5)
        assert np.allclose(weights[full], 0.5 + 0.5 * full.sum() * surprise / surprise.sum(),
                           rtol=1e-5)
        spread.append(weights[full].max() - weights[full].min())
    assert max(spread) > 0.5  # some searches surprised more than others


def test_surprise_weights_without_any_surprise_stay_even():
    from training.alphazero.selfplay import surprise_weights
    assert np.array_equal(surprise_weights(np.zeros(3, np.float32), 0.5), np.ones(3))
    assert np.allclose(surprise_weights(np.array([0.0, 1.0, 3.0], np.float32), 1.0),
                       [0.0, 0.75, 2.25])
