"""Tournaments between agents: win/draw/loss per pairing with Wilson intervals, and Elo.

Each pairing plays `games` games with fixed seeds, each agent red in half of them: game `i`
is the pairing rule's ([`pairing_game`][satellites_env.pairing.pairing_game]: its set-up,
colours and agent seeds), so every pairing sees the same set-ups and a tournament is
reproducible exactly.

Winners use the game records' vocabulary: `"red"`, `"blue"`, or None (JSON null) for a draw.
With `workers` > 1, each worker process runs its agents on one thread (`OMP_NUM_THREADS=1`
and friends, `torch.set_num_threads(1)`): the processes are the parallelism, and a torch
policy using every core in every process would only make them fight over the cores. The
games go to those processes (or to Ray actors) through the one job runner,
`satellites_env.jobs`; saving and continuing a tournament is `satellites_env.tournament`.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from . import rating
from .agents import Agent, canonical_spec, make_agent
from .core.board import DEFAULT_MAX_MOVES
from .core.game import Game
from .jobs import run_jobs
from .pairing import pairing_game
from .placement import Placement
from .record import GameRecord

Z95 = rating.Z95


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_with_interval(wins: int, games: int) -> str:
    """`88.0% [82.8%, 91.8%]`: a win rate with its 95% Wilson interval."""
    low, high = wilson_interval(wins, games)
    return f"{wins / games:.1%} [{low:.1%}, {high:.1%}]"


#: The baselines' ratings on the shipped scale (`satellites_env.rating.SCALE`).
BASELINE_ELO = {name: rating.SCALE[name] for name in ("random", "greedy", "mcts:200")}


def elo_against(
    results: list[tuple[float, float, int]], z: float = Z95
) -> tuple[float, float, float]:
    """(Elo, low, high): the rating of one player from its games against opponents of known
    rating, `results` holding (opponent Elo, score, games) per opponent
    ([`rating.against_known`][satellites_env.rating.against_known])."""
    return rating.against_known(results, z)


def play_game(
    red: Agent, blue: Agent, setup_seed: int, max_moves: int = DEFAULT_MAX_MOVES
) -> GameRecord:
    """One game between two agents from the R4 set-up of `setup_seed`."""
    game = Game.new(seed=setup_seed, max_moves=max_moves)
    start = game.to_spn()
    agents = (red, blue)
    while not game.is_over:
        game.play(agents[game.to_move].act(game))
    return GameRecord.of(start, game, {"red": red.spec, "blue": blue.spec})


@dataclass
class PairResult:
    a: str
    b: str
    games: int = 0
    a_wins: int = 0
    b_wins: int = 0
    draws: int = 0
    a_as_red: int = 0

    def add(self, record: GameRecord, a_is_red: bool) -> None:
        self.add_winner(record.result["winner"], a_is_red)

    def add_winner(self, winner: str | None, a_is_red: bool) -> None:
        """Count one game won by `winner` ("red", "blue", or None for a draw)."""
        self.games += 1
        self.a_as_red += a_is_red
        if winner is None or winner == "draw":  # "draw": records written before null
            self.draws += 1
        elif (winner == "red") == a_is_red:
            self.a_wins += 1
        else:
            self.b_wins += 1

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "games": self.games,
            "a_wins": self.a_wins,
            "b_wins": self.b_wins,
            "draws": self.draws,
        }


def match(
    a: Agent,
    b: Agent,
    games: int,
    seed: int,
    max_moves: int = DEFAULT_MAX_MOVES,
    on_record: Callable[[int, GameRecord], None] | None = None,
) -> PairResult:
    """`games` games between two agent objects in this process, colors balanced;
    `on_record(i, record)` is called with each game's record (to keep some)."""
    result = PairResult(a.spec, b.spec)
    for i in range(games):
        record = play_pairing_game(a, b, i, seed, max_moves)
        result.add(record, a_is_red=pairing_game(i, seed).a_is_red)
        if on_record is not None:
            on_record(i, record)
    return result


