"""The AlphaZero league: PFSP draws, members batched in the same search, results and
snapshots kept by the learner, checkpointed and resumed exactly, config checks."""

import numpy as np
import pytest
import torch
from rich.console import Console
from test_az_training import TINY

from satellites_env.core.engine import TO_MOVE
from training.alphazero.config import AZConfig
from training.alphazero.league import League, Member, pfsp_weights
from training.alphazero.replay import ReplayBuffer
from training.alphazero.selfplay import SelfPlay
from training.alphazero.trainer import AZTrainer
from training.common.checkpoint import CheckpointError
from training.common.config import ConfigError, config_from_dict
from training.common.network import BatchedInference, build_network

LEAGUE = {
    **TINY,
    "total_positions": 200,
    "search": {**TINY["search"], "max_moves": 12},
    "league": {"share": 0.5, "snapshot_every": 2, "size": 8},
}


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def member(name: str, fixed: bool = False, games: int = 0, wins: int = 0) -> Member:
    net = build_network(8, 1, seed=len(name))
    return Member(name, net.shape, net.state_dict(), fixed, games, wins)


class Counting:
    """An evaluator that counts the positions it is asked for."""

    def __init__(self, net):
        self.evaluate, self.rows = BatchedInference(net), 0

    def __call__(self, obs, policy_rows=None):
        self.rows += len(obs)
        return self.evaluate(obs, policy_rows)


def test_pfsp_favours_the_members_that_beat_the_learner():
    scores = np.array([0.1, 0.5, 0.9])
    hard = pfsp_weights(scores, "hard")
    assert hard[0] > hard[1] > hard[2]
    variance = pfsp_weights(scores, "variance")
    assert variance[1] > variance[0] == pytest.approx(variance[2])
    assert (pfsp_weights(scores, "uniform") == 1).all()
    with pytest.raises(ValueError, match="weighting"):
        pfsp_weights(scores, "soft")
    league = League(size=2, weighting="hard")
    league.add(member("exploiter", fixed=True, games=10, wins=1))
    for name in ("iteration-1", "iteration-2", "iteration-3"):
        league.add(member(name))
    # the oldest snapshot left; the fixed member stays
    assert [m.name for m in league.members] == ["exploiter", "iteration-2", "iteration-3"]
    p = league.probabilities()
    assert p.sum() == pytest.approx(1.0) and p[0] > p[1] == pytest.approx(p[2])
    league.record({"iteration-2": [4, 4, 0], "iteration-1": [3, 0, 0]})  # 1 has left
    assert league.members[1].games == 4 and league.members[1].score == pytest.approx(5 / 6)
    assert league.probabilities()[1] < league.probabilities()[2]
    with pytest.raises(ValueError, match="already"):
        league.add(member("iteration-3"))


def test_league_games_search_with_the_members_network_and_store_the_learners_moves():
    config = AZConfig.from_dict(LEAGUE).search
    selfplay = SelfPlay(config, seed=2, league_share=1.0)
    learner = Counting(build_network(8, 1, seed=0))
    a, b = Counting(build_network(8, 1, seed=1)), Counting(build_network(8, 1, seed=2))
    selfplay.set_league([("a", a), ("b", b)], [0.5, 0.5])  # before the first move: drawn anew
    buffer = ReplayBuffer(5000)
    selfplay.play(300, learner, buffer)
    stats = selfplay.stats
    assert stats.league_games == stats.games > 0 and a.rows and b.rows and learner.rows
    results = selfplay.league_results
    assert sum(r[0] for r in results.values()) == stats.league_games
    assert sum(r[1] for r in results.values()) == stats.league_wins
    # every searched move counts, the members' ones are not stored
    assert 0 < stats.league_moves < stats.positions
    assert stats.positions - stats.league_moves >= len(buffer) > 0


