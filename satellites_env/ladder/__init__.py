"""A rating ladder: every game between its agents kept in a SQLite database, Bradley-Terry
ratings with 95% intervals over all of them (`satellites_env.rating`).

Chess engine testers keep rating lists this way (CCRL, CEGT, rated with Ordo or BayesElo): a
new agent plays only its own games, and every rating sits on one stable scale, the shipped
scale of `satellites_env.rating.SCALE` (`greedy` = +400 when it plays).

The database (`ladder.db`; SQLite in WAL mode while it is written, so readers do not block
the writer):

* `agents`: one row per player: its `name`, the `spec` that builds it, and its identity `key`
  ([`Agent.identity`][satellites_env.agents.Agent.identity]: the spec, or for a file agent
  the sha256 of the file: a renamed file is the same player, a changed file a new one).
  `roster` is 1 for the ladder's agents (`add`), 0 for an agent only rated against them
  (`rate`).
* `games`: one row per game: the two agents in canonical order (`a`, `b`: by key), the game
  index, its set-up seed, the colours, a's score (1, 0.5, 0) and the whole record (start
  position and moves, JSON), so that every game replays.
* `claims`: the games being played now, by which process (two `ladder run` at once never play
  a game twice). A claim is a lease: its run renews `at` every `HEARTBEAT` seconds, and a
  claim not renewed for `CLAIM_LEASE` seconds is taken over; on the claim's own host, a claim
  whose process is gone, or whose pid now belongs to a process started at another time (the
  claim's `owner` records its process's start time), is taken over at once. A live process
  that is not a ladder run cannot renew a lease, so it holds no game for longer than the
  lease.
* `meta`: the format and the ladder's settings (`seed`, `max_moves`).

A database is data from whoever wrote it. Every row is checked where it is read (types,
ranges, references between tables, each game's score against its winner and its stored
record); a row that fails is one [`LadderError`][satellites_env.ladder.LadderError] naming
the database and the row. Specs read from the database build only agents that load data
(`random`, `greedy`, `mcts:N`, `checkpoint:PATH`, `az:PATH`) unless `allow_pickle`: an
`rllib:PATH` agent, or one of another package, may unpickle its files, which runs code. A
file agent plays only while its file still has the sha256 it joined with. Read-only use
(`Ladder(path, readonly=True)`) never writes the file and leaves nothing beside it.

Game i of the pair (a, b) is the arena's pairing game i
([`play_pairing_game`][satellites_env.arena.play_pairing_game]: a is red in even games,
set-ups shared by pairs of games) from the seed `pair_seed(ladder seed, key a, key b)`: a
pure function of the ladder, the pair and the index, so two ladders fed the same agents hold
the same games.

The parts, each importing only those before it: `database` (the file, its schema and format),
`rows` (agents and games as read, checked), `roster` (adding and building agents), `claims`
(claims, leases and storing a finished game), `playing` (the games played), `ratings`, and
`ladder` (the [`Ladder`][satellites_env.ladder.Ladder] over them).
"""

from .claims import CLAIM_LEASE, HEARTBEAT, Job
from .database import APPLICATION_ID, COLUMNS, FORMAT, MAX_SEED, SCHEMA, LadderError
from .ladder import Ladder
from .playing import play_job, play_ray_job
from .ratings import RateResult
from .rows import MAX_GAMES_PER_PAIR, MAX_NAME, MAX_SPEC, Entry, GameRow, pair_seed

__all__ = [
    "APPLICATION_ID",
    "CLAIM_LEASE",
    "COLUMNS",
    "FORMAT",
    "HEARTBEAT",
    "MAX_GAMES_PER_PAIR",
    "MAX_NAME",
    "MAX_SEED",
    "MAX_SPEC",
    "SCHEMA",
    "Entry",
    "GameRow",
    "Job",
    "Ladder",
    "LadderError",
    "RateResult",
    "pair_seed",
    "play_job",
    "play_ray_job",
]
