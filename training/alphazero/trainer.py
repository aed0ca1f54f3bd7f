"""The Gumbel AlphaZero run: self-play -> replay buffer -> gradient steps, with checkpoints.

One iteration plays ``positions_per_iteration`` searched moves in ``search.games`` games in
flight, then (once the buffer holds ``replay.min_positions``) takes
``new positions x replay_ratio / batch_size`` gradient steps (the fractional rest carries
over). With ``overlap: true`` the two run side by side on two cores: while the generators
play iteration i with the weights before the steps, this thread takes the steps for iteration
i-1's positions (one iteration stale, as deterministic as the sequential loop; the last
batch's steps are taken at the end). Everything a run writes lives in its folder:

    checkpoint.pt        latest state (weights, optimizer, config, counters, RNG, buffer, history)
    final.pt             the network at the end (``az:PATH``; also loads as ``checkpoint:PATH``)
    tensorboard/         losses, search statistics, win rates, throughput
    learning_curve.png   raw-policy win rates over training
    summary.json         final evaluation and throughput

``resume=True`` continues from ``checkpoint.pt`` with the same counters, weights, optimizer,
replay buffer and random streams; the games that were in flight are not saved (fresh games
start from the restored generator).

Self-play runs in a `GeneratorPool` (training/alphazero/generator.py): `distributed.workers`
generators, each with its share of `search.games`, in this process (`backend: local`) or as
Ray actors (`backend: ray`, where evaluation games are spread over the same actors). The
learner sends them its weights before each iteration and adds their finished games to the
buffer in worker order, so one worker count gives the same run on both backends, and one
local worker the run of a single `SelfPlay`.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numba
import numpy as np
import torch
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from satellites_env.agents import make_agent
from satellites_env.arena import (BASELINE_ELO, elo_against, match, rate_with_interval,
                                  wilson_interval)

from training.common.network import masked_entropy
from training.common.tensorboard import log_game

from ..distributed.pool import (GeneratorPool, PoolOwner, log_pool, one_thread_each,
                                open_pool)
from .agent import AZAgent, AZPolicyAgent
from .config import AZConfig, az_config_from_dict, scheduled_lr
from .generator import add_batches, check_states, cpu_weights, make_generator, match_on_pool
from .network import network_for, network_shape, resolve_device
from .replay import ReplayBuffer, make_batch
from .selfplay import SelfPlayStats

LEARNER = "az-policy"


@dataclass
class AZCounters:
    iterations: int = 0
    positions: int = 0  # self-play moves searched
    games: int = 0  # self-play games finished
    samples: int = 0  # positions added to the replay buffer
    train_steps: int = 0  # gradient steps
    trained: int = 0  # positions trained on (batch_size + policy_batch_size a step)
    credit: float = 0.0  # fractional gradient steps carried to the next iteration
    evaluations: int = 0  # network evaluations in self-play
    seconds: float = 0.0  # wall time of self-play + training, summed over sessions
    selfplay_seconds: float = 0.0
    train_seconds: float = 0.0
    pending: int = 0  # positions in the buffer not yet trained for (overlap: the last batch)


@dataclass
class AZEvaluation:
    positions: int
    results: dict = field(default_factory=dict)  # opponent spec -> PairResult dict
    minutes: float = 0.0  # training wall time (self-play + gradient steps) when it was taken

    def win_rate(self, opponent: str) -> float:
        r = self.results[opponent]
        return r["a_wins"] / max(r["games"], 1)

    def elo(self) -> tuple[float, float, float] | None:
        """The raw policy's Elo with its 95% interval, on the baselines' scale
        (`BASELINE_ELO`, random = 0), from its games against the rated opponents."""
        rated = [(BASELINE_ELO[o], r["a_wins"] + 0.5 * r["draws"], r["games"])
                 for o, r in self.results.items() if o in BASELINE_ELO and r["games"]]
        return elo_against(rated) if rated else None


def _timed(function, *args):
    """(function(*args), its wall seconds)."""
    tick = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - tick


def _rng_state(rng: np.random.Generator) -> dict:
    """A numpy generator state as plain data (the 128-bit integers as strings)."""
    state = rng.bit_generator.state
    return {"bit_generator": state["bit_generator"],
            "state": {k: str(v) for k, v in state["state"].items()},
            "has_uint32": int(state["has_uint32"]), "uinteger": int(state["uinteger"])}


def _set_rng_state(rng: np.random.Generator, data: dict) -> None:
    rng.bit_generator.state = {"bit_generator": data["bit_generator"],
                               "state": {k: int(v) for k, v in data["state"].items()},
                               "has_uint32": data["has_uint32"], "uinteger": data["uinteger"]}


def policy_value_loss(net, batch: dict, value_coef: float, ownership_coef: float = 0.0,
                      entropy: bool = True) -> tuple[torch.Tensor, dict]:
    """Cross-entropy to the improved policy (each sample weighted by its policy weight: full
    searches 1, cheap ones replay.cheap_policy_weight) + value_coef x MSE, and
    ownership_coef x the per-cell MSE of the ownership map when the network has that head.
    With `entropy`, the parts also hold the raw policy's mean entropy (a diagnostic)."""
    # Only the positions with a policy target (full searches: a tenth of a batch with playout
    # caps) go through the policy heads; the sum and its weight are those of the whole batch.
    rows = torch.nonzero(batch["policy_weight"] > 0).squeeze(1)
    logits, value, ownership = net.forward_all(batch["obs"], rows)
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
    if net.has_ownership:
        ownership_loss = torch.mean((ownership - batch["ownership"]) ** 2)
        loss = loss + ownership_coef * ownership_loss
        parts["ownership"] = ownership_loss.item()
    return loss, parts


