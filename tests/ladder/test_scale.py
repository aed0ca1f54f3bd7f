"""The shipped rating scale (`ladders/scale.db`, built by `make ladder`) is whole, holds every
pair's games, is the scale every fit reads (`rating.SCALE`), the README's table is what
`satellites ladder show` reads from it, and the docs state what its prior does."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from satellites_env.arena import BASELINE_ELO
from satellites_env.ladder import Ladder
from satellites_env.ladder.roster import build
from satellites_env.rating import SCALE, SCALE_ANCHOR, fit
from satellites_env.web.leaderboard import standings

ROOT = Path(__file__).resolve().parents[2]
AGENTS = [
    "random",
    "greedy",
    "mcts:50",
    "mcts:200",
    "mcts:1000",
    "checkpoint:pretrained",
    "az:pretrained:32",
]


def test_the_shipped_scale_is_the_readmes_table(tmp_path):
    shutil.copy(ROOT / "ladders" / "scale.db", tmp_path / "scale.db")  # opening never writes it
    with Ladder(tmp_path / "scale.db", create=False) as ladder:
        assert sorted(e.name for e in ladder.agents()) == sorted(AGENTS)
        counts = ladder.db.execute("SELECT COUNT(*) FROM games GROUP BY a, b").fetchall()
        assert len(counts) == 21 and {n for (n,) in counts} == {20}
        for _, record in ladder.records()[:5]:  # stored games replay
            record.replay()
        table = standings(ladder)
    readme = (ROOT / "README.md").read_text()
    for row in table["agents"]:
        line = (
            f"| {row['rank']} | `{row['name']}` | {row['elo']:+.0f} | "
            f"[{row['low']:+.0f}, {row['high']:+.0f}] | {row['games']} |"
        )
        assert line in readme, line
    assert re.search(rf"\({table['games']} games, 20 per pair", readme)


def test_the_rating_constants_are_what_the_shipped_scale_fits_to():
    with Ladder(ROOT / "ladders" / "scale.db", create=False, readonly=True) as ladder:
        ratings = ladder.ratings()
        specs = {e.name: e.spec for e in ladder.agents()}
    assert ratings.anchor == SCALE_ANCHOR[0] and ratings.anchor_elo == SCALE_ANCHOR[1]
    assert set(SCALE) == set(specs.values())
    for name, spec in specs.items():
        assert SCALE[spec] == pytest.approx(ratings.rating(name), abs=0.05), spec
    assert BASELINE_ELO == {k: SCALE[k] for k in ("random", "greedy", "mcts:200")}


def prior_effect(anchor: str) -> dict[str, tuple[float, float]]:
    """Each agent's rating (anchor at 0) with one virtual draw per pairing and without."""
    with Ladder(ROOT / "ladders" / "scale.db", create=False, readonly=True) as ladder:
        agents = ladder.agents()
        scores, games = ladder.results(agents)
    names = [e.name for e in agents]
    with_prior, without = (fit(names, scores, games, anchor, prior) for prior in (1.0, 0.0))
    return {n: (with_prior.rating(n), without.rating(n)) for n in names}


def test_the_docs_state_the_priors_measured_effect():
    """docs/agents.md: from `random` the prior moves greedy from +622 to +400 (every agent by
    223 to 278); from greedy it moves the others by 28 to 55, random by 223."""
    by_random = prior_effect("random")
    assert abs(by_random["greedy"][0] - 400) < 1 and round(by_random["greedy"][1]) == 622
    moves = [abs(b - a) for name, (a, b) in by_random.items() if name != "random"]
    assert (round(min(moves)), round(max(moves))) == (223, 278)
    by_greedy = prior_effect("greedy")
    moves = [abs(b - a) for name, (a, b) in by_greedy.items() if name not in ("random", "greedy")]
    assert (round(min(moves)), round(max(moves))) == (28, 55)
    assert round(by_greedy["random"][0] - by_greedy["random"][1]) == 223
    docs = (ROOT / "docs" / "agents.md").read_text()
    for figure in ("+622", "223 to 278", "28 to 55", "223"):
        assert figure in docs, figure


def test_a_training_runs_evaluation_is_rated_on_the_shipped_scale():
    pytest.importorskip("torch")
    from satellites_env.rating import against_known
    from training.common.run_state import Evaluation

    results = {
        "random": {"a": "p", "b": "random", "games": 100, "a_wins": 90, "b_wins": 8, "draws": 2},
        "mcts:200": {
            "a": "p",
            "b": "mcts:200",
            "games": 50,
            "a_wins": 10,
            "b_wins": 40,
            "draws": 0,
        },
        "mcts:9": {"a": "p", "b": "mcts:9", "games": 10, "a_wins": 5, "b_wins": 5, "draws": 0},
    }  # not on the scale: not rated
    elo = Evaluation(progress=1, results=results).elo()
    assert elo == pytest.approx(
        against_known([(SCALE["random"], 91.0, 100), (SCALE["mcts:200"], 10.0, 50)])
    )


def test_the_shipped_agents_are_still_the_players_the_scale_rated():
    """Each agent builds from its stored spec with its stored identity (a retrained shipped
    network would be refused by `ladder run` and `rate`: the scale must then be rebuilt)."""
    pytest.importorskip("torch")
    with Ladder(ROOT / "ladders" / "scale.db", create=False, readonly=True) as ladder:
        for entry in ladder.agents():
            assert build(ladder.database, entry, allow_pickle=False).identity() == entry.key
