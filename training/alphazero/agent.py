"""Agents of a trained network: the Gumbel search
([`AZAgent`][training.alphazero.agent.AZAgent], `az:PATH[:SIMS]`), and the network as an
[`Evaluator`][satellites_env.agents.mcts.Evaluator]
([`NetworkEvaluator`][training.alphazero.agent.NetworkEvaluator]), so that the UCT search of
`mcts:N` runs on it too.

Two searches, one seam: the Gumbel search (training/alphazero/search.py) is the one that
trains and plays the network, batched over many games in numba; `MCTSAgent` is the plain UCT
search of the baselines, one game in Python, parameterised by an `Evaluator` (prior and
value), as OpenSpiel's MCTS is. A network plugs into it through `NetworkEvaluator`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from satellites_env.agents.base import Agent
from satellites_env.agents.mcts import Evaluation, Evaluator
from satellites_env.core.checks import quoted_path
from satellites_env.core.engine import N_ACTIONS, TO_MOVE, new_work
from satellites_env.core.game import Game
from satellites_env.observation import observe

from ..common.checkpoint import CheckpointError, load_network, load_payload, resolve
from ..common.network import BatchedInference, PolicyValueNet
from ..common.policy_agent import PolicyAgent
from .config import AZSearchConfig
from .search import IDLE, NEED_ROOT, BatchedSearch, SearchOptions, search_options


def search_settings(payload: dict[str, Any], where: str | Path | None = None) -> AZSearchConfig:
    """The search settings a network was trained with (its run's `search:` section: the keys
    an `az:` agent uses), so that `az:PATH` searches as self-play did; the defaults for a
    payload without them. A CheckpointError naming the file `where` when they are bad."""
    from ..common.config import ConfigError, build

    config = payload.get("config")
    search = config.get("search") if isinstance(config, dict) else None
    used = ("max_considered", "c_visit", "c_scale")
    try:
        return build(
            AZSearchConfig,
            {key: search[key] for key in used if isinstance(search, dict) and key in search},
            "search",
        )
    except ConfigError as error:
        name = f"checkpoint {quoted_path(where)}" if where is not None else "the checkpoint"
        raise CheckpointError(f"{name}: its search settings are not valid: {error}") from None


class AZAgent(Agent):
    """Deterministic Gumbel search (no root noise) with `simulations` network evaluations
    per move, on a batch of one game: ``az:PATH[:SIMS]``.

    The search uses the settings of the network's training run (`settings`, read from the
    checkpoint; a bare network gets the `AZSearchConfig` defaults unless given them)."""

    def __init__(
        self,
        path_or_payload: str | Path | dict[str, Any] | PolicyValueNet,
        simulations: int = 32,
        seed: int | None = None,
        settings: AZSearchConfig | None = None,
    ):
        super().__init__(seed)
        if isinstance(path_or_payload, torch.nn.Module):
            self.net = path_or_payload.eval()
        else:
            if not isinstance(path_or_payload, dict):
                self.source = resolve(path_or_payload)
            payload = load_payload(path_or_payload)
            self.net = load_network(payload, getattr(self, "source", None))
            settings = settings or search_settings(payload, getattr(self, "source", None))
        self.settings = settings or AZSearchConfig()
        self.simulations = int(simulations)
        self.spec = (
            f"az:{path_or_payload if isinstance(path_or_payload, (str, Path)) else '-'}"
            f":{self.simulations}"
        )
        self._player: BatchedPlayer | None = None

    def settings_suffix(self) -> str:
        return f":{self.simulations}"

    def options(self, max_moves: int) -> SearchOptions:
        """The options of this agent's search in games of `max_moves` moves at most."""
        s = self.settings
        return search_options([self.simulations], s.max_considered, s.c_visit, s.c_scale, max_moves)

    def act(self, game: Game) -> int:
        if game.is_over:
            raise ValueError("the game is over: no action to choose")
        player = self._player_for(game.max_moves)
        player.start(0, game.state)
        while not len(player.step()):
            pass
        action = int(player.action[0])
        assert 0 <= action < N_ACTIONS
        return action

    def _player_for(self, max_moves: int) -> BatchedPlayer:
        """The search of one game of `max_moves` moves at most (kept between moves)."""
        player = self._player
        if player is None or player.search.max_moves != max_moves:
            player = self._player = BatchedPlayer(self.net, self.options(max_moves), False, 1)
        return player

    def search_policy(self, game: Game) -> dict[int, float]:
        """The improved policy of a search from `game` (action -> probability)."""
        self.act(game)
        finished = self._player_for(game.max_moves).search.finished
        n = int(finished.n_legal[0])
        return {
            int(a): float(p)
            for a, p in zip(finished.actions[0, :n], finished.policy[0, :n], strict=False)
        }


