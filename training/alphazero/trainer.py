"""The Gumbel AlphaZero learner: self-play -> replay buffer -> gradient steps, in the shared
run loop ([`Trainer`][training.common.run.Trainer]: folder, checkpoints, resume, evaluation,
reports).

One iteration plays ``positions_per_iteration`` searched moves in ``search.games`` games in
flight, then (once the buffer holds ``replay.min_positions``) takes
``new positions x replay_ratio / batch_size`` gradient steps (the fractional rest carries
over). With ``overlap: true`` the two run side by side on two cores: while the generators
play iteration i with the weights before the steps, this thread takes the steps for iteration
i-1's positions (one iteration stale, as deterministic as the sequential loop; the last
batch's steps are taken at the end).

Self-play runs in a `GeneratorPool` (training/alphazero/generator.py): `distributed.workers`
generators, each with its share of `search.games`, in this process (`backend: local` or
`thread`) or as Ray actors (`backend: ray`, where evaluation games are spread over the same
actors). The learner sends them its weights before each iteration and adds their finished
games to the buffer in worker order, so one worker count gives the same run on every
backend, and one local worker the run of a single `SelfPlay`.

The final evaluation plays the raw policy and, with `eval.search_simulations` N > 0, the
search agent `az:PATH:N` against each opponent of `eval.final`, its results keyed
`search:OPPONENT`. Both players' games of a match run all at once
(`games.play_batched_games`): one forward pass a step for every game waiting for a move.
"""

from __future__ import annotations

import copy
import functools
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch

from ..common.checkpoint import load_network
from ..common.config import Config
from ..common.evaluation import Match
from ..common.learner import Games, Player
from ..common.network import (
    PolicyValueNet,
    masked_entropy,
    network_for,
    resolve_device,
    reuse_freed_memory,
)
from ..common.policy_agent import PolicyAgent
from ..common.run import Trainer
from ..common.run_folder import RunError
from ..common.run_state import Counters, rng_state, set_rng_state
from ..distributed.generator import GeneratorFactory, split
from ..distributed.pool import one_thread_each
from .agent import AZAgent
from .config import AZConfig, AZOptimConfig, AZSearchConfig
from .games import play_batched_games, play_search_games
from .generator import add_batches, cpu_weights, make_generator
from .replay import ReplayBuffer, make_batch
from .selfplay import SelfPlayStats, check_saved_games

LEARNER = "az-policy"

#: settings satellites no longer has -> (the setting whose true value says a run used it,
#: what it was): a saved run that did not use one resumes without it
RETIRED = {
    "league": ("league.share", "a league"),
    "optim.soft_policy_weight": ("optim.soft_policy_weight", "the soft-policy head"),
    "optim.soft_policy_temperature": ("optim.soft_policy_weight", "the soft-policy head"),
    "optim.anneal_final_fraction": ("optim.anneal_final_fraction", "a learning-rate anneal"),
    "optim.anneal_factor": ("optim.anneal_final_fraction", "a learning-rate anneal"),
    "optim.short_value_weight": ("optim.short_value_weight", "short-term value heads"),
    "replay.short_value_horizons": ("optim.short_value_weight", "short-term value heads"),
    "search.full_simulations_late": ("search.full_simulations_late", "a late search budget"),
    "search.late_after": ("search.full_simulations_late", "a late search budget"),
}


def _dotted(data: Any, key: str) -> Any:
    """The value at the dotted `key` of nested dicts (None where there is none)."""
    for name in key.split("."):
        data = data.get(name) if isinstance(data, dict) else None
    return data


class RetiredSettingError(ValueError):
    """A saved config that used a setting satellites no longer has."""


def drop_retired(saved: dict) -> dict:
    """A run's saved config less the settings satellites no longer has (`RETIRED`), each
    dropped when the run did not use it (a copy). RetiredSettingError naming the first one
    it used."""
    for key, (used, what) in RETIRED.items():
        value = _dotted(saved, used)
        if _dotted(saved, key) is not None and value:
            raise RetiredSettingError(
                f"a run that used {what} ({used} {value!r}), which satellites no longer has"
            )
    saved = copy.deepcopy(saved)
    for key in RETIRED:
        section, _, name = key.rpartition(".")
        part = _dotted(saved, section) if section else saved
        if isinstance(part, dict):
            part.pop(name, None)
    return saved


