"""End-to-end checks of what the learner trains on and how it plays:

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
from satellites_env.core.state import TO_MOVE
from satellites_env.observation import observe
from training.alphazero.agent import AZAgent
from training.alphazero.config import AZSearchConfig
from training.alphazero.replay import ReplayBuffer, make_batch
from training.alphazero.search import NEED_ROOT, SLOTS, BatchedSearch
from training.alphazero.selfplay import SelfPlay
from training.alphazero.symmetry import ACTION_MAP, INVERSE, transform_mask, transform_planes
from training.common.network import build_network
from training.common.policy_agent import PolicyAgent


def noisy_logits(obs, policy_rows=None):
    """Random logits, value 0: a stand-in network (targets do not depend on its quality)."""
    n = len(obs)
    rng = np.random.default_rng(n)
    return rng.normal(size=(n, N_ACTIONS)).astype(np.float32), np.zeros(n, np.float32)


@pytest.fixture(scope="module")
def played():
    """Self-play with a 60-move cap so that games finish; (selfplay, buffer, finished games
    as (final state, winner, length, first buffer row))."""
    config = AZSearchConfig(
        games=6, max_moves=60, full_simulations=8, cheap_simulations=4, full_fraction=0.5
    )
    selfplay = SelfPlay(config, seed=1)
    buffer = ReplayBuffer(5_000)
    finals = []
    game_over = selfplay._game_over

    def capture(b, winner, buf):
        finals.append(
            (
                selfplay.search.tree.game_state[b].copy(),
                winner,
                len(selfplay.trajectories[b]),
                buf.size,
            )
        )
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
    # consecutive stored positions of one game follow each other by one legal action
    final, _, length, start = finals[0]
    for row in range(start, start + length - 1):
        state = buffer.states[row]
        nxt = buffer.states[row + 1]
        legal = np.flatnonzero(engine.legal_action_mask(state, work))
        assert any(np.array_equal(engine.step(state, int(a), work), nxt) for a in legal)


def test_policy_targets_map_with_the_planes_and_point_at_legal_actions(played):
    _, buffer, _ = played
    rows = np.flatnonzero(buffer.policy_weight[: buffer.size] > 0)
    assert len(rows) > 20
    syms = np.random.default_rng(0).integers(0, 8, len(rows))
    batch = make_batch(buffer, rows, syms, 60)
    work = engine.new_work()
    for k, (row, t) in enumerate(zip(rows, syms, strict=False)):
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
    """AZAgent's search with Gumbel root noise (as in self-play) and the value `evaluate`:
    with flat priors, g = 0 would always consider the same first m action ids."""

    def __init__(self, net, simulations, seed, evaluate):
        super().__init__(net, simulations, seed)
        self.evaluate = evaluate

    def act(self, game):
        search = BatchedSearch(1, self.options(game.max_moves))
        tree = search.tree
        tree.game_state[0] = game.state
        tree.phase[0] = NEED_ROOT
        tree.kind[0] = 0
        tree.gumbel[0] = self.rng.gumbel(size=SLOTS).astype(np.float32)
        while True:
            search.step(self.evaluate)
            if search.finished.ready[0]:
                return int(search.finished.action[0])


def test_search_with_a_knowledgeable_value_beats_random():
    agent = _NoisyRootAgent(
        build_network(8, 0, seed=0), simulations=16, seed=3, evaluate=_heuristic_evaluator()
    )
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

    def masked_forward(self, x, mask):
        logits, value = self(x)
        return logits.masked_fill(mask == 0, float("-inf")), value


@pytest.mark.parametrize("moves", [0, 1, 7])
def test_raw_policy_argmax_is_legal_and_sees_the_player_to_move(moves):
    rng = np.random.default_rng(moves)
    game = Game(engine.init(rng=rng))
    for _ in range(moves):
        game.play(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    legal = np.flatnonzero(game.legal_mask())
    illegal = int(np.flatnonzero(game.legal_mask() == 0)[0])
    net = _Recorder(illegal)
    action = PolicyAgent(net).act(game)
    assert action == legal.max()  # the largest legal logit, never the illegal favourite
    seen = net.seen[0].numpy()
    expected = observe(game.state, game.to_move, game.max_moves, engine.new_work())
    np.testing.assert_array_equal(seen, expected)
    net.favourite = int(legal[0])
    assert PolicyAgent(net).act(game) == legal[0]
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
            buffer.add(
                game.state[None].copy(),
                actions,
                policy,
                np.zeros(1, np.float32),
                np.ones(1, np.float32),
            )
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


def test_the_loss_runs_the_policy_heads_on_policy_targets_only_and_stays_the_full_batch_loss():
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
        actions[0, : len(picks)] = picks
        policy = np.zeros((1, SLOTS), np.float16)
        policy[0, : len(picks)] = 1.0 / len(picks)
        weight = [0.0, 1.0, 0.0, 0.5][buffer.size % 4]
        buffer.add(
            game.state[None].copy(),
            actions,
            policy,
            np.array([rng.choice([-1.0, 1.0])], np.float32),
            np.array([weight], np.float32),
        )
        game.play(int(rng.choice(legal)))
    net = build_network(8, 1, seed=0, landing_values=True)
    batch = make_batch(buffer, np.arange(buffer.size), rng.integers(0, 8, buffer.size), 200)
    loss, _ = policy_value_loss(net, batch, 0.7)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in net.named_parameters()}
    net.zero_grad()
    logits, value = net.forward_all(batch["obs"])  # every row through every head
    illegal = batch["mask"] == 0
    log_probs = torch.log_softmax(logits.masked_fill(illegal, float("-inf")), -1)
    per_sample = -(batch["policy"] * log_probs.masked_fill(illegal, 0.0)).sum(-1)
    weight = batch["policy_weight"]
    expected = (per_sample * weight).sum() / weight.sum() + 0.7 * torch.mean(
        (value - batch["value"]) ** 2
    )
    expected.backward()
    torch.testing.assert_close(loss, expected)
    for name, p in net.named_parameters():
        torch.testing.assert_close(grads[name], p.grad, msg=name)

    value_only = dict(batch, policy_weight=torch.zeros_like(weight))
    loss, parts = policy_value_loss(net, value_only, 1.0)
    assert parts["policy"] == 0.0 and parts["entropy"] == 0.0
    torch.testing.assert_close(loss, torch.mean((value - batch["value"]) ** 2).detach())


def _record_selfplay(selfplay, evaluate, n_games):
    """Plays until n_games games have ended; returns the moves played, (state, action, search
    kind, dagger side) each, the games, (dagger side, winner, its trajectory, the buffer rows
    it added) each, and the buffer."""
    out, moves, games = selfplay.search.finished, [], []
    game_over, step = selfplay._game_over, selfplay.search.step

    def recorded_game_over(b, winner, buffer):
        side, trajectory, before = (
            int(selfplay.dagger_side[b]),
            list(selfplay.trajectories[b]),
            buffer.size,
        )
        added = game_over(b, winner, buffer)  # (which may start the next game in slot b)
        assert added == len(trajectory) == buffer.size - before
        games.append((side, winner, trajectory, slice(before, buffer.size)))
        return added

    def recorded_step(*args, **kwargs):
        step(*args, **kwargs)
        for b in np.flatnonzero(out.ready):
            moves.append(
                (
                    out.state[b].copy(),
                    int(out.action[b]),
                    int(out.kind[b]),
                    int(selfplay.dagger_side[b]),
                )
            )

    selfplay._game_over, selfplay.search.step = recorded_game_over, recorded_step
    buffer = ReplayBuffer(10_000)
    while len(games) < n_games:
        selfplay.play(100, evaluate, buffer)
    return moves, games, buffer


def test_dagger_colour_plays_the_raw_policys_move_and_its_positions_stay_targets():
    """search.dagger = 1: in every game one colour (each in some games) plays the most likely
    legal action of the network's prior (the raw-policy agent's move), whatever its search
    prefers; the other colour plays its search's choice; every position is stored as before,
    full searches of both colours as policy targets."""
    config = AZSearchConfig(
        games=8,
        max_moves=40,
        full_simulations=8,
        cheap_simulations=4,
        full_fraction=0.5,
        max_considered=16,
        dagger=1.0,
    )
    prior = np.random.default_rng(0).normal(size=N_ACTIONS).astype(np.float32)

    def fixed_prior(obs, policy_rows=None):
        n = len(obs)
        return np.broadcast_to(prior, (n, N_ACTIONS)).copy(), np.zeros(n, np.float32)

    selfplay = SelfPlay(config, seed=5)
    moves, games, buffer = _record_selfplay(selfplay, fixed_prior, 16)
    raw_moves = {"dagger": [], "search": []}
    for state, action, _, dagger_side in moves:
        legal = np.array(sorted(Game(state.copy()).legal_actions()))
        if len(legal) >= 2:
            player = "dagger" if state[TO_MOVE] == dagger_side else "search"
            raw_moves[player].append(action == int(legal[np.argmax(prior[legal])]))
    for _, _, trajectory, rows in games:
        assert list(buffer.policy_weight[rows]) == [float(s[3]) for s in trajectory]
    assert {m[3] for m in moves} == {0, 1} and {g[0] for g in games} == {0, 1}
    assert all(raw_moves["dagger"]) and len(raw_moves["dagger"]) > 100
    assert np.mean(raw_moves["search"]) < 0.8  # the Gumbel search samples other moves
    assert selfplay.stats.dagger_games == len(games) == selfplay.stats.games
    assert selfplay.stats.dagger_wins == sum(g[0] == g[1] for g in games)
    off = SelfPlay(dataclasses.replace(config, dagger=0.0), seed=5)
    assert (off.dagger_side == -1).all() and not off.search.tree.raw_move.any()
