"""PPO's self-play seats its players as objects: the learner, a pool snapshot, or the baseline
agent through the same `PlainSeat` AlphaZero moves a fixed agent by; the generator moves each
seat's games together and records the learner's decisions only."""

from __future__ import annotations

import pytest
from test_training import tiny_config

from satellites_env.core.game import Game
from training.common.network import PolicyValueNet
from training.common.seats import PlainSeat
from training.ppo.seats import LEARNER, AgentSeat, SnapshotSeat
from training.ppo.selfplay import SelfPlayGenerator


def _generator(seed: int = 0, **selfplay) -> SelfPlayGenerator:
    config = tiny_config(selfplay={"envs": 4, "max_moves": 60, **selfplay})
    return SelfPlayGenerator(config.selfplay, PolicyValueNet(8, 1), seed=seed)


def test_the_baseline_agent_moves_through_a_plain_seat_one_move_a_step():
    generator = _generator(baseline_fraction=1.0, pool_fraction=0.0)
    generator.step()
    seat = generator._baseline
    assert isinstance(seat, AgentSeat) and isinstance(seat, PlainSeat)
    moves = {"n": 0}
    act = seat.act

    def counted(b: int, game: Game) -> int:
        moves["n"] += 1
        return act(b, game)

    seat.act = counted  # type: ignore[method-assign]
    before = (generator.stats.steps, generator.stats.learner_steps)
    for _ in range(30):
        generator.step()
    steps = generator.stats.steps - before[0]
    learner = generator.stats.learner_steps - before[1]
    # every move is the learner's or the agent's, each one a step, in every game
    assert steps == 30 * 4 and moves["n"] == steps - learner > 0
    for slot in generator.slots:
        assert sorted(map(id, slot.seats)) == sorted([id(LEARNER), id(seat)])
        [recorded] = [t for t in slot.trajectories if t is not None]
        assert slot.trajectories[slot.seats.index(LEARNER)] is recorded


def test_snapshot_seats_play_the_pool_and_record_nothing():
    generator = _generator(pool_fraction=1.0)
    generator.pool = [PolicyValueNet(8, 1), PolicyValueNet(8, 1)]
    generator.step()
    for slot in generator.slots:
        [snapshot] = [s for s in slot.seats if s is not LEARNER]
        assert isinstance(snapshot, SnapshotSeat) and snapshot.index in (0, 1)
        assert snapshot.network(generator.net, generator.pool) is generator.pool[snapshot.index]
        assert slot.trajectories[slot.seats.index(snapshot)] is None
    # equal seats move together: one group per snapshot, not one per game
    assert SnapshotSeat(1) == SnapshotSeat(1) and len({SnapshotSeat(0), SnapshotSeat(0)}) == 1


def test_a_network_seat_has_no_move_of_its_own():
    assert LEARNER.network(net := PolicyValueNet(8, 1), []) is net
    with pytest.raises(TypeError, match="network's policy"):
        LEARNER.act(0, Game.new(seed=0))