class BatchedPlayer:
    """A network agent's moves in many games at once: `az:PATH:N` (its deterministic search)
    or the raw policy's argmax (`checkpoint:PATH`, a search of no simulations that plays the
    prior's most likely action), each game's search in one `BatchedSearch` row, one forward
    pass per simulation step for all the games waiting for the agent. It plays the moves
    `agent.act` plays; `of` says whether an agent has this form.

    `start(b, state)` gives row b a position where the agent is to move; each `step()` runs
    one simulation step and returns the rows whose move it made: `state[b]` is then the
    position after it, `action[b]` the move, `done[b]` and `winner[b]` whether and how that
    ended the game."""

    def __init__(self, net: PolicyValueNet, options: SearchOptions, raw_move: bool, games: int):
        self.search = BatchedSearch(games, options)
        self.search.tree.phase[:] = IDLE
        self.raw_move = int(raw_move)
        self._evaluate = BatchedInference(net)
        self.state = self.search.tree.game_state
        self.action = self.search.finished.action
        self.done = self.search.finished.done
        self.winner = self.search.finished.winner

    @classmethod
    def of(cls, agent: Agent, games: int, max_moves: int) -> BatchedPlayer | None:
        """`agent`'s batched form for `games` games of `max_moves` moves at most, or None for an
        agent without one (not a network, a sampled policy, a policy that needs the game)."""
        if isinstance(agent, AZAgent):
            return cls(agent.net, agent.options(max_moves), False, games)
        if isinstance(agent, PolicyAgent) and not agent.sample and agent.planes_only:
            return cls(agent.net, search_options([0], max_moves=max_moves), True, games)
        return None

    @property
    def busy(self) -> bool:
        """Whether a game waits for the agent's move."""
        return bool((self.search.tree.phase != IDLE).any())

    def start(self, b: int, state: np.ndarray) -> None:
        tree = self.search.tree
        tree.game_state[b] = state
        tree.phase[b], tree.kind[b], tree.gumbel[b], tree.raw_move[b] = (
            NEED_ROOT,
            0,
            0,
            self.raw_move,
        )

    def stop(self) -> None:
        """Drop every game waiting for the agent."""
        self.search.tree.phase[:] = IDLE

    def step(self) -> np.ndarray:
        self.search.step(self._evaluate)
        rows = np.flatnonzero(self.search.finished.ready)
        self.search.tree.phase[rows] = IDLE
        return rows


class NetworkEvaluator(Evaluator):
    """The network as the prior and value of `MCTSAgent`'s UCT search: the policy over the
    legal actions (a PUCT prior) and the value, from the player to move's side."""

    def __init__(self, net: PolicyValueNet):
        self._evaluate = BatchedInference(net)
        self._work = new_work()

    def evaluate(self, state: np.ndarray, actions: np.ndarray, max_moves: int) -> Evaluation:
        return self.evaluate_batch([state], [actions], max_moves)[0]

    def evaluate_batch(
        self, states: list[np.ndarray], actions: list[np.ndarray], max_moves: int
    ) -> list[Evaluation]:
        obs = np.stack([observe(s, int(s[TO_MOVE]), max_moves, self._work) for s in states])
        logits, values = self._evaluate(obs)
        evaluations = []
        for row, legal, value in zip(logits, actions, values, strict=False):
            chosen = row[legal].astype(np.float64)
            prior = np.exp(chosen - chosen.max())
            evaluations.append(Evaluation(value=float(value), policy=prior / prior.sum()))
        return evaluations