class AZTrainer(PoolOwner):
    def __init__(self, config: AZConfig, run_dir: str | Path, resume: bool = False,
                 console: Console | None = None):
        self.config = config
        self.run_dir = Path(run_dir)
        self.console = console or Console()
        torch.set_num_threads(config.threads)
        # The search kernels do a few microseconds of work per game and step: more numba
        # threads gain little on an idle machine and, spinning while torch runs, slow
        # self-play several times on a busy one (measured: docs/alphazero.md, speed).
        numba.set_num_threads(1)
        self.device = resolve_device(config.device)
        self.net = network_for(config.model, seed=config.seed).to(self.device)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=config.optim.learning_rate,
                                           weight_decay=config.optim.weight_decay)
        # optim.ema_decay: the evaluated network is a moving average of the trained weights
        # (Polyak averaging; KataGo evaluates and ships averaged weights too)
        self.ema = (AveragedModel(self.net, multi_avg_fn=get_ema_multi_avg_fn(
            config.optim.ema_decay)) if config.optim.ema_decay > 0 else None)
        self.buffer = ReplayBuffer(config.replay.capacity)
        # Self-play runs in a GeneratorPool (training/alphazero/generator.py; distributed:
        # backend, workers), started on first use; until then its workers' random streams are
        # these (None: fresh from the seed). The learner keeps the totals of their stats.
        self._pool: GeneratorPool | None = None
        self._generator_states: list[dict] | None = None
        self.selfplay_stats = SelfPlayStats()
        self.train_rng = np.random.default_rng([config.seed, 1])
        self.counters = AZCounters()
        self.history: list[AZEvaluation] = []
        self.last_losses: dict[str, float] = {}
        self.sample_game = None  # the last evaluation's first game against its last opponent
        if resume:
            self._restore(self.checkpoint_path)
        elif self.checkpoint_path.exists():
            raise FileExistsError(f"{self.checkpoint_path} exists: pass resume=True (--resume) "
                                  f"to continue that run, or choose another run folder")

    @property
    def checkpoint_path(self) -> Path:
        return self.run_dir / "checkpoint.pt"

    @property
    def policy_net(self) -> torch.nn.Module:
        """The network the run evaluates and saves as its model: the moving average of the
        weights with `optim.ema_decay`, else the trained network itself."""
        return self.ema.module if self.ema is not None else self.net

    # ------------------------------------------------------------------ checkpoints

    def state_payload(self, with_buffer: bool = True) -> dict:
        payload = {
            "learner": "alphazero",
            "model": cpu_weights(self.policy_net),
            "model_shape": network_shape(self.net),
            "config": self.config.to_dict(),
            "counters": asdict(self.counters),
            "history": [asdict(e) for e in self.history],
        }
        if self.ema is not None:  # "model" holds the average; resume needs both
            payload["trained_model"] = cpu_weights(self.net)
            payload["ema_updates"] = int(self.ema.n_averaged)
        if with_buffer:
            payload["optimizer"] = self.optimizer.state_dict()
            payload["replay"] = self.buffer.state_dict()
            payload["generators"] = self.generator_states()  # one per worker, in order
            payload["rng"] = {"train": _rng_state(self.train_rng),
                              "torch": torch.get_rng_state()}
        return payload

    def save(self, path: Path | None = None, with_buffer: bool = True) -> Path:
        from training.common.checkpoint import save_checkpoint

        return save_checkpoint(path or self.checkpoint_path, self.state_payload(with_buffer))

    def _restore(self, path: Path) -> None:
        from training.common.checkpoint import load_checkpoint, restoring, saved_config

        payload = load_checkpoint(path)
        saved = saved_config(payload, path, az_config_from_dict)
        if saved.model != self.config.model:
            raise ValueError(f"resume: the config's model {self.config.model} differs from the "
                             f"checkpoint's {saved.model}")
        if self.ema is not None and "trained_model" not in payload:
            raise ValueError(f"resume: {path} has no averaged weights (optim.ema_decay was "
                             f"off in that run); resume it with the same config")
        with restoring(path):
            self._restore_state(payload, path)

    def _restore_state(self, payload: dict, path: Path) -> None:
        """Everything of a run from its checkpoint, each field checked (any damage raises)."""
        from training.common.checkpoint import (check_counters, check_optimizer_state,
                                                check_results, check_weights)

        counters = payload["counters"]
        if not isinstance(counters, dict):
            raise TypeError("counters must be a mapping")
        counters = AZCounters(**counters)
        check_counters(asdict(counters), floats=("credit", "seconds", "selfplay_seconds",
                                                 "train_seconds"))
        history = [AZEvaluation(**e) for e in payload["history"]]
        for evaluation in history:
            if type(evaluation.positions) is not int or evaluation.positions < 0:
                raise ValueError(f"history positions must be an int >= 0, got "
                                 f"{evaluation.positions!r}")
            check_results(evaluation.results)
        if self.ema is not None:
            ema_updates = payload["ema_updates"]
            if type(ema_updates) is not int or ema_updates < 0:
                raise ValueError(f"ema_updates must be an int >= 0, got {ema_updates!r}")
            check_weights(payload["trained_model"], path, "trained_model")
            self.net.load_state_dict(payload["trained_model"])
            self.ema.module.load_state_dict(payload["model"])
            self.ema.n_averaged.fill_(ema_updates)
        else:
            self.net.load_state_dict(payload["model"])
        # the saved step size is not checked: the schedule sets it before every step
        check_optimizer_state(payload["optimizer"], [
            p for group in self.optimizer.param_groups for p in group["params"]])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.buffer.load_state_dict(payload["replay"])
        self.counters = counters
        self.history = history
        states = payload.get("generators")
        if "selfplay" in payload["rng"]:  # saved before the generator pool: one generator
            selfplay_rng = np.random.default_rng()
            _set_rng_state(selfplay_rng, payload["rng"]["selfplay"])
            states = [{"rng": selfplay_rng.bit_generator.state}]
        self._generator_states = check_states(states, path)  # the pool restarts the games
        _set_rng_state(self.train_rng, payload["rng"]["train"])
        torch.set_rng_state(payload["rng"]["torch"])

    # ------------------------------------------------------------------ one iteration

    def iterate(self) -> dict[str, float]:
        """One iteration: self-play of positions_per_iteration moves and the gradient steps
        for them; with `overlap`, the steps of the previous iteration's positions run on this
        thread while the generators play the next ones with the weights before those steps."""
        config = self.config
        c = self.counters
        tick = time.perf_counter()
        self.net.eval()
        # Batched inference of a small net gains nothing from a second torch thread, and
        # threads that spin-wait on a busy machine slow it down several times (measured).
        torch.set_num_threads(1)
        generators = self.generators
        generators.set_weights(cpu_weights(self.net), c.iterations)  # a copy: steps may follow
        if config.overlap:
            with ThreadPoolExecutor(1, thread_name_prefix="selfplay",
                                    initializer=one_thread_each) as pool:
                playing = pool.submit(_timed, generators.generate, config.positions_per_iteration)
                losses = self.train(c.pending)
                batches, play_seconds = playing.result()
        else:
            batches, play_seconds = _timed(generators.generate, config.positions_per_iteration)
        c.selfplay_seconds += play_seconds
        played = add_batches(batches, self.buffer, self.selfplay_stats)  # in worker order
        c.positions += played["positions"]
        c.games += played["games"]
        c.evaluations += played["evaluations"]
        c.samples += played["samples"]
        if config.overlap:
            c.pending = played["samples"]
        else:
            torch.set_num_threads(config.threads)
            losses = self.train(played["samples"])
        c.iterations += 1
        c.seconds += time.perf_counter() - tick
        return losses

    def flush(self) -> dict[str, float]:
        """With `overlap`: the gradient steps for the last iteration's positions (the end of
        the run), so that every position gets its share of steps."""
        tick = time.perf_counter()
        losses = self.train(self.counters.pending)
        self.counters.pending = 0
        self.counters.seconds += time.perf_counter() - tick
        return losses

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
        # The schedule reads the run's counters, so a resumed run continues it exactly.
        lr = scheduled_lr(self.config.optim, self.counters.positions / self.config.total_positions)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.net.train()
        totals = {"policy": 0.0, "value": 0.0}
        if self.net.has_ownership:
            totals["ownership"] = 0.0
        # Full searches are a tenth of the positions: policy_batch_size adds policy targets.
        targets = self.buffer.policy_rows() if replay.policy_batch_size else None
        for step in range(steps):
            rows = self.buffer.sample(replay.batch_size, self.train_rng)
            if targets is not None and len(targets):
                picks = self.train_rng.integers(0, len(targets), size=replay.policy_batch_size)
                rows = np.concatenate([rows, targets[picks]])
            self.counters.trained += len(rows)
            syms = (self.train_rng.integers(0, 8, size=len(rows)) if replay.symmetries
                    else np.zeros(len(rows), dtype=np.int64))
            batch = {k: v.to(self.device) for k, v in
                     make_batch(self.buffer, rows, syms, self.config.search.max_moves).items()}
            last = step == steps - 1  # the entropy diagnostic: the last batch's
            loss, parts = policy_value_loss(self.net, batch, self.config.optim.value_coef,
                                            self.config.optim.ownership_coef, entropy=last)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.config.optim.max_grad_norm)
            self.optimizer.step()
            if self.ema is not None:
                self.ema.update_parameters(self.net)
            for k in totals:
                totals[k] += parts[k] / steps
        totals["entropy"] = parts["entropy"]
        self.net.eval()
        self.counters.train_steps += steps
        totals["steps"] = steps
        self.last_losses = totals
        return totals

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, games: int, search_games: int = 0) -> AZEvaluation:
        """The raw policy (and, with `search_games`, the search agent) against each opponent."""
        evaluation = AZEvaluation(self.counters.positions, minutes=self.counters.seconds / 60)
        net = self.policy_net.eval()
        torch.set_num_threads(1)
        learner = AZPolicyAgent(net, spec=LEARNER)
        ev = self.config.eval

        def keep_sample(i: int, record) -> None:  # the first game against the last opponent
            if i == 0:
                self.sample_game = record

        for k, spec in enumerate(ev.opponents):
            if games:
                opponent = make_agent(spec, seed=self.config.seed + k)
                result = self._match(learner, opponent, games, seed=10_000 + self.config.seed,
                                     max_moves=ev.max_moves,
                                     on_record=keep_sample if k == len(ev.opponents) - 1 else None)
                evaluation.results[spec] = result.as_dict()
            if search_games:
                agent = AZAgent(net, ev.search_simulations, settings=self.config.search)
                agent.spec = f"az-search:{ev.search_simulations}"
                opponent = make_agent(spec, seed=self.config.seed + k)
                result = self._match(agent, opponent, search_games,
                                     seed=20_000 + self.config.seed, max_moves=ev.max_moves)
                evaluation.results[f"search:{spec}"] = result.as_dict()
        torch.set_num_threads(self.config.threads)
        return evaluation

    # ------------------------------------------------------------------ the generators

    def _open_pool(self) -> GeneratorPool:  # PoolOwner: `generators`, `close()`
        factory = functools.partial(make_generator, self.config, network_shape(self.net),
                                    self.config.distributed.workers)
        return open_pool(factory, self.config.distributed, self.config.seed,
                         self._generator_states, self.counters.iterations)

    def _match(self, a, b, games: int, seed: int, max_moves: int, on_record=None):
        """`arena.match`; on Ray, with the games spread over the generators' actors."""
        if self.config.distributed.backend == "ray":
            result = match_on_pool(self.generators, cpu_weights(self.policy_net),
                                   self.counters.iterations, a, b, games, seed, max_moves,
                                   on_record)
            if result is not None:
                return result
        return match(a, b, games, seed=seed, max_moves=max_moves, on_record=on_record)

    # ------------------------------------------------------------------ the loop

    def run(self) -> AZEvaluation:
        """Train to total_positions, evaluate, save; the generators stop at the end."""
        try:
            _ = self.generators  # start them (join Ray) before anything is written: fail early
            return self._run()
        finally:
            self.close()

    def _run(self) -> AZEvaluation:
        config = self.config
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(self.run_dir / "tensorboard"),
                               purge_step=self.counters.positions)
        tty = sys.stdout.isatty()
        columns = (TextColumn("[bold]alphazero"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                   TimeRemainingColumn())
        last_line = time.perf_counter()
        try:
            with Progress(*columns, console=self.console, disable=not tty) as progress:
                task = progress.add_task("az", total=config.total_positions,
                                         completed=self.counters.positions, status="")
                while self.counters.positions < config.total_positions:
                    losses = self.iterate()
                    self._log(writer, losses)
                    status = self._status(losses)
                    if self.counters.iterations % config.eval.every == 0 and config.eval.games:
                        evaluation = self.evaluate(config.eval.games)
                        self.history.append(evaluation)
                        self._log_evaluation(writer, evaluation)
                        status += "  " + "  ".join(f"{o} {evaluation.win_rate(o):.0%}"
                                                   for o in evaluation.results)
                    progress.update(task, completed=min(self.counters.positions,
                                                        config.total_positions), status=status)
                    if not tty and (time.perf_counter() - last_line > 20
                                    or self.counters.positions >= config.total_positions):
                        last_line = time.perf_counter()
                        self.console.print(
                            f"[{self.counters.positions:>8,}/{config.total_positions:,} positions, "
                            f"{self.counters.seconds:6.0f}s] {status}", highlight=False)
                    if self.counters.iterations % config.checkpoint_every == 0:
                        self.save()
        except KeyboardInterrupt:
            self.save()
            self.console.print(f"interrupted: saved {self.checkpoint_path}; continue with resume")
            raise
        finally:
            writer.close()
        if self.counters.pending:
            self.flush()
        self.save()
        self.console.print("final evaluation ...")
        tick = time.perf_counter()
        final = self.evaluate(config.eval.final_games, config.eval.final_search_games)
        eval_seconds = time.perf_counter() - tick
        self.history.append(final)
        self.save()
        self.save(self.run_dir / "final.pt", with_buffer=False)
        self._write_summary(final, eval_seconds)
        self._plot()
        return final

    # ------------------------------------------------------------------ reporting

    def _status(self, losses: dict) -> str:
        s = self.selfplay_stats
        length = np.mean(s.lengths) if s.lengths else 0.0
        text = f"games {self.counters.games}  len {length:.0f}"
        if losses:
            text += f"  pi {losses['policy']:.2f}  v {losses['value']:.3f}"
        return text

    def throughput(self) -> dict[str, float]:
        c = self.counters
        sp = max(c.selfplay_seconds, 1e-9)
        return {"positions_per_s": c.positions / sp, "evaluations_per_s": c.evaluations / sp,
                "games_per_s": c.games / sp,
                # with `overlap` the two run side by side, so the shares add up to more than 1
                "selfplay_share": c.selfplay_seconds / max(c.seconds, 1e-9),
                "train_share": c.train_seconds / max(c.seconds, 1e-9)}

    def _log(self, writer, losses: dict) -> None:
        step = self.counters.positions
        for key, value in losses.items():
            writer.add_scalar(f"loss/{key}", value, step)
        writer.add_scalar("optim/learning_rate", self.optimizer.param_groups[0]["lr"], step)
        for key, value in self.throughput().items():
            writer.add_scalar(f"throughput/{key}", value, step)
        s = self.selfplay_stats
        if s.lengths:
            writer.add_scalar("selfplay/mean_game_length", float(np.mean(s.lengths)), step)
        if s.games:
            writer.add_scalar("selfplay/draw_share", s.draws / s.games, step)
            writer.add_scalar("selfplay/red_win_share", s.red_wins / s.games, step)
        if s.opponent_games:
            writer.add_scalar("selfplay/win_share_vs_random_opponent",
                              s.opponent_wins / s.opponent_games, step)
        if s.dagger_games:  # how the raw policy's moves fare against the searches'
            writer.add_scalar("selfplay/dagger_win_share", s.dagger_wins / s.dagger_games, step)
        writer.add_scalar("replay/size", len(self.buffer), step)
        log_pool(writer, self._pool, step)

    def _log_evaluation(self, writer, evaluation: AZEvaluation) -> None:
        for opponent in evaluation.results:
            writer.add_scalar(f"eval/win_rate_vs_{opponent}", evaluation.win_rate(opponent),
                              evaluation.positions)
        if self.sample_game is not None:  # how the raw policy plays now, as an animation
            log_game(writer, f"eval/game_vs_{self.config.eval.opponents[-1]}", self.sample_game,
                     evaluation.positions)
            self.sample_game = None
        rating = evaluation.elo()
        if rating is not None:
            for name, value in zip(("elo", "elo_low", "elo_high"), rating):
                writer.add_scalar(f"eval/{name}", value, evaluation.positions)

    def _write_summary(self, final: AZEvaluation, eval_seconds: float) -> None:
        c = self.counters
        table = Table(title=f"Final evaluation after {c.positions:,} self-play positions "
                            f"({c.games:,} games, {c.train_steps:,} gradient steps)")
        for column in ("player", "opponent", "games", "wins", "draws", "losses",
                       "win rate (95% CI)"):
            table.add_column(column, justify="left" if column in ("player", "opponent")
                             else "right")
        for key, r in final.results.items():
            player, opponent = (("search", key[7:]) if key.startswith("search:")
                                else ("raw policy", key))
            table.add_row(player, opponent, str(r["games"]), str(r["a_wins"]), str(r["draws"]),
                          str(r["b_wins"]), rate_with_interval(r["a_wins"], r["games"]))
        self.console.print(table)
        rates = self.throughput()
        self.console.print(
            f"self-play: {rates['positions_per_s']:.1f} positions/s, "
            f"{rates['evaluations_per_s']:.0f} network evaluations/s, "
            f"{rates['games_per_s']:.3f} games/s; training {c.seconds / 60:.1f} min "
            f"({rates['selfplay_share']:.0%} self-play, {rates['train_share']:.0%} gradient steps"
            f"{', side by side' if self.config.overlap else ''}); "
            f"final evaluation {eval_seconds:.0f} s")
        summary = {"final": asdict(final), "counters": asdict(c), "throughput": rates,
                   "final_eval_seconds": eval_seconds,
                   # batches delivered, dropped with a dead actor, refused; actors replaced
                   "generators": vars(self._pool.stats) if self._pool else None}
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=1))

    def _plot(self) -> Path | None:
        return plot_learning_curve(self.history, self.config.eval.opponents,
                                   self.run_dir / "learning_curve.png")