@dataclass
class AZCounters(Counters):
    positions: int = 0  # self-play moves searched
    samples: int = 0  # positions added to the replay buffer
    train_steps: int = 0  # gradient steps
    trained: int = 0  # positions trained on (batch_size a step)
    credit: float = 0.0  # fractional gradient steps carried to the next iteration
    evaluations: int = 0  # network evaluations in self-play
    selfplay_seconds: float = 0.0
    train_seconds: float = 0.0
    pending: int = 0  # positions in the buffer not yet trained for (overlap: the last batch)


def _timed(function, *args):
    """(function(*args), its wall seconds)."""
    tick = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - tick


def policy_value_loss(
    net: PolicyValueNet, batch: dict, value_coef: float, entropy: bool = True
) -> tuple[torch.Tensor, dict]:
    """Cross-entropy to the improved policy (each sample weighted by its policy weight: full
    searches 1, cheap ones 0) + value_coef x MSE. With `entropy`, the parts also hold the raw
    policy's mean entropy (a diagnostic)."""
    # Only the positions with a policy target (full searches: a tenth of a batch with playout
    # caps) go through the policy heads; the sum and its weight are those of the whole batch.
    rows = torch.nonzero(batch["policy_weight"] > 0).squeeze(1)
    logits, value = net.forward_all(batch["obs"], rows)
    illegal = batch["mask"][rows] == 0
    logits = logits.masked_fill(illegal, float("-inf"))
    log_probs = torch.log_softmax(logits, dim=-1).masked_fill(illegal, 0.0)
    per_sample = -(batch["policy"][rows] * log_probs).sum(-1)
    weight = batch["policy_weight"][rows]
    policy_loss = (per_sample * weight).sum() / weight.sum().clamp(min=1.0)
    value_loss = torch.mean((value - batch["value"]) ** 2)
    loss = policy_loss + value_coef * value_loss
    parts = {"policy": policy_loss.item(), "value": value_loss.item()}
    if entropy:  # how sharp the raw policy is (nats) on the batch's policy-target positions
        with torch.no_grad():
            parts["entropy"] = masked_entropy(logits).mean().item() if len(rows) else 0.0
    return loss, parts


def make_optimizer(net: torch.nn.Module, optim: AZOptimConfig) -> torch.optim.Optimizer:
    """The trainer's AdamW for a config's `optim:` section.

    The fused implementation: one kernel over all parameters instead of a loop of small
    tensor operations per parameter, the same update (`benchmarks/az_phases.py`).

    Args:
        net: The network whose parameters it updates.
        optim: The config's optimizer settings (learning rate, weight decay).

    Returns:
        The optimizer.
    """
    return torch.optim.AdamW(
        net.parameters(), lr=optim.learning_rate, weight_decay=optim.weight_decay, fused=True
    )


def raw_policy(net: PolicyValueNet) -> PolicyAgent:
    """The raw policy as an evaluation agent (the network's most likely legal action)."""
    return PolicyAgent(net, spec=LEARNER)


def play_policy_games(
    net: PolicyValueNet, opponent: str, games: list[int], seed: int, max_moves: int
) -> Games:
    """The raw policy's games `games` against `opponent`, all at once: one forward pass a move
    for every game waiting for one instead of one a game (the games `raw_policy` plays)."""
    return play_batched_games(raw_policy(net), opponent, games, seed, max_moves)


def search_agent(net: PolicyValueNet, simulations: int, settings: AZSearchConfig) -> AZAgent:
    """The network's Gumbel search as an evaluation agent (`az:PATH:SIMS` of the run)."""
    agent = AZAgent(net, simulations, settings=settings)
    agent.spec = f"az-search:{simulations}"
    return agent


def blank_network(shape: dict) -> PolicyValueNet:
    """A blank network of a (checked) shape."""
    return PolicyValueNet(**shape)