def play_pairing_game(a: Agent, b: Agent, i: int, seed: int, max_moves: int) -> GameRecord:
    """Game i of a pairing as the pairing rule makes it
    ([`pairing_game`][satellites_env.pairing.pairing_game]): both agents reseeded, `a` red in
    even games, games 2j and 2j+1 sharing a set-up with colors swapped."""
    game = pairing_game(i, seed)
    a.reset(seed=game.seed_a)
    b.reset(seed=game.seed_b)
    red, blue = (a, b) if game.a_is_red else (b, a)
    return play_game(red, blue, game.setup_seed, max_moves)


@dataclass
class TournamentResult:
    """A round robin's results. `records` has one entry per scheduled game (schedule order):
    its record, or None for a game not played (an interrupted tournament) or known only by
    its summary (`known`, a game kept in an unfinished results file and not played again)."""

    agents: list[str]
    pairs: list[PairResult]
    elo: dict[str, float | None] = field(default_factory=dict)  # None: unrated (no games)
    records: list[GameRecord | None] = field(default_factory=list)
    elo_anchor: str = ""  # the agent whose Elo is fixed
    seed: int = 0
    games_per_pairing: int = 0
    max_moves: int = DEFAULT_MAX_MOVES
    known: dict[int, dict] = field(default_factory=dict)

    @property
    def finished(self) -> list[int]:
        """The schedule indices of the games finished (with a record or a summary)."""
        return [k for k, record in enumerate(self.records) if record is not None or k in self.known]

    @property
    def complete(self) -> bool:
        """Every scheduled game finished (False after an interruption)."""
        return len(self.finished) == len(self.records)

    def game_summaries(self) -> list[dict]:
        """One line per finished game, in schedule order: pairing, game index, set-up seed,
        who played which color, winner ("red", "blue" or None for a draw), how it ended,
        moves."""
        jobs = schedule(self.agents, self.games_per_pairing, self.seed) if self.records else []
        summaries = []
        for k in self.finished:
            record = self.records[k]
            summaries.append(
                summary_of(jobs[k], self.seed, record)
                if record is not None
                else dict(self.known[k])
            )
        return summaries

    def as_dict(self) -> dict:
        """The results as JSON data; `complete` is false for an interrupted tournament, whose
        `games` then lists the finished games only (each names its pair and game)."""
        return {
            "agents": self.agents,
            "games_per_pairing": self.games_per_pairing,
            "seed": self.seed,
            "max_moves": self.max_moves,
            "complete": self.complete,
            "pairs": [p.as_dict() for p in self.pairs],
            "elo": self.elo,
            "elo_anchor": self.elo_anchor,
            "games": self.game_summaries(),
        }


class TournamentInterrupted(KeyboardInterrupt):
    """Ctrl-C during a tournament: `result` holds every game finished before it (its
    `complete` is False)."""

    def __init__(self, result: TournamentResult):
        super().__init__()
        self.result = result


SUMMARY_KEYS = ("pair", "game", "setup_seed", "red", "blue", "winner", "end", "reason", "moves")


def summary_of(job: tuple[int, int, str, str], seed: int, record: GameRecord) -> dict:
    """The summary line of scheduled game `job` (see TournamentResult.game_summaries)."""
    pair, i, _, _ = job
    return {
        "pair": pair,
        "game": i,
        "setup_seed": pairing_game(i, seed).setup_seed,
        "red": record.players.get("red"),
        "blue": record.players.get("blue"),
        "winner": record.result.get("winner"),
        "end": record.result.get("end"),
        "reason": record.result.get("reason"),
        "moves": len(record.moves),
    }


def colors_of(job: tuple[int, int, str, str], seed: int) -> dict[str, str]:
    """{"red": spec, "blue": spec} of scheduled game `job` of the tournament seeded `seed`."""
    _, i, a, b = job
    return pairing_game(i, seed).colors(a, b)


