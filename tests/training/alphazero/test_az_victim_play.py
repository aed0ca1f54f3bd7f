"""Victim-play (A-MCTS-S): inside an exploiter's search, the target's nodes take the target
network's policy, one call per network a step; off, the search is today's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from test_az_search import RowWise, searched_moves
from test_az_training import TINY

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_exploit import config_file, exploit  # noqa: F401 (config_file: a fixture)

from satellites_env import cli
from satellites_env.agents import make_agent
from satellites_env.core import engine
from satellites_env.core.engine import TO_MOVE
from satellites_env.observation import observe
from training.alphazero.config import AZConfig
from training.alphazero.replay import ReplayBuffer
from training.alphazero.search import BatchedSearch, search_options
from training.alphazero.seats import TargetPolicy, target_policy
from training.alphazero.selfplay import SelfPlay
from training.common.config import ConfigError
from training.common.network import BatchedInference, build_network
from training.exploit import exploit_config

MAX_MOVES = 200


def positions(count: int, seed: int = 11) -> list[np.ndarray]:
    """Ongoing positions a few random moves into a game."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        state = engine.init(rng=rng)
        for _ in range(int(rng.integers(0, 12))):
            state = engine.step(
                state, int(rng.choice(np.flatnonzero(engine.legal_action_mask(state))))
            )
            if engine.status(state) != engine.ONGOING:
                break
        if engine.status(state) == engine.ONGOING:
            found.append(state)
    return found


def searched_trees(states, evaluate, victim, colours, steps: int, budget: int = 64):
    """The trees of searches from `states` after `steps` simulation steps (mid-search), game
    b's target the colour `colours[b]` (-1: none)."""
    search = BatchedSearch(
        len(states), search_options([budget], max_considered=4, max_moves=MAX_MOVES)
    )
    for b, state in enumerate(states):
        search.tree.game_state[b] = state
    search.tree.victim[:] = colours
    for _ in range(steps):
        search.step(evaluate, victim=victim)
    assert not search.finished.ready.any()
    return search


def nodes(tree, b):
    """(node, its legal actions listed as children) of every node of game b with logits."""
    for node in range(int(tree.num_nodes[b])):
        if tree.node_policy[b, node]:
            n = int(tree.node_children[b, node])
            yield node, tree.child_action[b, node, :n].astype(np.int64)


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def raw_policy(net, state, legal):
    """The network's own policy over the legal actions of `state`, computed apart from the
    search: its planes from the player to move's side, its logits, a softmax."""
    obs = observe(state, int(state[TO_MOVE]), MAX_MOVES, engine.new_work())
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs[None]))
    return softmax(logits[0].double().numpy()[legal])


def test_the_targets_nodes_hold_its_policy_and_the_exploiters_nodes_its_own():
    states = positions(4)
    # the target is the colour not to move at the root: the exploiter searches its own move
    colours = [1 - int(s[TO_MOVE]) for s in states]
    exploiter, target = build_network(8, 1, seed=0), build_network(8, 1, seed=1)
    search = searched_trees(
        states, BatchedInference(exploiter), BatchedInference(target), colours, steps=30
    )
    tree = search.tree
    seen = {0: 0, 1: 0}
    for b, colour in enumerate(colours):
        for node, legal in nodes(tree, b):
            is_target = int(tree.node_state[b, node, TO_MOVE]) == colour
            net = target if is_target else exploiter
            stored = softmax(tree.child_logit[b, node, : len(legal)].astype(np.float64))
            np.testing.assert_allclose(
                stored, raw_policy(net, tree.node_state[b, node], legal), atol=1e-4
            )
            seen[is_target] += 1
    assert seen[0] >= 4 and seen[1] >= 4  # both kinds of node were searched
    assert search.victim_evaluations == seen[1]


def peaked(obs, policy_rows=None):
    """A target that plays its lowest-numbered legal action (logit -10 x action id)."""
    logits = np.tile(-10.0 * np.arange(engine.N_ACTIONS, dtype=np.float32), (len(obs), 1))
    return logits, np.zeros(len(obs), np.float32)


@pytest.mark.parametrize("victim_play", [True, False])
def test_the_targets_moves_in_the_tree_follow_its_policy(victim_play):
    """With a sharply peaked target, every target move the search visits is the one the
    target's policy picks; without victim-play the exploiter's model visits others."""
    states = positions(4, seed=3)
    colours = [1 - int(s[TO_MOVE]) for s in states]
    search = searched_trees(
        states, RowWise(seed=0), peaked, colours if victim_play else [-1] * 4, steps=40
    )
    tree = search.tree
    visited_others = 0
    target_nodes = 0
    for b, colour in enumerate(colours):
        for node, legal in nodes(tree, b):
            if int(tree.node_state[b, node, TO_MOVE]) != colour or node == 0:
                continue
            visited = [int(legal[i]) for i in range(len(legal)) if tree.child_node[b, node, i] >= 0]
            target_nodes += bool(visited)
            visited_others += sum(a != legal.min() for a in visited)
    assert target_nodes >= 4
    assert (visited_others == 0) == victim_play


