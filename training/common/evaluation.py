"""A run's evaluations: the matches the learner's players play, where their games run (the
generators' Ray actors, or the arena's job runner: this process or evaluation processes), and
the final table's rounds under its deadline when the run has a time budget."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import torch

from satellites_env.arena import PairResult
from satellites_env.pairing import pairing_game
from satellites_env.placement import Placement

from .learner import Games, Learner, Player
from .network import PolicyValueNet
from .run_state import Evaluation, pinned_files

if TYPE_CHECKING:
    from satellites_env.jobs import Workers

    from ..distributed.pool import GeneratorPool

#: the pairing seed of the evaluation games of player j is EVAL_SEED * (j + 1) + the run's seed
EVAL_SEED = 10_000
#: with a time budget (`minutes`), the share of it that training leaves to the final table
#: at least, and the games of each match in one round of the final table under its deadline
FINAL_SHARE = 0.2
ROUND_GAMES = 8


class Match(NamedTuple):
    """A match of an evaluation: `player` against `opponent` (made with `opponent_seed`),
    its games (the first N, or a range of game indices) of the pairing seeded `seed`."""

    player: Player
    opponent: str
    opponent_seed: int
    games: int | range
    seed: int

    @property
    def indices(self) -> range:
        """The game indices of the match."""
        return range(self.games) if isinstance(self.games, int) else self.games

    def play(self, net: PolicyValueNet, max_moves: int) -> Games:
        """The match's games on `net`: [(index, record)] in index order."""
        return self.player.play(
            net, self.opponent, self.opponent_seed, list(self.indices), self.seed, max_moves
        )

    @classmethod
    def of_run(
        cls, player: Player, j: int, opponent: str, k: int, games: int | range, run_seed: int
    ) -> Match:
        """The evaluation match of the run seeded `run_seed` between the learner's player `j`
        (0: the policy, 1: its search) and the evaluation opponent `k`: the opponent made
        with seed `run_seed + k`, the games those of the pairing seeded
        `EVAL_SEED * (j + 1) + run_seed`."""
        return cls(player, opponent, run_seed + k, games, EVAL_SEED * (j + 1) + run_seed)

    def shares(self, workers: int) -> list[Match]:
        """The match cut into `workers` shares (game indices k, k + workers, ...)."""
        indices = self.indices
        return [self._replace(games=indices[k::workers]) for k in range(workers)]


class HoldsNetwork(Protocol):
    """A self-play generator, as far as an evaluation on its actor needs it."""

    net: PolicyValueNet


def play_match_games(generator: HoldsNetwork, match: Match, max_moves: int) -> Games:
    """A match's games on a generator's network (the pool runs it on its actors)."""
    return match.play(generator.net, max_moves)


class WorkerShare(NamedTuple):
    """A share of a match for an evaluation process, with the network it plays on."""

    shape: dict[str, Any]
    weights: dict[str, torch.Tensor]
    match: Match
    max_moves: int


def play_in_worker(job: WorkerShare) -> Games:
    """A share's games in an evaluation process, on a network of its shape and weights."""
    net = job.match.player.network(job.shape)
    net.load_state_dict(job.weights)
    return job.match.play(net.eval(), job.max_moves)


def play_here(net: PolicyValueNet, job: WorkerShare) -> Games:
    """A share's games in this process, on the learner's network `net` itself."""
    return job.match.play(net, job.max_moves)


