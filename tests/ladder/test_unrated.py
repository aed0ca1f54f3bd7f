"""Ratings never claim certainty they lack: an agent without games, or whose games do not
link it to the anchor through any chain of opponents, is unrated (no number, interval, rank
or likelihood of superiority) in the fit, the ladder's table, JSON, CSV and HTML, in
`ladder rate` and in a tournament's Elo."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.arena import PairResult, fit_elo
from satellites_env.ladder import Ladder
from satellites_env.ladder.rows import canonical
from satellites_env.rating import fit


def reachable(anchor: int, games: np.ndarray) -> set[int]:
    """The players a chain of games links to `anchor`, by union-find (another way than the
    fit's)."""
    parent = list(range(len(games)))

    def root(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    for i in range(len(games)):
        for j in range(len(games)):
            if games[i, j] > 0:
                parent[root(i)] = root(j)
    if not (games[anchor] > 0).any():
        return set()
    return {k for k in range(len(games)) if root(k) == root(anchor)}


@st.composite
def leagues(draw):
    n = draw(st.integers(2, 7))
    games = np.zeros((n, n))
    scores = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            count = draw(st.sampled_from([0, 0, 0, 1, 2, 5]))
            won = draw(st.integers(0, count))
            games[i, j] = games[j, i] = count
            scores[i, j], scores[j, i] = won, count - won
    names = draw(
        st.permutations(["random", "greedy", "mcts:50", "a", "b", "c", "d"]).map(lambda p: p[:n])
    )
    return list(names), scores, games


@settings(max_examples=300, deadline=None)
@given(leagues())
def test_exactly_the_players_linked_to_the_anchor_are_rated(league):
    names, scores, games = league
    ratings = fit(names, scores, games)
    linked = reachable(names.index(ratings.anchor), games)
    played = [k for k in range(len(names)) if games[k].sum() > 0]
    assert (names.index(ratings.anchor) in played) == bool(played)  # an anchor that played
    for k, name in enumerate(names):
        assert ratings.is_rated(name) == (k in linked)
        if k in linked:
            low, high = ratings.interval(name)
            assert math.isfinite(ratings.rating(name)) and low <= ratings.rating(name) <= high
            if name != ratings.anchor:
                assert high > low  # a rated player's rating is never certain
        else:
            assert math.isnan(ratings.elo[k]) and ratings.as_dict()[name] is None
            with pytest.raises(ValueError, match="unrated"):
                ratings.interval(name)
            with pytest.raises(ValueError, match="unrated"):
                ratings.superiority(name, ratings.anchor)


def both_ways(anchor: int, scores: np.ndarray, games: np.ndarray) -> set[int]:
    """The players joined to `anchor` by results running both ways, by repeated closure of
    "a scored against b" (another way than the fit's)."""
    n = len(games)
    took = [[games[a, b] > 0 and scores[a, b] > 0 for b in range(n)] for a in range(n)]
    for k in range(n):  # Floyd-Warshall closure
        for a in range(n):
            for b in range(n):
                took[a][b] = took[a][b] or (took[a][k] and took[k][b])
    if not (games[anchor] > 0).any():
        return set()
    return {anchor} | {k for k in range(n) if took[anchor][k] and took[k][anchor]}


@settings(max_examples=300, deadline=None)
@given(leagues())
def test_without_prior_draws_only_results_running_both_ways_give_a_rating(league):
    """With `prior_games=0` a player that only won (or only lost) along every chain to the
    anchor has no finite rating: it is unrated, never a huge number with a zero-width interval."""
    names, scores, games = league
    ratings = fit(names, scores, games, prior_games=0.0)
    finite = both_ways(names.index(ratings.anchor), scores, games)
    for k, name in enumerate(names):
        assert ratings.is_rated(name) == (k in finite)
        if k in finite and name != ratings.anchor:
            low, high = ratings.interval(name)
            assert math.isfinite(low) and math.isfinite(high) and high > low
            assert abs(ratings.rating(name) - ratings.rating(ratings.anchor)) < 5000


def test_two_agents_that_only_played_each_other_are_unrated():
    pairs = [
        PairResult("random", "greedy", games=4, a_wins=1, b_wins=3),
        PairResult("a", "b", games=4, a_wins=2, b_wins=2),
        PairResult("random", "a", games=0),
    ]
    elo = fit_elo(["random", "greedy", "a", "b"], pairs)
    assert elo["greedy"] == 400.0 and elo["random"] is not None
    assert elo["a"] is None and elo["b"] is None


@pytest.fixture
def split_ladder(tmp_path):
    """random and greedy played each other; mcts:2 and mcts:3 only each other; mcts:4 none."""
    db = tmp_path / "ladder.db"
    with Ladder(db, create=True, max_moves=30) as ladder:
        entries = {spec: ladder.add(spec) for spec in ("random", "greedy", "mcts:2", "mcts:3")}
        ladder.play([canonical(entries["random"], entries["greedy"])], 2)
        ladder.play([canonical(entries["mcts:2"], entries["mcts:3"])], 2)
        ladder.add("mcts:4")
    return db


UNRATED = {"mcts:2", "mcts:3", "mcts:4"}


def test_the_ladder_shows_unrated_agents_without_numbers(split_ladder, capsys, tmp_path):
    assert cli.main(["ladder", "show", "--db", str(split_ladder), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row for row in table["agents"]}
    assert [row["name"] for row in table["agents"]][2:] == ["mcts:2", "mcts:3", "mcts:4"]
    for name in UNRATED:
        row = rows[name]
        assert row["rank"] is row["elo"] is row["low"] is row["high"] is row["los_next"] is None
    assert rows["greedy"]["elo"] == 400.0 and rows["greedy"]["rank"] == 1
    assert rows["random"]["los_next"] is None  # nothing rated below it

    assert cli.main(["ladder", "show", "--db", str(split_ladder), "--csv"]) == 0
    for row in csv.DictReader(io.StringIO(capsys.readouterr().out)):
        if row["name"] in UNRATED:
            assert row["rank"] == row["elo"] == row["low"] == row["high"] == row["los_next"] == ""

    html = tmp_path / "board"
    assert cli.main(["ladder", "show", "--db", str(split_ladder), "--html", str(html)]) == 0
    page = (html / "index.html").read_text()
    assert page.count(">unrated<") == 3
    text = capsys.readouterr().out
    assert cli.main(["ladder", "show", "--db", str(split_ladder)]) == 0
    text = capsys.readouterr().out
    assert text.count("unrated │") == 3, text


def test_ladder_rate_measures_against_rated_agents_only(split_ladder, capsys):
    assert cli.main(["ladder", "rate", "mcts:5", "--games", "4", "--db", str(split_ladder)]) == 0
    with Ladder(split_ladder) as ladder:
        ids = {e.spec: e.id for e in ladder.agents(roster_only=False)}
        faced = {
            b if a == ids["mcts:5"] else a
            for _, a, b, _ in ladder.game_rows()
            if ids["mcts:5"] in (a, b)
        }
    assert faced == {ids["random"], ids["greedy"]}  # the unrated have no rating to meet


def test_ladder_rate_without_two_rated_agents_is_refused(tmp_path, capsys):
    db = tmp_path / "ladder.db"
    assert cli.main(["ladder", "add", "random", "greedy", "--db", str(db)]) == 0
    assert cli.main(["ladder", "rate", "mcts:2", "--games", "4", "--db", str(db)]) == 2
    assert "at least 2 rated agents" in capsys.readouterr().err


def test_a_tournament_stopped_before_an_agents_games_shows_it_unrated():
    from satellites_env.arena import tournament_result
    from satellites_env.tournament_view import elo_table
    from satellites_env.web.replay import index_html

    result = tournament_result(["random", "greedy", "mcts:2"], 2, 0, 30, [None] * 6)
    assert result.elo == {"random": None, "greedy": None, "mcts:2": None}
    assert json.loads(json.dumps(result.as_dict()))["elo"]["greedy"] is None
    table = elo_table(result)
    assert list(table.columns[1].cells) == ["unrated"] * 3
    assert "greedy = +400" in str(table.title)
    assert index_html(result.as_dict()).count(">unrated<") == 3