class Counting(RowWise):
    """RowWise, counting its calls in each step."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.calls = 0

    def __call__(self, obs, policy_rows=None):
        self.calls += 1
        return super().__call__(obs, policy_rows)


def test_each_network_is_called_once_a_step_with_all_of_its_rows():
    states = positions(6, seed=5)
    colours = [1 - int(s[TO_MOVE]) for s in states]
    own, target = Counting(0), Counting(1)
    search = BatchedSearch(6, search_options([16], max_considered=4, max_moves=MAX_MOVES))
    for b, state in enumerate(states):
        search.tree.game_state[b] = state
    search.tree.victim[:] = colours
    target_steps = 0
    for _ in range(20):
        own.calls = target.calls = 0
        search.step(own, victim=target)
        assert own.calls == 1 and target.calls <= 1
        target_steps += target.calls
    # several games wanted the target's logits in one step: still one call
    assert target_steps >= 2 and target.rows > target_steps
    assert target.rows == search.victim_evaluations and own.rows == search.evaluations


def test_a_search_without_targets_is_todays_search():
    """No colour marked: the same moves, targets and values as a search given no victim
    evaluator at all, and the victim evaluator is never called."""
    rng = np.random.default_rng(5)
    states = [engine.init(rng=rng) for _ in range(4)]
    kinds = [0, 1, 0, 1]
    options = search_options([4, 16], max_considered=16, c_scale=1.0, max_moves=MAX_MOVES)
    unused = Counting(1)

    class WithVictim(BatchedSearch):
        def step(self, evaluate, victim=None):
            super().step(evaluate, unused)

    first = searched_moves(BatchedSearch(4, options), RowWise(seed=0), states, kinds, 5)
    second = searched_moves(WithVictim(4, options), RowWise(seed=0), states, kinds, 5)
    assert first == second and unused.calls == 0


def test_a_marked_colour_without_a_victim_evaluator_is_an_error():
    states = positions(2)
    with pytest.raises(ValueError, match="no victim evaluator"):
        searched_trees(states, RowWise(0), None, [int(s[TO_MOVE]) for s in states], steps=1)


def selfplay_config(opponent: str, victim_play: bool) -> AZConfig:
    return AZConfig.from_dict(
        {**TINY, "search": {**TINY["search"], "opponent": opponent, "victim_play": victim_play}}
    )


def test_selfplay_against_a_network_target_searches_with_its_policy():
    config = selfplay_config("az:pretrained:2", True)
    selfplay = SelfPlay(config.search, seed=2)
    # the target's model is its seat's: the seat that moves it holds it
    assert selfplay.opponent_seat is not None
    assert isinstance(selfplay.opponent_seat.victim, TargetPolicy)
    assert selfplay.victim is selfplay.opponent_seat.victim
    buffer = ReplayBuffer(1000)
    selfplay.play(60, BatchedInference(build_network(8, 1, seed=0)), buffer)
    assert selfplay.search.victim_evaluations > 0
    # off: no target rows, and the games are those of a run without the key
    off = SelfPlay(selfplay_config("az:pretrained:2", False).search, seed=2)
    assert off.victim is None


def test_targets_without_a_network_are_searched_as_without_victim_play():
    assert target_policy(make_agent("greedy", seed=0)) is None
    assert target_policy(make_agent("mcts:20", seed=0)) is None
    assert isinstance(target_policy(make_agent("checkpoint:pretrained", seed=0)), TargetPolicy)
    selfplay = SelfPlay(selfplay_config("greedy", True).search, seed=2)
    assert selfplay.victim is None


def test_a_sampled_targets_policy_is_at_its_temperature():
    obs = np.zeros((2, 10, 10, 22), np.float32)
    agent = make_agent("checkpoint:pretrained:sample=0.5", seed=0)
    plain, _ = BatchedInference(agent.net)(obs)
    scaled, _ = target_policy(agent)(obs)
    np.testing.assert_allclose(scaled, plain * 2, rtol=1e-5, atol=1e-5)
    tiny = target_policy(make_agent("checkpoint:pretrained:sample=1e-300", seed=0))
    assert np.isfinite(tiny(obs)[0]).all()


def test_victim_play_needs_an_opponent():
    with pytest.raises(ConfigError, match=r"search\.victim_play.*search\.opponent"):
        AZConfig.from_dict({**TINY, "search": {**TINY["search"], "victim_play": True}})


def test_the_flag_reaches_the_config(config_file, capsys):  # noqa: F811
    assert cli.main(["exploit", "--help"]) == 0
    assert "--victim-play" in capsys.readouterr().out
    config, _ = exploit_config("greedy", 1.0, str(config_file), victim_play=True)
    assert config.search.victim_play
    config, _ = exploit_config("greedy", 1.0, str(config_file))
    assert not config.search.victim_play


def test_exploit_with_victim_play_runs_and_says_when_the_target_has_no_network(
    config_file,  # noqa: F811
    tmp_path,
    capsys,
):
    assert exploit(config_file, tmp_path / "greedy", "--victim-play") == 0
    assert "victim-play: greedy has no network" in capsys.readouterr().out
    # a network target (a second --target overrides the helper's greedy): the run
    # finishes, and says nothing of the kind
    target = ("--target", "checkpoint:pretrained")
    assert exploit(config_file, tmp_path / "net", "--victim-play", *target) == 0
    assert "has no network" not in capsys.readouterr().out
