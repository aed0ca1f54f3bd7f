"""The play page of `satellites serve` in headless Chromium: a whole game by clicks (with a
displacement and its push cells) against `random`, an illegal click, a forced pass, two tabs."""

from __future__ import annotations

import json
import urllib.parse

import numpy as np
from conftest import call, live_server
from helpers import DISPLACEMENT_SPN, PASS_SPN, engine_pieces, shown

from satellites_env.core import Game, IllegalActionError, NotationError
from satellites_env.record import GameRecord

SETTLED = """(before) => {
  const board = document.getElementById("board");
  return board.dataset.busy === "false" && Number(board.dataset.version) > before;
}"""


def version(page) -> int:
    return int(page.get_attribute("#board", "data-version"))


def settle(page, action) -> None:
    """Do `action` (a click) and wait until the page has handled it."""
    before = version(page)
    action()
    page.wait_for_function(SETTLED, arg=before)


def click(page, square: str) -> None:
    settle(page, lambda: page.click(f'#board rect.hit[data-sq="{square}"]'))


def open_game(page, url: str, **query) -> None:
    page.goto(url + ("?" + urllib.parse.urlencode(query) if query else ""))
    page.wait_for_function(
        "() => document.getElementById('board').dataset.busy === 'false' "
        "&& document.getElementById('board').dataset.game"
    )


def page_moves(page) -> list[str]:
    return [
        text.split(None, 1)[1].strip() for text in page.locator("#moves button").all_inner_texts()
    ]


def hinted(page) -> set[str]:
    return {node.get_attribute("data-sq") for node in page.locator("#board g.hints circle").all()}


def play_by_clicks(page, game: Game, move: str) -> None:
    """Click `move` (in notation): its satellite, its target, and a displacement's push."""
    if move == "pass":
        settle(page, lambda: page.click("#pass"))
        return
    source, rest = move.split("-")
    target, _, landing = rest.partition(">")
    click(page, source)
    expected = {
        m.split("-")[1].split(">")[0] for m in game.legal_moves() if m.startswith(source + "-")
    }
    assert hinted(page) == expected  # the targets shown are the engine's
    click(page, target)
    if landing:
        assert page.get_attribute("#board", "data-pending") == f"{source}-{target}"
        pushes = {n.get_attribute("data-sq") for n in page.locator("#board rect.push").all()}
        assert pushes == {
            m.split(">")[1] for m in game.legal_moves() if m.startswith(f"{source}-{target}>")
        }
        click(page, landing)


def check_board(page, max_moves: int) -> Game:
    """The board shown is the engine's position for its SPN, and the moves listed lead there."""
    board = shown(page)
    game = Game.from_spn(board["spn"], max_moves)
    assert board["pieces"] == engine_pieces(game)
    return game


def test_play_a_whole_game_by_clicks_against_random(page, screenshot_dir):
    max_moves = 72 + 24  # the position is at move 72: 24 more moves, then the cap (R20)
    with live_server("random", max_moves=max_moves) as url:
        open_game(page, url, spn=DISPLACEMENT_SPN, color="red")
        rng = np.random.default_rng(0)
        first = True
        while page.get_attribute("#board", "data-over") != "true":
            game = check_board(page, max_moves)
            replayed = Game.from_spn(DISPLACEMENT_SPN, max_moves)
            for text in page_moves(page):
                replayed.play_move(text)
            assert replayed.to_spn() == game.to_spn()
            moves = game.legal_moves()
            if first:  # the displacement first, with a picture of its push cells
                move = sorted(m for m in moves if m.startswith("f1-f5>"))[0]
                click(page, "f1")
                click(page, "f5")
                page.screenshot(path=str(screenshot_dir / "play_page.png"))
                click(page, "f10")  # elsewhere: the displacement is cancelled
                assert page.get_attribute("#board", "data-pending") is None
                assert shown(page)["spn"] == DISPLACEMENT_SPN
                first = False
            else:
                move = str(rng.choice(moves))
            before = len(page_moves(page))
            play_by_clicks(page, game, move)
            assert page_moves(page)[before] == move, page.inner_text("#message")
        final = check_board(page, max_moves)
        assert final.is_over
        result = page.inner_text("#result")
        winner = final.score().winner_name
        assert (f"{winner.capitalize()} wins" if winner else "Draw") in result
        assert "game over" in page.inner_text("#status")
        # The record downloads and replays to the position shown.
        href = page.get_attribute("#download", "href")
        _status, data, _ = call(urllib.parse.urljoin(url, href))
        record = GameRecord.from_dict(data)
        assert record.moves == page_moves(page) and record.players["red"] == "human"
        assert record.replay()[-1].to_spn() == final.to_spn()
        assert record.result["winner"] == winner
    assert (screenshot_dir / "play_page.png").stat().st_size > 20_000