def check_summary(
    summary: object, job: tuple[int, int, str, str], seed: int, max_moves: int
) -> dict:
    """`summary` (from a results file) if it is the finished game `job` of this tournament;
    ValueError saying which field is not, otherwise."""
    pair, i, _, _ = job
    if not isinstance(summary, dict) or set(summary) != set(SUMMARY_KEYS):
        raise ValueError(f"expected an object with the keys {', '.join(SUMMARY_KEYS)}")
    colors = colors_of(job, seed)
    expected = {"pair": pair, "game": i, "setup_seed": pairing_game(i, seed).setup_seed, **colors}
    for key, value in expected.items():
        if type(summary[key]) is not type(value) or (
            canonical_spec(summary[key]) != canonical_spec(colors[key])
            if key in colors
            else summary[key] != value
        ):
            raise ValueError(f"'{key}' is {str(summary[key])[:40]!r}, expected {value!r}")
    if summary["winner"] not in ("red", "blue", None):
        raise ValueError('\'winner\' must be "red", "blue" or null')
    if summary["end"] not in ("terminated", "truncated"):
        raise ValueError('\'end\' must be "terminated" or "truncated" (a finished game)')
    if not isinstance(summary["reason"], str) or len(summary["reason"]) > 500:
        raise ValueError("'reason' must be a string of at most 500 characters")
    moves = summary["moves"]
    if type(moves) is not int or not 0 <= moves <= max_moves:
        raise ValueError(f"'moves' must be an integer from 0 to {max_moves}")
    if summary["end"] == "truncated" and moves != max_moves:
        raise ValueError(f"a truncated game has max_moves ({max_moves}) moves, not {moves}")
    return dict(summary)


def schedule(agents: list[str], games: int, seed: int) -> list[tuple[int, int, str, str]]:
    """(pair index, game index, a, b) for every game of the round robin."""
    if games < 1:
        raise ValueError(f"games per pairing must be >= 1, got {games}")
    return [
        (p, i, a, b)
        for p, (a, b) in enumerate(itertools.combinations(agents, 2))
        for i in range(games)
    ]


WORKER_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)

_agents: dict[str, Agent] = {}  # this worker process's agents, one per spec


def init_worker() -> None:
    """Worker processes compute on one thread each (set before anything imports torch; if
    torch came with the fork, tell it directly), and build their own agents."""
    numba = sys.modules.get("numba")
    for name in WORKER_THREAD_VARIABLES:
        # numba read NUMBA_NUM_THREADS when the parent imported it; a different value in the
        # environment makes its next compile in this process fail once its threads run, so
        # a numba that came with the fork is told how many threads to use instead.
        if not (numba is not None and name == "NUMBA_NUM_THREADS"):
            os.environ[name] = "1"
    if numba is not None:
        numba.set_num_threads(1)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    _agents.clear()


def run_job(
    job: tuple[int, int, str, str],
    seed: int,
    max_moves: int,
    agents: dict[str, Agent] | None = None,
) -> tuple[int, bool, GameRecord]:
    """Play one scheduled game. Agents are built once per spec and process (a checkpoint is
    loaded once, not per game); every game reseeds them, so results do not depend on which
    process played which game."""
    agents = _agents if agents is None else agents
    pair, i, a, b = job
    for spec in (a, b):
        if spec not in agents:
            agents[spec] = make_agent(spec)
    record = play_pairing_game(agents[a], agents[b], i, seed, max_moves)
    return pair, pairing_game(i, seed).a_is_red, record