@contextlib.contextmanager
def torch_threads_one() -> Iterator[None]:
    """Evaluation games run a batch of one: one torch thread (see PolicyAgent)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class EvaluationGames:
    """Where the games of an evaluation's matches run, at the self-play generators'
    `placement`: on Ray, over the generators' actors (`ray_pool()`: the pool, holding the
    learner's weights); else on the arena's job runner, in `placement.workers` evaluation
    processes when more than one (started on first use, kept until `close`), or in this
    process. Each game is a pure function of its index, so the results do not depend on
    where it ran."""

    def __init__(self, placement: Placement, ray_pool: Callable[[], GeneratorPool]):
        self.placement = placement
        #: where the games run when not on the generators' actors
        self.jobs = Placement.of(placement.workers)
        self.ray_pool = ray_pool
        self._processes: Workers | None = None

    def play(
        self,
        matches: list[Match],
        net: PolicyValueNet,
        max_moves: int,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Games]:
        """The games of each match on `net`, each match's as [(index, record)] in index order.
        In processes, every match's shares go in one queue, so that a worker that finishes
        its share of one match starts on the next instead of waiting for the other's.
        `progress` is called as (games played, games in all) as each share comes back."""
        workers = self.jobs.workers
        total, done = sum(len(match.indices) for match in matches), 0

        def count(games: int) -> None:
            nonlocal done
            done += games
            if progress is not None:
                progress(done, total)

        played: list[list[Games]]
        if self.placement.on_ray:
            pool = self.ray_pool()
            played = []
            for match in matches:
                shares = [(share, max_moves) for share in match.shares(pool.workers)]
                played.append(pool.run(play_match_games, shares))
                count(len(match.indices))
        else:
            here = self.jobs.kind == "local"
            weights = {} if here else {k: v.detach().cpu() for k, v in net.state_dict().items()}
            jobs, owner = [], []
            for m, match in enumerate(matches):
                for share in match.shares(workers):
                    if not share.indices:
                        continue
                    jobs.append(WorkerShare(net.shape, weights, share, max_moves))
                    owner.append(m)
            results = self._evaluators().run(
                jobs,
                functools.partial(play_here, net) if here else play_in_worker,
                lambda index, _: count(len(jobs[index].match.indices)),
            )
            played = [[] for _ in matches]
            for m, part in zip(owner, results, strict=True):
                played[m].append(part)
        return [
            sorted((pair for part in parts for pair in part), key=lambda p: p[0])
            for parts in played
        ]

    def play_in_rounds(
        self,
        matches: list[Match],
        net: PolicyValueNet,
        max_moves: int,
        seconds: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Games]:
        """The matches' games in rounds of ROUND_GAMES games of each (colours balanced: game
        pairs 2j, 2j+1 together), round after round while the next round, as long as the
        last one took, fits in `seconds`: the games played are the first ones of each match,
        the same games as without a deadline."""
        played: list[Games] = [[] for _ in matches]
        counts = [len(match.indices) for match in matches]
        size = max(ROUND_GAMES, 2 * self.placement.workers)
        start, last = time.perf_counter(), 0.0
        for first in range(0, max(counts, default=0), size):
            if first and time.perf_counter() - start + last > seconds:
                break
            tick = time.perf_counter()
            todo = [
                (m, match._replace(games=range(first, min(first + size, count))))
                for m, (match, count) in enumerate(zip(matches, counts, strict=True))
                if first < count
            ]
            count = None
            if progress is not None:
                count = functools.partial(_offset, progress, sum(map(len, played)), sum(counts))
            rounds = self.play([match for _, match in todo], net, max_moves, count)
            for (m, _), games in zip(todo, rounds, strict=True):
                played[m] += games
            last = time.perf_counter() - tick
        return played

    def _evaluators(self) -> Workers:
        """The job runner of the evaluations: this process, or the evaluation processes
        (started on first use, kept until `close`): fresh interpreters, one thread each, that
        the learner's numba and torch threads do not follow into."""
        if self._processes is None:
            from multiprocessing import get_context

            from satellites_env.arena import init_worker
            from satellites_env.jobs import Workers

            self._processes = Workers(self.jobs, init=init_worker, context=get_context("spawn"))
        return self._processes

    def close(self) -> None:
        """Stop the evaluation processes (the next evaluation starts them again)."""
        if self._processes is not None:
            self._processes.close()
            self._processes = None


