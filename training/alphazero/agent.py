"""Agents of a trained AlphaZero network: the Gumbel search (``AZAgent``) and the raw policy
(``AZPolicyAgent``), both implementing :class:`satellites_env.agents.base.Agent`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from satellites_env.agents.base import Agent
from satellites_env.core.board import N_ACTIONS
from satellites_env.core.engine import new_work
from satellites_env.core.game import Game
from satellites_env.observation import observe

from .config import AZSearchConfig
from .network import Evaluator, device_of
from .search import NEED_ROOT, BatchedSearch


#: The shipped network (`az:pretrained[:SIMS]`, `checkpoint:pretrained`): the final network of
#: `configs/az_standard.yaml`; docs/pretrained.md is its model card.
PRETRAINED = Path(__file__).with_name("pretrained.pt")


def resolve(path: str | Path) -> Path:
    """`pretrained` names the shipped network; any other path is itself."""
    return PRETRAINED if str(path) == "pretrained" else Path(path)


def load_payload(path_or_payload: str | Path | dict[str, Any]) -> dict[str, Any]:
    """A checked AlphaZero checkpoint payload (a path, `pretrained`, or a payload already
    loaded)."""
    from training.common.checkpoint import load_checkpoint

    return (path_or_payload if isinstance(path_or_payload, dict)
            else load_checkpoint(resolve(path_or_payload)))


def load_network(path_or_payload: str | Path | dict[str, Any]):
    """The network of an AlphaZero checkpoint (a path, or a payload already loaded)."""
    from training.common.checkpoint import network_from_checkpoint

    where = "<payload>" if isinstance(path_or_payload, dict) else resolve(path_or_payload)
    return network_from_checkpoint(load_payload(path_or_payload), where)


def search_settings(payload: dict[str, Any]) -> AZSearchConfig:
    """The search settings a network was trained with (its run's `search:` section), so that
    `az:PATH` searches as self-play did; the defaults for a payload without a config."""
    from .config import AZConfigError, az_config_from_dict

    try:
        return az_config_from_dict(payload.get("config") or {}).search
    except AZConfigError as error:
        from training.common.checkpoint import CheckpointError

        raise CheckpointError(f"the checkpoint's config is not a valid AlphaZero config: "
                              f"{error}") from None


class AZPolicyAgent(Agent):
    """The raw policy, no search: the most likely legal action of the network."""

    def __init__(self, net_or_path, seed: int | None = None, spec: str = "az-policy"):
        super().__init__(seed)
        self.net = (net_or_path if isinstance(net_or_path, torch.nn.Module)
                    else load_network(net_or_path)).eval()
        self.spec = spec
        self._work = new_work()

    @torch.inference_mode()
    def policy(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action from an observation alone: planes (10, 10, 22) and mask (3217,)."""
        device = device_of(self.net)
        logits, _ = self.net(torch.as_tensor(np.asarray(observation, np.float32),
                                             device=device)[None])
        logits = logits[0].masked_fill(torch.as_tensor(np.asarray(action_mask),
                                                       device=device) == 0, float("-inf"))
        return int(logits.argmax().item())

    def act(self, game: Game) -> int:
        obs = observe(game.state, game.to_move, game.max_moves, self._work)
        return self.policy(obs, game.legal_mask())


class AZAgent(Agent):
    """Deterministic Gumbel search (no root noise) with `simulations` network evaluations
    per move, on a batch of one game: ``az:PATH[:SIMS]``.

    The search uses the settings of the network's training run (`settings`, read from the
    checkpoint; a bare network gets the `AZSearchConfig` defaults unless given them)."""

    def __init__(self, path_or_payload, simulations: int = 32, seed: int | None = None,
                 settings: AZSearchConfig | None = None):
        super().__init__(seed)
        if isinstance(path_or_payload, torch.nn.Module):
            self.net = path_or_payload.eval()
        else:
            payload = load_payload(path_or_payload)
            self.net = load_network(payload)
            settings = settings or search_settings(payload)
        self.settings = settings or AZSearchConfig()
        self.simulations = int(simulations)
        self.spec = f"az:{path_or_payload if isinstance(path_or_payload, (str, Path)) else '-'}" \
                    f":{self.simulations}"
        self._search: BatchedSearch | None = None
        self._evaluate = Evaluator(self.net)

    def _search_for(self, max_moves: int) -> BatchedSearch:
        if self._search is None or self._search.max_moves != max_moves:
            s = self.settings
            self._search = BatchedSearch(1, [self.simulations], s.max_considered, s.c_visit,
                                         s.c_scale, max_moves, s.rescale_q,
                                         win_check=s.win_check)
        return self._search

    def act(self, game: Game) -> int:
        if game.is_over:
            raise ValueError("the game is over: no action to choose")
        search = self._search_for(game.max_moves)
        trees = search.trees
        trees.game_state[0] = game.state
        trees.phase[0] = NEED_ROOT
        trees.kind[0] = 0
        trees.gumbel[0] = 0.0
        while True:
            search.step(self._evaluate)
            if trees.out_ready[0]:
                action = int(trees.out_action[0])
                assert 0 <= action < N_ACTIONS
                return action

    def search_policy(self, game: Game) -> dict[int, float]:
        """The improved policy of a search from `game` (action -> probability)."""
        self.act(game)
        trees = self._search.trees
        n = int(trees.out_count[0])
        return {int(a): float(p) for a, p in zip(trees.out_actions[0, :n], trees.out_policy[0, :n])}
