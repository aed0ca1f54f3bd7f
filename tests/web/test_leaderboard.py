"""The ladder's leaderboard page: what it shows is what the database holds (ratings,
intervals, head-to-head, every game), checked as a file and in headless Chromium, where each
game's link opens its replay at the game's last position."""

from __future__ import annotations

import re

import pytest
from helpers import shown

from satellites_env.ladder import Ladder
from satellites_env.web.leaderboard import leaderboard_html, standings, write_leaderboard


@pytest.fixture(scope="module")
def ladder(tmp_path_factory):
    path = tmp_path_factory.mktemp("ladder") / "ladder.db"
    with Ladder(path, max_moves=50) as ladder:
        for spec in ("random", "greedy", "mcts:1"):
            ladder.add(spec)
        ladder.add("mcts:2", name="<b>mcts two</b>")  # a name is text, never markup
        ladder.run(4)
    return path


def test_names_are_escaped_and_the_table_is_the_databases(ladder):
    with Ladder(ladder, create=False) as db:
        table = standings(db)
        ratings = db.ratings()
    html = leaderboard_html(table)
    assert "<b>mcts two</b>" not in html and "&lt;b&gt;mcts two&lt;/b&gt;" in html
    assert [r["rank"] for r in table["agents"]] == [1, 2, 3, 4]
    elos = [r["elo"] for r in table["agents"]]
    assert elos == sorted(elos, reverse=True)
    for row in table["agents"]:
        assert row["elo"] == pytest.approx(ratings.rating(row["name"]), abs=0.06)
        low, high = ratings.interval(row["name"])
        assert (row["low"], row["high"]) == (round(low, 1), round(high, 1))


def test_the_leaderboard_in_the_browser(page, ladder, tmp_path, screenshot_dir):
    with Ladder(ladder, create=False) as db:
        table = standings(db)
        index = write_leaderboard(db, tmp_path / "board")
        names = {e.id: e.name for e in db.agents()}
        games = {name: [] for name in names.values()}
        for game_id, a, b, record in db.game_rows():
            games[names[a]].append((game_id, record))
            games[names[b]].append((game_id, record))
    assert len(list((tmp_path / "board" / "games").glob("*.html"))) == table["games"] == 24
    page.goto(index.as_uri())
    rows = page.locator("table.ratings tbody tr")
    assert rows.count() == 4
    for k, row in enumerate(table["agents"]):
        shown_row = rows.nth(k)
        assert shown_row.get_attribute("data-name") == row["name"]
        assert shown_row.locator("td.elo").inner_text() == f"{row['elo']:+.0f}"
        assert shown_row.locator("td.played").inner_text() == str(row["games"])
        bar = shown_row.locator("svg.bar")
        interval = bar.locator("rect.interval")
        start = float(interval.get_attribute("x"))
        end = start + float(interval.get_attribute("width"))
        point = float(bar.locator("rect.point").get_attribute("x")) + 0.4
        assert start - 0.01 <= point <= end + 0.01
        assert bar.bounding_box()["width"] > 50  # drawn, not collapsed
    # The head-to-head matrix: the row's score against the column, in percent.
    cells = page.locator("table.matrix tbody tr")
    order = [r["name"] for r in table["agents"]]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            text = cells.nth(i).locator("td").nth(j).inner_text()
            cell = table["matrix"][a].get(b)
            assert text == ("" if cell is None else f"{100 * cell['score'] / cell['games']:.0f}%")
    # Each agent's games, all of them, each a link to its replay.
    for k, row in enumerate(table["agents"]):
        links = page.locator(f"#agent-{k + 1} ul.games a")
        expected = sorted(game_id for game_id, _ in games[row["name"]])
        found = sorted(
            int(re.search(r"(\d+)\.html$", links.nth(n).get_attribute("href")).group(1))
            for n in range(links.count())
        )
        assert found == expected
    page.screenshot(path=str(screenshot_dir / "leaderboard_page.png"), full_page=True)
    # Open the top agent's first game: its replay ends where the stored record ends.
    game_id, record = min(games[table["agents"][0]["name"]], key=lambda g: g[0])
    page.click("#agent-1 summary")
    page.click(f'#agent-1 a[href="games/{game_id}.html"]')
    page.wait_for_selector("#board[data-ready=true]")
    page.keyboard.press("End")
    assert shown(page)["spn"] == record.replay()[-1].to_spn()