class Evaluating(Learner):
    """The run's evaluations (a part of the [`Trainer`][training.common.run.Trainer]): the
    learner's players against the evaluation opponents along the run, and the final table."""

    games: EvaluationGames  # where the games run (the Trainer makes it)
    files: dict[str, str]  # key -> sha256 of each network file the config names

    def evaluate(
        self, *, final: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> Evaluation:
        """The learner's policy against each evaluation opponent (`eval.games` each), or, at
        the end, each of its players against each final opponent (`eval.final`). The policy's
        first game against the last opponent is kept in `sample_game`. `progress` is called
        as (games played, games in all) as each share of games comes back."""
        pinned_files(self.config, self.files)  # every opponent is still the one the run began with
        evaluation = Evaluation(self.progress, minutes=self.counters.seconds / 60, final=final)
        self.net.eval()
        ev, seed = self.config.eval, self.config.seed
        opponents = ev.final if final else {spec: ev.games for spec in ev.opponents}
        players = self.players(final) if final else self.players(False)[:1]
        matches = [
            Match.of_run(player, j, spec, k, games, seed)
            for j, player in enumerate(players)
            for k, (spec, games) in enumerate(
                (self.final_games(player) if final else opponents).items()
            )
            if games
        ]
        matches += [] if final else self.matches_along_the_run()
        self.doing(f"evaluating against {', '.join(opponents)}")
        with torch_threads_one():
            if final and self.config.minutes > 0:
                played = self.games.play_in_rounds(
                    matches, self.net, ev.max_moves, self.final_seconds_left(), progress
                )
                if any(len(g) < len(m.indices) for m, g in zip(matches, played, strict=True)):
                    self.console.print(
                        "the time budget (minutes) ended the final table before all its "
                        "games: the table shows the games played (the first of each match)"
                    )
            else:
                played = self.games.play(matches, self.net, ev.max_moves, progress)
        last = list(opponents)[-1] if opponents else None
        for match, records in zip(matches, played, strict=True):
            player, spec = match.player, match.opponent
            result = self.pair_result(match, records)
            if player is players[0] and spec == last and records and records[0][0] == 0:
                self.sample_game = records[0][1]
            evaluation.results[f"{player.key}:{spec}" if player.key else spec] = result.as_dict()
        return evaluation

    def final_games(self, player: Player) -> dict[str, int]:
        """The final table's opponents of `player` and the games against each: `eval.final`
        here (a learner may give its other players their own)."""
        return self.config.eval.final

    def matches_along_the_run(self) -> list[Match]:
        """Matches besides the policy's that every evaluation along the run plays, in the
        same worker queue; none here."""
        return []

    def final_seconds_left(self) -> float:
        """What is left of the time budget (`minutes`) for the final table: the budget less
        the training and the evaluations along the run, at least FINAL_SHARE of it."""
        budget = float(self.config.minutes) * 60
        used = self.counters.seconds + self.counters.other_seconds
        return float(max(budget - used, budget * FINAL_SHARE))

    def play_matches(self, matches: list[Match], max_moves: int) -> list[Games]:
        """The games of each match as the evaluations play them (`EvaluationGames.play`):
        game i of a match is the arena's game i of that pairing (`arena.play_pairing_game`),
        wherever it ran."""
        self.net.eval()
        with torch_threads_one():
            return self.games.play(matches, self.net, max_moves)

    def pair_result(self, match: Match, games: Games) -> PairResult:
        """The result of the match's `games` ([(index, record)]), its player as a (red as the
        pairing rule says, `satellites_env.pairing`)."""
        result = PairResult(match.player.build(self.net).spec, match.opponent)
        for i, record in games:
            result.add(record, a_is_red=pairing_game(i, match.seed).a_is_red)
        return result


def _offset(
    progress: Callable[[int, int], None], before: int, total: int, done: int, _: int
) -> None:
    """`progress` of a round's games counted after the `before` played in earlier rounds."""
    progress(before + done, total)