def plot_learning_curve(history: list[AZEvaluation], opponents: list[str],
                        path: str | Path) -> Path | None:
    """learning_curve.png: the raw policy's Elo with its 95% band (left) and its win rate
    against each opponent with 95% Wilson bands (right), over self-play positions; None
    without evaluations."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    figure, (elo_axis, rate_axis) = plt.subplots(1, 2, figsize=(11, 4))
    rated = [(e.positions, e.elo()) for e in history if e.elo() is not None]
    if rated:
        xs = [x for x, _ in rated]
        elo_axis.plot(xs, [r[0] for _, r in rated], marker="o", color="tab:purple")
        elo_axis.fill_between(xs, [r[1] for _, r in rated], [r[2] for _, r in rated],
                              color="tab:purple", alpha=0.2, label="95% interval")
        for name, rating in BASELINE_ELO.items():
            elo_axis.axhline(rating, color="grey", linewidth=0.8, linestyle="--")
            elo_axis.annotate(name, (xs[0], rating), fontsize=8, color="grey",
                              textcoords="offset points", xytext=(2, 2))
        elo_axis.legend(loc="lower right")
    elo_axis.set(xlabel="self-play positions", ylabel="Elo (random = 0)",
                 title="raw policy (no search): Elo on the baselines' scale")
    for opponent in opponents:
        points = [(e.positions, e.results[opponent]) for e in history
                  if opponent in e.results and e.results[opponent]["games"]]
        if not points:
            continue
        xs = [x for x, _ in points]
        bands = [wilson_interval(r["a_wins"], r["games"]) for _, r in points]
        line, = rate_axis.plot(xs, [r["a_wins"] / r["games"] for _, r in points],
                               marker="o", label=f"vs {opponent}")
        rate_axis.fill_between(xs, [b[0] for b in bands], [b[1] for b in bands],
                               color=line.get_color(), alpha=0.15)
    rate_axis.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    rate_axis.set(xlabel="self-play positions", ylabel="win rate", ylim=(-0.02, 1.02),
                  title="raw policy win rate (95% Wilson bands)")
    rate_axis.legend(loc="lower right")
    thousands = FuncFormatter(lambda x, _: f"{x / 1e6:g} M" if x >= 1e6 else f"{x / 1e3:g} k")
    for axis in (elo_axis, rate_axis):
        axis.xaxis.set_major_formatter(thousands)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return Path(path)