def test_an_illegal_click_changes_nothing(page):
    with live_server("random") as url:
        open_game(page, url, spn=DISPLACEMENT_SPN, color="red")
        game = Game.from_spn(DISPLACEMENT_SPN)
        legal = {m.split(">")[0] for m in game.legal_moves()}
        movable = {m.split("-")[0] for m in legal}
        # A square on one of f1's lines, not a legal target, without a satellite of ours
        # that could move instead: the engine explains which rule forbids it.
        line = ["f2", "f3", "f4", "e2", "d3", "c4", "g2", "h3", "i4", "e1", "d1", "g1", "h1"]
        target = next(sq for sq in line if f"f1-{sq}" not in legal and sq not in movable)
        with_error = game.clone()
        try:
            with_error.play_move(f"f1-{target}")
        except (IllegalActionError, NotationError) as error:
            expected = str(error)
        click(page, "f1")
        click(page, target)
        assert page.inner_text("#message") == f"not played: {expected}"
        assert shown(page)["spn"] == DISPLACEMENT_SPN and page_moves(page) == []
        game_id = page.get_attribute("#board", "data-game")
        _status, state, _ = call(url + f"api/games/{game_id}")
        assert state["spn"] == DISPLACEMENT_SPN and state["moves"] == []
        # A blue satellite, with nothing selected: a message, nothing else.
        blue = next(sq for sq, (piece, _) in engine_pieces(game).items() if piece[0] == "B")
        click(page, blue)
        assert "your (red) satellites" in page.inner_text("#message")
        assert shown(page)["spn"] == DISPLACEMENT_SPN


def test_pass_when_it_is_the_only_move(page):
    with live_server("random", max_moves=30) as url:
        open_game(page, url, spn=PASS_SPN, color="blue")  # red, the agent, moves first
        assert page_moves(page)[0].startswith("e5-")
        assert page.is_enabled("#pass")
        click(page, "a10")
        assert "pass (R19)" in page.inner_text("#message")
        settle(page, lambda: page.click("#pass"))
        assert page_moves(page)[1] == "pass"


def test_two_tabs_play_separate_games_and_new_game_as_blue(browser):
    context = browser.new_context()
    with live_server("random") as url:
        one, two = context.new_page(), context.new_page()
        open_game(one, url)
        open_game(two, url)
        assert one.get_attribute("#board", "data-game") != two.get_attribute("#board", "data-game")
        start_two = shown(two)["spn"]
        game = check_board(one, 400)
        play_by_clicks(one, game, next(m for m in game.legal_moves() if ">" not in m))
        assert len(page_moves(one)) == 2 and page_moves(two) == []
        two.reload()
        two.wait_for_function("() => document.getElementById('board').dataset.busy === 'false'")
        assert shown(two)["spn"] == start_two and page_moves(two) == []
        one_spn = shown(one)["spn"]
        one.reload()
        one.wait_for_function("() => document.getElementById('board').dataset.busy === 'false'")
        assert shown(one)["spn"] == one_spn
        # A new game as blue: the agent opens.
        two.select_option("#color", "blue")
        settle(two, lambda: two.click("#new"))
        assert two.get_attribute("#board", "data-you") == "blue"
        assert len(page_moves(two)) == 1 and "game=" in two.url
        assert json.loads(json.dumps(shown(two)))["spn"] != start_two
    context.close()
