"""Claims and leases: which games a run is playing now, so that two runs at once never play a
game twice, and storing a finished game once.

A claim is a lease: its run renews `at` every `HEARTBEAT` seconds (`Heartbeat`), and a claim
not renewed for `CLAIM_LEASE` seconds is taken over; on the claim's own host, a claim whose
process is gone, or whose pid now belongs to a process started at another time (the claim's
`owner` records its process's start time), is taken over at once."""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.checks import quoted
from ..pairing import pairing_game
from .database import LadderDB, timestamp
from .rows import MAX_GAMES_PER_PAIR, Entry, is_int, pair_seed

#: a claim not renewed for this long (seconds) is taken over, wherever its process runs
CLAIM_LEASE = 120.0
#: how often (seconds) a run renews its claims
HEARTBEAT = 20.0


@dataclass(frozen=True)
class Job:
    """One game to play: the pair (a, b) in canonical order, its index and seed."""

    a: Entry
    b: Entry
    game: int
    seed: int


@dataclass(frozen=True)
class Claim:
    """A stored claim, checked: the game it holds, where its run plays (host, pid), when it
    was last renewed (`at`, seconds since 1970) and its run (`owner`: id/process start)."""

    game: int
    host: str
    pid: int
    at: float
    owner: str


def process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc), or None where that
    cannot be read (another system, a process gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
        return fields[19].decode()  # field 22 of stat(5); fields[0] is field 3
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def new_owner() -> str:
    """A run's owner name: its id, and its process's start time (a claim of a reused pid is
    stale)."""
    return f"{uuid.uuid4().hex}/{process_start(os.getpid()) or ''}"


class Heartbeat(threading.Thread):
    """Renews a run's claims every `every` seconds, on its own connection, while the run
    plays (a game in this process blocks the run's own thread)."""

    def __init__(self, path: Path, owner: str, every: float):
        super().__init__(daemon=True, name="ladder-heartbeat")
        self.path, self.owner, self.every = path, owner, every
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
        except sqlite3.Error:
            return
        try:
            while not self.stopped.wait(self.every):
                try:
                    db.execute(
                        "UPDATE claims SET at = ? WHERE owner = ?", (time.time(), self.owner)
                    )
                except sqlite3.Error:
                    pass  # busy: the next beat renews (a lease spans several beats)
        finally:
            db.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def read_claims(ladder: LadderDB, a: Entry, b: Entry, now: float) -> list[Claim]:
    """The pair's claims, checked."""
    claims = []
    for row in ladder.db.execute(
        "SELECT rowid, game, owner, host, pid, at FROM claims WHERE a = ? AND b = ?",
        (a.id, b.id),
    ):
        rowid, game, owner, host, pid, at = row
        if not is_int(game, 0, MAX_GAMES_PER_PAIR - 1):
            raise ladder.bad("claims", rowid, f"game must be an index, got {quoted(game)}")
        if not isinstance(owner, str) or not isinstance(host, str):
            raise ladder.bad("claims", rowid, "owner and host must be text")
        if not is_int(pid, 1, 2**31 - 1):
            raise ladder.bad("claims", rowid, f"pid must be a process id, got {quoted(pid)}")
        if type(at) not in (int, float) or not math.isfinite(at) or at > now + CLAIM_LEASE:
            raise ladder.bad(
                "claims",
                rowid,
                f"at must be a time (seconds since 1970) not in the future, got {quoted(at)}",
            )
        claims.append(Claim(game, host, pid, float(at), owner))
    return claims


def alive(claim: Claim, now: float) -> bool:
    """Whether a claim's run may still be playing its game: its lease was renewed within
    `CLAIM_LEASE`, and on this host its process still exists and started when the claim
    says (a reused pid is another process). A live unrelated process does not keep a
    claim: it cannot renew the lease."""
    if now - claim.at > CLAIM_LEASE:
        return False
    if claim.host != socket.gethostname():
        return True
    try:
        os.kill(claim.pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass
    started = claim.owner.partition("/")[2]
    return not started or process_start(claim.pid) in (None, started)


def missing(
    ladder: LadderDB, pairs: list[tuple[Entry, Entry]], games: int, now: float, limit: int
) -> list[Job]:
    """Up to `limit` games the pairs lack (of `games` each) that no live claim holds."""
    jobs = []
    for a, b in pairs:
        done = set()
        for row_id, game in ladder.db.execute(
            "SELECT id, game FROM games WHERE a = ? AND b = ?", (a.id, b.id)
        ):
            if not is_int(game, 0, MAX_GAMES_PER_PAIR - 1):
                raise ladder.bad(
                    "games",
                    row_id,
                    f"game must be an index from 0 to {MAX_GAMES_PER_PAIR - 1}, got {quoted(game)}",
                )
            done.add(game)
        claimed = {c.game for c in read_claims(ladder, a, b, now) if alive(c, now)}
        seed = pair_seed(ladder.seed, a.key, b.key)
        jobs += [Job(a, b, i, seed) for i in range(games) if i not in done | claimed]
        if len(jobs) >= limit:
            break
    return jobs[:limit]


def claim(
    ladder: LadderDB, pairs: list[tuple[Entry, Entry]], games: int, limit: int, owner: str
) -> list[Job]:
    """Claim up to `limit` of the games the pairs lack for the run `owner`."""
    with ladder.transaction():
        now = time.time()
        jobs = missing(ladder, pairs, games, now, limit)
        ladder.db.executemany(
            "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(j.a.id, j.b.id, j.game, owner, socket.gethostname(), os.getpid(), now) for j in jobs],
        )
    return jobs


def release(ladder: LadderDB, owner: str) -> None:
    """Drop every claim of the run `owner` (its games not played)."""
    with ladder.transaction():
        ladder.db.execute("DELETE FROM claims WHERE owner = ?", (owner,))


def store(ladder: LadderDB, job: Job, record: dict[str, Any], owner: str) -> bool:
    """Keep a finished game and drop its claim (once: a game another run stored first is
    dropped); whether it was kept."""
    winner = record["result"].get("winner")
    a_red = pairing_game(job.game, job.seed).a_is_red
    score = 0.5 if winner is None else float((winner == "red") == a_red)
    with ladder.transaction():
        cursor = ladder.db.execute(
            "INSERT OR IGNORE INTO games (a, b, game, seed, a_red, score, winner, reason, "
            "moves, record, played) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                job.a.id,
                job.b.id,
                job.game,
                job.seed,
                int(a_red),
                score,
                winner,
                record["result"].get("reason"),
                len(record["moves"]),
                json.dumps(record),
                timestamp(),
            ),
        )
        ladder.db.execute(
            "DELETE FROM claims WHERE a = ? AND b = ? AND game = ? AND owner = ?",
            (job.a.id, job.b.id, job.game, owner),
        )
    return cursor.rowcount == 1
