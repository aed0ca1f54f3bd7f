"""The fixed opponent's seat: every kind of agent moves through one `OpponentSeat`
interface, in self-play and in the batched evaluation games alike, and each seat code counts
its games in one place (`seats.SEATS`)."""

from __future__ import annotations

import pytest
from test_az_training import TINY

from satellites_env.core.engine import DRAW
from training.alphazero import games as games_module
from training.alphazero.config import AZConfig, AZSearchConfig
from training.alphazero.games import play_search_games
from training.alphazero.replay import ReplayBuffer
from training.alphazero.seats import (
    AGENT,
    RAW,
    SEARCH,
    SEATS,
    BatchedSeat,
    opponent_seat,
)
from training.alphazero.selfplay import SelfPlay, SelfPlayStats
from training.common.network import BatchedInference, build_network
from training.common.seats import OpponentSeat, PlainSeat

KINDS = [
    ("greedy", PlainSeat),
    ("checkpoint:pretrained", BatchedSeat),
    ("az:pretrained:2", BatchedSeat),
]


def _spy(seat: OpponentSeat) -> dict[str, int]:
    """Count the seat's turns and the games its steps finished (wrapping the instance)."""
    calls = {"turns": 0, "waits": 0, "moved": 0}
    take_turn, step = seat.take_turn, seat.step

    def turn(b, game):
        calls["turns"] += 1
        waits = take_turn(b, game)
        calls["waits"] += waits
        return waits

    def stepped():
        rows = step()
        calls["moved"] += len(rows)
        return rows

    seat.take_turn, seat.step = turn, stepped  # type: ignore[method-assign]
    return calls


def _check(seat: OpponentSeat, kind: type, calls: dict[str, int]) -> None:
    assert isinstance(seat, kind) and calls["turns"] > 0
    if kind is BatchedSeat:  # every turn waits for the seat's own search, which moves
        assert calls["waits"] == calls["turns"] and calls["moved"] > 0
    else:  # a plain agent moves at once
        assert calls["waits"] == calls["moved"] == 0


@pytest.mark.parametrize(("spec", "kind"), KINDS)
def test_selfplay_moves_every_opponent_through_its_seat(spec, kind):
    config = AZConfig.from_dict({**TINY, "search": {**TINY["search"], "opponent": spec}})
    selfplay = SelfPlay(config.search, seed=4)
    assert selfplay.opponent_seat is not None
    calls = _spy(selfplay.opponent_seat)
    selfplay.play(120, BatchedInference(build_network(8, 1, seed=0)), ReplayBuffer(2000))
    _check(selfplay.opponent_seat, kind, calls)
    stats = selfplay.stats
    assert stats.opponent_games == stats.games > 0
    assert stats.opponent_wins + stats.opponent_losses + stats.draws == stats.games


@pytest.mark.parametrize(("spec", "kind"), KINDS)
def test_batched_evaluation_games_move_every_opponent_through_its_seat(spec, kind, monkeypatch):
    made: list[tuple[OpponentSeat, dict[str, int]]] = []

    def recorded(*args, **kwargs):
        seat = opponent_seat(*args, **kwargs)
        made.append((seat, _spy(seat)))
        return seat

    monkeypatch.setattr(games_module, "opponent_seat", recorded)
    settings = AZSearchConfig(max_considered=8, c_scale=1.0)
    net = build_network(8, 1, seed=0)
    played = play_search_games(net, spec, [0, 1, 2], 4, 30, simulations=2, settings=settings)
    assert [i for i, _ in played] == [0, 1, 2]
    [(seat, calls)] = made
    _check(seat, kind, calls)


def test_each_seat_counts_its_games_in_the_stats():
    stats = SelfPlayStats()
    SEATS[AGENT].count(stats, winner=0, colour=0)  # the opponent won
    SEATS[AGENT].count(stats, winner=0, colour=1)  # the network won
    SEATS[AGENT].count(stats, winner=DRAW, colour=1)
    SEATS[RAW].count(stats, winner=1, colour=1)
    SEATS[RAW].count(stats, winner=0, colour=1)
    SEATS[SEARCH].count(stats, winner=0, colour=0)
    assert (stats.opponent_games, stats.opponent_losses, stats.opponent_wins) == (3, 1, 1)
    assert (stats.dagger_games, stats.dagger_wins, stats.games) == (2, 1, 0)
