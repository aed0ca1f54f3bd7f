"""The ladder's rows as read: agents (`Entry`) and games (`GameRow`), each checked where it is
read (types, ranges, references between tables, each game's score against its winner and its
stored record), and the pairs of agents in their canonical order."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ..core.checks import quoted
from ..pairing import pairing_game
from ..record import MAX_RECORD_BYTES, GameRecord, RecordError
from .database import LadderDB, LadderError

MAX_GAMES_PER_PAIR = 100_000
MAX_NAME = 100
MAX_SPEC = 4096


@dataclass(frozen=True)
class Entry:
    """An agent of the ladder."""

    id: int
    name: str
    spec: str
    key: str
    roster: bool


@dataclass(frozen=True)
class GameRow:
    """One stored game, checked: its row id, the pair (agent ids a, b), index, a's score and
    the winner, and its record's JSON text."""

    id: int
    a: int
    b: int
    game: int
    score: float
    winner: str | None
    record: str


def pair_seed(ladder_seed: int, key_a: str, key_b: str) -> int:
    """The seed of the pair's games: a pure function of the ladder's seed and the two keys."""
    text = f"{ladder_seed}\0{key_a}\0{key_b}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big") & 0x7FFFFFFF


def is_int(value: object, low: int, high: int) -> bool:
    """Whether a stored value is an integer (not a bool, float or text) in [low, high]."""
    return type(value) is int and low <= value <= high


def name_problem(name: object) -> str | None:
    """What is wrong with an agent's name, or None."""
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_NAME
        or any(not c.isprintable() for c in name)
    ):
        return f"an agent name must be 1 to {MAX_NAME} printable characters, got {quoted(name)}"
    return None


def canonical(x: Entry, y: Entry) -> tuple[Entry, Entry]:
    """The pair (x, y) in the order the database stores it: by key."""
    return (x, y) if x.key < y.key else (y, x)


def pairs(agents: list[Entry], others: list[Entry] | None = None) -> list[tuple[Entry, Entry]]:
    """Canonical (a, b) pairs: every pair of `agents`, or each of `agents` with `others`."""
    every = (
        [(x, y) for k, x in enumerate(agents) for y in agents[k + 1 :]]
        if others is None
        else [(x, y) for x in agents for y in others if x.id != y.id]
    )
    return [canonical(x, y) for x, y in every]


def read_entries(ladder: LadderDB) -> dict[int, Entry]:
    """Every agent, checked: id -> Entry, in the order added."""
    entries: dict[int, Entry] = {}
    names, keys = set(), set()
    for row in ladder.db.execute("SELECT id, name, spec, key, roster FROM agents ORDER BY id"):
        id_, name, spec, key, roster = row
        if not is_int(id_, 1, 2**63 - 1):
            raise ladder.bad("agents", id_, "its id must be a positive integer")
        problem = name_problem(name)
        if problem is not None:
            raise ladder.bad("agents", id_, problem)
        if not isinstance(spec, str) or not 0 < len(spec) <= MAX_SPEC:
            raise ladder.bad(
                "agents",
                id_,
                f"its spec must be a string of 1 to {MAX_SPEC} characters, got {quoted(spec)}",
            )
        if not isinstance(key, str) or not 0 < len(key) <= 2 * MAX_SPEC:
            raise ladder.bad("agents", id_, f"its key must be a string, got {quoted(key)}")
        if roster not in (0, 1) or type(roster) is not int:
            raise ladder.bad("agents", id_, f"roster must be 0 or 1, got {quoted(roster)}")
        if name in names or key in keys:
            raise ladder.bad("agents", id_, "its name or key repeats another agent's")
        names.add(name)
        keys.add(key)
        entries[id_] = Entry(id_, name, spec, key, bool(roster))
    return entries