def test_a_member_that_leaves_finishes_its_games_and_no_league_is_self_play():
    config = AZConfig.from_dict(LEAGUE).search
    learner = BatchedInference(build_network(8, 1, seed=0))
    selfplay = SelfPlay(config, seed=3, league_share=1.0)
    a = Counting(build_network(8, 1, seed=1))
    selfplay.set_league([("a", a)], [1.0])
    buffer = ReplayBuffer(5000)
    selfplay.play(20, learner, buffer)  # games against `a` in flight
    assert (selfplay.league_member >= 0).all()
    b = Counting(build_network(8, 1, seed=2))
    selfplay.set_league([("b", b)], [1.0])
    rows = a.rows
    selfplay.play(400, learner, buffer)
    assert a.rows > rows and b.rows  # `a` played its games on, `b` took the new ones
    assert set(selfplay.league_results) == {"a", "b"}
    selfplay.set_league([("b", b)], [1.0])  # `a`'s games are over: it is let go
    assert {name for name, _ in selfplay.league_table} == {"b"}
    # a league share of 0 draws nothing: the games of plain self-play
    plain, shared = ReplayBuffer(1000), ReplayBuffer(1000)
    SelfPlay(config, seed=5).play(200, learner, plain)
    zero = SelfPlay(config, seed=5, league_share=0.0)
    zero.set_league([("a", a)], [1.0])
    zero.play(200, learner, shared)
    assert len(plain) == len(shared) > 0
    assert np.array_equal(plain.states[: len(plain)], shared.states[: len(shared)])


def test_a_league_run_snapshots_checkpoints_and_resumes_exactly(tmp_path):
    config = AZConfig.from_dict(LEAGUE)
    trainer = AZTrainer(config, tmp_path, console=quiet())
    trainer.run()
    league = trainer.league
    assert [m.name for m in league.members] == ["iteration-2", "iteration-4"]
    assert trainer.selfplay_stats.league_games > 0
    assert 0 < sum(m.games for m in league.members) == trainer.selfplay_stats.league_games
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert [m["name"] for m in payload["league"]["members"]] == ["iteration-2", "iteration-4"]
    longer = AZConfig.from_dict({**LEAGUE, "total_positions": 280})
    resumed = AZTrainer(longer, tmp_path, resume=True, console=quiet())

    def results(league):
        return [(m.name, m.games, m.wins, m.draws, m.score) for m in league.members]

    assert results(resumed.league) == results(league)
    assert resumed.league.version == league.version
    for a, b in zip(resumed.league.members, league.members, strict=False):
        assert all(torch.equal(a.weights[k], b.weights[k]) for k in b.weights)
    resumed.iterate()
    assert resumed.counters.iterations == 6
    assert resumed.league.members[-1].name == "iteration-6"
    # a damaged league is refused with the file named
    payload["league"]["members"][0]["wins"] = 10**6
    torch.save(payload, tmp_path / "checkpoint.pt")
    with pytest.raises(CheckpointError, match="league member 'iteration-2'"):
        AZTrainer(longer, tmp_path, resume=True, console=quiet())


def test_a_fixed_member_plays_the_whole_run_and_the_config_is_checked(tmp_path):
    config = AZConfig.from_dict(
        {**LEAGUE, "league": {"share": 1.0, "opponents": ["pretrained"], "snapshot_every": 100}}
    )
    trainer = AZTrainer(config, tmp_path, console=quiet())
    for _ in range(3):
        trainer.iterate()
    (fixed,) = trainer.league.members
    assert fixed.fixed and fixed.name == "pretrained" and fixed.games > 0
    with pytest.raises(ConfigError, match="exclude each other"):
        AZConfig.from_dict({**LEAGUE, "search": {**LEAGUE["search"], "opponent": "greedy"}})
    with pytest.raises(ConfigError, match="twice"):
        AZConfig.from_dict({**LEAGUE, "league": {"opponents": ["a.pt", "a.pt"]}})
    with pytest.raises(ConfigError, match=r"league.weighting"):
        AZConfig.from_dict({**LEAGUE, "league": {"weighting": "soft"}})
    not_a_checkpoint = tmp_path / "notes.txt"
    not_a_checkpoint.write_text("hello")
    with pytest.raises(ConfigError, match=r"^league\.opponents\[0\]: .*notes\.txt"):
        config_from_dict(
            {
                **LEAGUE,
                "learner": "alphazero",
                "league": {"share": 0.5, "opponents": [str(not_a_checkpoint)]},
            }
        )
    # the learner plays the colour the league member does not
    assert set(np.unique(trainer.buffer.states[: len(trainer.buffer), TO_MOVE])) <= {0, 1}