class AZTrainer(Trainer):
    """Gumbel AlphaZero (see the module docstring and [`Trainer`][training.common.run.Trainer])."""

    Counters = AZCounters
    UNIT = "positions"
    config: AZConfig
    counters: AZCounters

    def setup(self) -> None:
        # The search kernels do a few microseconds of work per game and step: more numba
        # threads gain little on an idle machine and, spinning while torch runs, slow
        # self-play several times on a busy one.
        numba.set_num_threads(1)
        reuse_freed_memory()
        config = self.config
        self.device = resolve_device(config.device)
        self.net = network_for(config.model, seed=config.seed)
        if config.init:  # its shape was checked with the config
            self.net.load_state_dict(load_network(config.init).state_dict())
        # channels-last, as the generators' evaluators hold it: a run is the same whether
        # self-play uses this network or a copy of it
        # the ignore: torch's stubs lack Module.to's memory_format keyword
        self.net = self.net.to(self.device, memory_format=torch.channels_last)  # type: ignore[call-overload]
        self.optimizer = make_optimizer(self.net, config.optim)
        self.buffer = ReplayBuffer(config.replay.capacity)
        self.selfplay_stats = SelfPlayStats()  # the totals of the generators' stats
        self.train_rng = np.random.default_rng([config.seed, 1])
        self.last_losses: dict[str, float] = {}
        # (games, won) against search.opponent in each of the last iterations
        self.opponent_window: deque = deque(maxlen=8)

    @property
    def progress(self) -> int:
        return self.counters.positions

    def generator_factory(self) -> GeneratorFactory:
        return functools.partial(
            make_generator, self.config, self.net.shape, self.config.distributed.workers
        )

    def weights(self) -> dict:
        """What the generators play with (AZGenerator.set_weights)."""
        return {"model": cpu_weights(self.net)}

    def players(self, final: bool) -> list[Player]:
        players = [Player("", raw_policy, blank_network, play_policy_games)]
        if final and self.config.eval.search_simulations:
            players.append(self._search_player())
        return players

    def _search_player(self) -> Player:
        """The run's search agent (`az:PATH:N`, N = eval.search_simulations) as a player."""
        return self.search_player(self.config.eval.search_simulations)

    def search_player(self, sims: int) -> Player:
        """The search agent `az:PATH:sims` of the run's network, as a player."""
        settings = self.config.search
        return Player(
            "search",
            functools.partial(search_agent, simulations=sims, settings=settings),
            blank_network,
            functools.partial(play_search_games, simulations=sims, settings=settings),
        )

    def final_games(self, player: Player) -> dict[str, int]:
        """The search's final games are `eval.search_final` when it names any."""
        ev = self.config.eval
        return ev.search_final if player.key == "search" and ev.search_final else ev.final

    def evaluates_first(self) -> bool:
        """A run from a trained network (`init`) is evaluated before its first gradient step:
        the learning curve starts where the network started."""
        return bool(self.config.init)

    def matches_along_the_run(self) -> list[Match]:
        """With `eval.search_games`, the search's games against the first opponent (an
        exploiter's target), keyed `search:OPPONENT` as in the final table."""
        ev, seed = self.config.eval, self.config.seed
        if not (ev.search_games and ev.opponents):
            return []
        return [Match.of_run(self._search_player(), 1, ev.opponents[0], 0, ev.search_games, seed)]

    def curve_keys(self) -> list[str]:
        keys = super().curve_keys()
        ev = self.config.eval
        return keys + ([f"search:{ev.opponents[0]}"] if ev.search_games and ev.opponents else [])

    # ------------------------------------------------------------------ checkpoints

    def _saved_config(self, payload: dict, path: Path) -> Config:
        """The run's saved config, less the settings satellites no longer has
        (`RETIRED`): each is dropped when the run did not use it; a run that used one
        cannot be resumed (its network still plays)."""
        saved = payload.get("config")
        if not isinstance(saved, dict):
            return super()._saved_config(payload, path)
        try:
            saved = drop_retired(saved)
        except RetiredSettingError as error:
            raise RunError(
                f"{self.run_dir} holds {error}: its network plays (checkpoint:{path}), but "
                f"the run cannot be resumed; train into another --out folder"
            ) from None
        return super()._saved_config({**payload, "config": saved}, path)

    def learner_payload(self) -> dict:
        return {
            "replay": self.buffer.state_dict(),
            "rng": {"train": rng_state(self.train_rng), "torch": torch.get_rng_state()},
        }

    def restore_learner(self, payload: dict, path: Path) -> None:
        self.buffer.load_state_dict(payload["replay"])
        set_rng_state(self.train_rng, payload["rng"]["train"])
        torch.set_rng_state(payload["rng"]["torch"])

    def _restore(self, payload: dict, path: Path) -> None:
        super()._restore(payload, path)
        self._check_saved_games()
        c = self.counters
        # positions waiting for their steps are positions of the buffer, and the carried
        # credit is less than one step: anything else is a damaged file
        if c.pending > len(self.buffer) or not 0.0 <= c.credit < 1.0:
            raise ValueError(
                f"counters.pending {c.pending} / credit {c.credit} do not fit a "
                f"buffer of {len(self.buffer)} positions"
            )

    def _check_saved_games(self) -> None:
        """The generators' games in flight, checked here so that a damaged file fails on
        resume (in the learner), not later in a generator. States for another worker count
        are not used (`open_pool` starts fresh ones)."""
        states, workers = self._generator_states, self.config.distributed.workers
        if states is None or len(states) != workers:
            return
        for k, (state, games) in enumerate(
            zip(states, split(self.config.search.games, workers), strict=True)
        ):
            if state.get("games") is not None:
                try:
                    check_saved_games(self.config.search, games, state["games"])
                except ValueError as error:
                    raise ValueError(f"generators[{k}].{error}") from None

    # ------------------------------------------------------------------ one iteration

    def iterate(self) -> dict[str, float]:
        """One iteration: self-play of positions_per_iteration moves and the gradient steps
        for them; with `overlap`, the steps of the previous iteration's positions run on this
        thread while the generators play the next ones with the weights before those steps."""
        config = self.config
        c = self.counters
        self.net.eval()
        # Batched inference of a small net gains nothing from a second torch thread, and
        # threads that spin-wait on a busy machine slow it down several times.
        torch.set_num_threads(1)
        generators = self.generators
        generators.set_weights(self.weights(), c.iterations)  # loaded: steps may follow
        if config.overlap:
            self.doing("self-play beside the last iteration's gradient steps")
            with ThreadPoolExecutor(
                1, thread_name_prefix="selfplay", initializer=one_thread_each
            ) as pool:
                playing = pool.submit(_timed, generators.generate, config.positions_per_iteration)
                losses = self.train(c.pending)
                batches, play_seconds = playing.result()
        else:
            self.doing("self-play")
            batches, play_seconds = _timed(generators.generate, config.positions_per_iteration)
        c.selfplay_seconds += play_seconds
        played = add_batches(batches, self.buffer, self.selfplay_stats)  # in worker order
        c.positions += played["positions"]
        c.games += played["games"]
        c.evaluations += played["evaluations"]
        c.samples += played["samples"]
        if played.get("opponent_games"):
            self.opponent_window.append((played["opponent_games"], played["opponent_wins"]))
        if config.overlap:
            c.pending = played["samples"]
        else:
            torch.set_num_threads(config.threads)
            self.doing("gradient steps")
            losses = self.train(played["samples"])
        c.iterations += 1
        return losses

    def flush(self) -> None:
        """With `overlap`: the gradient steps for the last iteration's positions (the end of
        the run), so that every position gets its share of steps."""
        if self.counters.pending:
            tick = time.perf_counter()
            self.train(self.counters.pending)
            self.counters.pending = 0
            self.counters.seconds += time.perf_counter() - tick

    def train(self, new_samples: int) -> dict[str, float]:
        """Gradient steps for `new_samples` new positions at the configured replay ratio
        (their time goes to counters.train_seconds)."""
        tick = time.perf_counter()
        try:
            return self._steps(new_samples)
        finally:
            self.counters.train_seconds += time.perf_counter() - tick

    def _steps(self, new_samples: int) -> dict[str, float]:
        replay = self.config.replay
        if len(self.buffer) < replay.min_positions:
            return {}
        self.counters.credit += new_samples * replay.replay_ratio / replay.batch_size
        steps = int(self.counters.credit)
        self.counters.credit -= steps
        if steps == 0:
            return {}
        self.net.train()
        totals = {"policy": 0.0, "value": 0.0}
        for step in range(steps):
            rows = self.buffer.sample(replay.batch_size, self.train_rng)
            self.counters.trained += len(rows)
            syms = self.train_rng.integers(0, 8, size=len(rows))  # one of the 8 symmetries
            batch = {
                k: v.to(self.device)
                for k, v in make_batch(
                    self.buffer, rows, syms, self.config.search.max_moves
                ).items()
            }
            last = step == steps - 1  # the entropy diagnostic: the last batch's
            optim = self.config.optim
            loss, parts = policy_value_loss(self.net, batch, optim.value_coef, entropy=last)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), optim.max_grad_norm)
            self.optimizer.step()
            for k in totals:
                totals[k] += parts[k] / steps
        totals["entropy"] = parts["entropy"]
        self.net.eval()
        self.counters.train_steps += steps
        totals["steps"] = steps
        self.last_losses = totals
        return totals

    # ------------------------------------------------------------------ reporting

    def status(self, losses: dict) -> str:
        s = self.selfplay_stats
        length = np.mean(s.lengths) if s.lengths else 0.0
        text = f"games {self.counters.games}  len {length:.0f}"
        if losses:
            text += f"  pi {losses['policy']:.2f}  v {losses['value']:.3f}"
        share = self.opponent_win_share()
        if share is not None:
            text += f"  beats {self.config.search.opponent} {share:.0%}"
        return text

    def opponent_win_share(self) -> float | None:
        """The share of the last iterations' games against search.opponent that the network
        won (None without an opponent or games)."""
        games = sum(g for g, _ in self.opponent_window)
        return sum(w for _, w in self.opponent_window) / games if games else None

    def throughput(self) -> dict[str, float]:
        c = self.counters
        sp = max(c.selfplay_seconds, 1e-9)
        return {
            "positions_per_s": c.positions / sp,
            "evaluations_per_s": c.evaluations / sp,
            "games_per_s": c.games / sp,
            # with `overlap` the two run side by side, so the shares add up to more than 1
            "selfplay_share": c.selfplay_seconds / max(c.seconds, 1e-9),
            "train_share": c.train_seconds / max(c.seconds, 1e-9),
        }

    def describe_throughput(self) -> str:
        rates = self.throughput()
        return (
            f"{rates['positions_per_s']:.0f} positions/s, "
            f"{rates['evaluations_per_s']:.0f} network evaluations/s, "
            f"{rates['games_per_s']:.2f} games/s ({rates['selfplay_share']:.0%} self-play, "
            f"{rates['train_share']:.0%} gradient steps"
            f"{', side by side' if self.config.overlap else ''})"
        )

    def log_scalars(self) -> dict[str, float]:
        s = self.selfplay_stats
        scalars = {
            "optim/learning_rate": self.optimizer.param_groups[0]["lr"],
            "replay/size": float(len(self.buffer)),
        }
        if s.lengths:
            scalars["selfplay/mean_game_length"] = float(np.mean(s.lengths))
        if s.games:
            scalars["selfplay/draw_share"] = s.draws / s.games
            scalars["selfplay/red_win_share"] = s.red_wins / s.games
        if s.dagger_games:  # how the raw policy's moves fare against the searches'
            scalars["selfplay/dagger_win_share"] = s.dagger_wins / s.dagger_games
        share = self.opponent_win_share()
        if share is not None:  # an exploiter's run: how often it beats its target
            scalars["selfplay/opponent_win_share"] = share
        return scalars