def read_games(ladder: LadderDB, entries: dict[int, Entry] | None = None) -> list[GameRow]:
    """Every stored game, checked against its agents, its pair's seed and its record."""
    entries = read_entries(ladder) if entries is None else entries
    rows = []
    seen: set[tuple[int, int, int]] = set()
    for row in ladder.db.execute(
        "SELECT id, a, b, game, seed, a_red, score, winner, reason, "
        "moves, record FROM games ORDER BY id"
    ):
        rows.append(check_game(ladder, row, entries, seen))
    return rows


def check_game(
    ladder: LadderDB,
    row: tuple[Any, ...],
    entries: dict[int, Entry],
    seen: set[tuple[int, int, int]],
) -> GameRow:
    """One games row (as `read_games` selects it), checked; `seen` holds the (a, b, game) of
    the rows checked before it."""
    id_, a, b, game, seed, a_red, score, winner, reason, moves, record = row

    def bad(problem: str) -> LadderError:
        return ladder.bad("games", id_, problem)

    if not is_int(id_, 1, 2**63 - 1):
        raise bad("its id must be a positive integer")
    for side, agent in (("a", a), ("b", b)):
        if type(agent) is not int or agent not in entries:
            raise bad(f"agent {side} = {quoted(agent)} is no agent of the ladder")
    if a == b or not entries[a].key < entries[b].key:
        raise bad("its agents a and b must be two agents in canonical order")
    if not is_int(game, 0, MAX_GAMES_PER_PAIR - 1):
        raise bad(f"game must be an index from 0 to {MAX_GAMES_PER_PAIR - 1}, got {quoted(game)}")
    if (a, b, game) in seen:
        raise bad(f"game {game} of its pair is stored twice")
    seen.add((a, b, game))
    if seed != pair_seed(ladder.seed, entries[a].key, entries[b].key):
        raise bad(f"seed {quoted(seed)} is not its pair's seed")
    if (
        a_red not in (0, 1)
        or type(a_red) is not int
        or bool(a_red) != pairing_game(game, seed).a_is_red
    ):
        raise bad(f"a_red must be 1 in even games and 0 in odd ones, got {quoted(a_red)}")
    if winner not in ("red", "blue", None):
        raise bad(f"winner must be 'red', 'blue' or null, got {quoted(winner)}")
    expected = 0.5 if winner is None else float((winner == "red") == bool(a_red))
    if type(score) not in (int, float) or score != expected:
        raise bad(
            f"score {quoted(score)} does not agree with its winner {quoted(winner)} "
            f"(a's score must be {expected:g})"
        )
    if reason is not None and not isinstance(reason, str):
        raise bad(f"reason must be text or null, got {quoted(reason)}")
    if not isinstance(record, str) or len(record) > MAX_RECORD_BYTES:
        raise bad("its record must be JSON text")
    try:
        data = json.loads(record)
    except (ValueError, RecursionError):
        raise bad("its record is not JSON") from None
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, dict) or not isinstance(data.get("moves"), list):
        raise bad("its record must be an object with 'moves' and 'result'")
    stored = result.get("winner")
    if (None if stored == "draw" else stored) != winner:
        raise bad(f"winner {quoted(winner)} is not its record's winner {quoted(stored)}")
    if type(moves) is not int or moves != len(data["moves"]):
        raise bad(f"moves {quoted(moves)} is not the number of moves in its record")
    return GameRow(id_, a, b, game, float(score), winner, record)


def game_record(ladder: LadderDB, row: GameRow) -> GameRecord:
    """The stored game's record, checked field by field."""
    try:
        return GameRecord.from_dict(json.loads(row.record), f"ladder game {row.id}")
    except RecordError as error:
        raise ladder.bad("games", row.id, str(error)) from None


def count_games(ladder: LadderDB, a: Entry, b: Entry) -> int:
    """How many games of the canonical pair (a, b) are stored."""
    count: int = ladder.db.execute(
        "SELECT COUNT(*) FROM games WHERE a = ? AND b = ?", (a.id, b.id)
    ).fetchone()[0]
    return count