def run_tournament(
    agents: list[str],
    games: int,
    seed: int = 0,
    placement: Placement | None = None,
    max_moves: int = DEFAULT_MAX_MOVES,
    progress: Callable[[int, int], None] | None = None,
    finished: Mapping[int, GameRecord | dict] | None = None,
) -> TournamentResult:
    """Round robin: every pair of `agents` plays `games` games (colors balanced).

    `progress(done, total)` is called after each game. The games run at `placement` (default
    this process; worker processes, each on one thread; or Ray actors, see
    `satellites_env.distributed`): the same results wherever they run.

    `finished` maps schedule indices to games already played (their record, or their summary
    as `game_summaries` gives it, checked by the caller): they are counted, not played again,
    so an interrupted tournament continues where it stopped. Ctrl-C raises
    TournamentInterrupted (a KeyboardInterrupt) holding the result of every game finished.
    """
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {agents}")
    if len({canonical_spec(spec) for spec in agents}) != len(agents):  # mcts:5 is mcts:05
        raise ValueError(f"agent specs must be distinct agents, got {agents}")
    placement = placement or Placement()
    jobs = schedule(agents, games, seed)
    finished = dict(finished or {})
    if not all(isinstance(k, int) and 0 <= k < len(jobs) for k in finished):
        raise ValueError(f"finished games must be schedule indices from 0 to {len(jobs) - 1}")
    built = {spec: make_agent(spec, seed=0) for spec in agents}  # fail fast, before any game
    records: list[GameRecord | None] = [None] * len(jobs)
    known: dict[int, dict] = {}
    for k, game in finished.items():
        if isinstance(game, GameRecord):
            records[k] = game
        else:
            known[k] = dict(game)
    todo = [k for k in range(len(jobs)) if k not in finished]
    done = len(finished)

    def keep(k: int, played: tuple[int, bool, GameRecord]) -> None:
        nonlocal done
        records[k] = played[2]
        done += 1
        if progress:
            progress(done, len(jobs))

    def result() -> TournamentResult:
        return tournament_result(agents, games, seed, max_moves, records, known)

    if progress and done:
        progress(done, len(jobs))
    # in this process, the agents built above play; workers build their own, once each
    here = placement.kind == "local"
    play = functools.partial(
        run_job, seed=seed, max_moves=max_moves, agents=built if here else None
    )
    try:
        run_jobs(
            [jobs[k] for k in todo],
            play,
            placement,
            init=init_worker,
            on_result=lambda index, played: keep(todo[index], played),
        )
    except KeyboardInterrupt:
        raise TournamentInterrupted(result()) from None
    return result()


def tournament_result(
    agents: list[str],
    games: int,
    seed: int,
    max_moves: int,
    records: list[GameRecord | None],
    known: dict[int, dict] | None = None,
) -> TournamentResult:
    """The result of the games finished: `records` (one per scheduled game, None where
    not played) and `known` (summaries of games without their record)."""
    known = known or {}
    jobs = schedule(agents, games, seed)
    pairs = [PairResult(a, b) for a, b in itertools.combinations(agents, 2)]
    for k, (pair, i, _, _) in enumerate(jobs):
        record, a_is_red = records[k], pairing_game(i, seed).a_is_red
        if record is not None:
            pairs[pair].add(record, a_is_red)
        elif k in known:
            pairs[pair].add_winner(known[k]["winner"], a_is_red)
    fitted = _fit(agents, pairs)
    return TournamentResult(
        list(agents),
        pairs,
        fitted.as_dict(),
        list(records),
        elo_anchor=fitted.anchor,
        seed=seed,
        games_per_pairing=games,
        max_moves=max_moves,
        known=dict(known),
    )


def elo_anchor(agents: list[str]) -> str:
    """The agent `fit_elo` fixes: the shipped scale's anchor among `agents`
    (`satellites_env.rating.scale_anchor`), else the first agent."""
    return rating.scale_anchor(agents)[0]


def fit_elo(
    agents: list[str], pairs: list[PairResult], prior_games: float = 1.0
) -> dict[str, float | None]:
    """Bradley-Terry maximum likelihood ratings on the Elo scale of a tournament's pairings
    ([`rating.fit`][satellites_env.rating.fit]: draws count half a win, `prior_games` virtual drawn
    games per pairing, placed on the shipped scale by the first of its agents that played,
    else the first agent at 0); None for an agent no chain of games links to the anchor."""
    return _fit(agents, pairs, prior_games).as_dict()


def _fit(agents: list[str], pairs: list[PairResult], prior_games: float = 1.0) -> rating.Ratings:
    index = {a: i for i, a in enumerate(agents)}
    scores = np.zeros((len(agents), len(agents)))
    games = np.zeros_like(scores)
    for pair in pairs:
        i, j = index[pair.a], index[pair.b]
        scores[i, j] += pair.a_wins + 0.5 * pair.draws
        scores[j, i] += pair.b_wins + 0.5 * pair.draws
        games[i, j] += pair.games
        games[j, i] += pair.games
    return rating.fit(agents, scores, games, prior_games=prior_games)
