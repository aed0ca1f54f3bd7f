"""Playing the games a ladder lacks: claimed a few at a time, played here, in worker processes
or on Ray actors (each keeps its agents between games), each stored as it arrives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..agents import Agent, make_agent
from ..arena import init_worker, play_pairing_game
from ..core.checks import quoted
from ..jobs import Workers
from ..placement import Placement
from .claims import HEARTBEAT, Heartbeat, Job, claim, new_owner, release, store
from .database import LadderDB, LadderError
from .roster import build
from .rows import MAX_GAMES_PER_PAIR, Entry, count_games

# this process's agents, one per spec and identity (workers build their own)
_agents: dict[tuple[str, str | None], Agent] = {}


def play_job(
    spec_a: str,
    spec_b: str,
    game: int,
    seed: int,
    max_moves: int,
    key_a: str | None = None,
    key_b: str | None = None,
) -> dict[str, Any]:
    """Play one ladder game (in this process or a worker): the record as a dict. With
    `key_a`/`key_b`, an agent whose identity is not that key (its file changed) is refused."""
    for spec, key in ((spec_a, key_a), (spec_b, key_b)):
        if (spec, key) not in _agents:
            agent = make_agent(spec, seed=0)
            if key is not None and agent.identity() != key:
                raise LadderError(
                    f"agent {quoted(spec)} is no longer the player it was when "
                    f"it joined the ladder (its file changed)"
                )
            _agents[spec, key] = agent
    record = play_pairing_game(
        _agents[spec_a, key_a], _agents[spec_b, key_b], game, seed, max_moves
    )
    return record.as_dict()


def play_ray_job(job: tuple[Any, ...], agents: dict[Any, Any] | None = None) -> dict[str, Any]:
    """`play_job` in a Ray actor (the actor keeps its agents between jobs)."""
    return play_job(*job)


def play_games(
    ladder: LadderDB,
    pairs: list[tuple[Entry, Entry]],
    games: int,
    placement: Placement | None = None,
    progress: Callable[[int, int], None] | None = None,
    allow_pickle: bool = False,
) -> int:
    """Play the games `pairs` still lack up to `games` each; returns how many this call
    stored. Games are claimed a few at a time, so runs beside it share the work; they run at
    `placement` (default this process)."""
    if not 1 <= games <= MAX_GAMES_PER_PAIR:
        raise LadderError(f"games per pair must be in [1, {MAX_GAMES_PER_PAIR}], got {games}")
    # every agent builds, and is still itself, before a game is played
    for entry in {e.id: e for pair in pairs for e in pair}.values():
        build(ladder, entry, allow_pickle)
    owner = new_owner()
    total = sum(max(0, games - count_games(ladder, a, b)) for a, b in pairs)
    stored = played = 0

    def keeper(jobs: list[Job]) -> Callable[[int, dict[str, Any]], None]:
        """Stores each finished game of `jobs` as it arrives (Ctrl-C keeps it)."""

        def keep(index: int, record: dict[str, Any]) -> None:
            nonlocal stored, played
            stored += store(ladder, jobs[index], record, owner)
            played += 1
            if progress:
                progress(played, total)

        return keep

    placement = placement or Placement()
    batch = 1 if placement.kind == "local" else 2 * placement.workers
    heartbeat = Heartbeat(ladder.path, owner, HEARTBEAT)
    heartbeat.start()
    try:
        with Workers(placement, init=init_worker) as pool:
            while True:
                jobs = claim(ladder, pairs, games, batch, owner)
                if not jobs:
                    return stored
                pool.run(
                    [
                        (j.a.spec, j.b.spec, j.game, j.seed, ladder.max_moves, j.a.key, j.b.key)
                        for j in jobs
                    ],
                    play_ray_job,
                    keeper(jobs),
                )
    finally:
        heartbeat.stop()
        release(ladder, owner)
