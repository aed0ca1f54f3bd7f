"""The HTML replay: one self-contained file, checked as a file and in headless Chromium."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest
from helpers import engine_pieces, sample_record, shown
from hypothesis import given, settings
from hypothesis import strategies as st

from satellites_env.record import GameRecord, RecordError
from satellites_env.web import index_html, replay_html, write_replay


def packed(html: str) -> dict:
    text = re.search(r'<script type="text/plain" id="packed-data">([^<]*)</script>', html)
    return json.loads(gzip.decompress(base64.b64decode(text.group(1))))


def page_data(html: str) -> dict:
    text = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    return json.loads(text.group(1))


# --------------------------------------------------------------------------- the file


def test_replay_file_is_self_contained_and_holds_every_step(tmp_path):
    record = sample_record()
    path = write_replay(record, tmp_path / "game.html")
    html = path.read_text()
    # Nothing is fetched: no external script, style, image or font; the only URL is the SVG
    # namespace.
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=\"(?!data:)", html)
    assert set(re.findall(r"https?://[^\s\"')]+", html)) == {"http://www.w3.org/2000/svg"}
    steps = packed(html)
    positions = record.replay()
    assert steps["spns"] == [game.to_spn() for game in positions]
    assert len(steps["layers"]) == len(record.moves) + 1
    data = page_data(html)
    assert data["moves"] == record.moves
    assert data["result"]["winner"] == record.result["winner"]
    assert len(data["result"]["colonies"]) == len(positions[-1].score().colonies)
    assert f'data-spn="{record.start_spn}"' in html  # the board before the script runs
    assert len(html) < 200_000  # packed: about 40x smaller than the raw layers


def test_replay_of_a_bad_record_is_a_record_error():
    record = sample_record()
    broken = GameRecord(record.start_spn, [*record.moves[:3], "a1-a2"], record.max_moves)
    with pytest.raises(RecordError, match="move 4 'a1-a2' does not apply"):
        replay_html(broken)


@pytest.mark.parametrize(
    "lie, field",
    [
        ({"winner": "flip"}, "winner"),
        ({"end": "ongoing", "winner": None}, "end"),
        ({"reason": "blue resigned"}, "reason"),
        ({"end": "flip"}, "end"),
    ],
)
def test_a_page_is_never_made_of_a_record_whose_result_lies(tmp_path, lie, field):
    """The page shows the engine's result; a record stating another one is refused, naming
    the field, and no file is written."""
    record = sample_record()
    assert record.result["end"] in ("terminated", "truncated")
    result = {**record.result, **lie}
    flips = {
        "winner": {"red": "blue", "blue": "red", None: "red"},
        "end": {"terminated": "truncated", "truncated": "terminated"},
    }
    for key, value in lie.items():
        if value == "flip":
            result[key] = flips[key][record.result[key]]
    lying = GameRecord(record.start_spn, record.moves, record.max_moves, record.players, result)
    with pytest.raises(RecordError, match=f"field 'result.{field}'"):
        write_replay(lying, tmp_path / "game.html")
    assert not (tmp_path / "game.html").exists()


@settings(max_examples=30, deadline=None)
@given(red=st.text(max_size=40), blue=st.text(max_size=40))
def test_player_names_cannot_break_out_of_the_page(red, blue):
    record = sample_record()
    hostile = GameRecord(
        record.start_spn,
        record.moves[:2],
        record.max_moves,
        {"red": red + "</script><script>alert(1)</script>", "blue": blue},
    )
    html = replay_html(hostile)
    assert "<script>alert(1)" not in html
    assert html.count("</script>") == html.count("<script")  # every script ends where it should
    assert page_data(html)["players"] == hostile.players


def test_index_lists_every_game_with_its_replay():
    manifest = {
        "agents": ["a", "<b>"],
        "games_per_pairing": 2,
        "seed": 0,
        "max_moves": 400,
        "pairs": [{"a": "a", "b": "<b>", "games": 2, "a_wins": 1, "b_wins": 0, "draws": 1}],
        "elo": {"a": 0.0, "<b>": -20.0},
        "elo_anchor": "a",
        "games": [
            {
                "red": "a",
                "blue": "<b>",
                "winner": "red",
                "end": "terminated",
                "reason": "red controls 2 colonies, blue 1 (R22)",
                "moves": 88,
                "record": "game_0000.json",
                "replay": "game_0000.html",
            },
            {
                "red": "<b>",
                "blue": "a",
                "winner": None,
                "end": "truncated",
                "reason": "nobody controls a colony: draw (R23)",
                "moves": 400,
                "record": "game_0001.json",
                "replay": "game_0001.html",
            },
        ],
    }
    html = index_html(manifest)
    assert 'href="game_0000.html"' in html and 'href="game_0001.html"' in html
    assert "<b>" not in html.split("<body>")[1]  # names are escaped
    rows = re.findall(r"<tr><td>\d+</td>.*?</tr>", html)
    assert len(rows) == 2 and "draw" in rows[1] and ">88<" in rows[0]


# --------------------------------------------------------------------------- in the browser


def test_replay_in_the_browser_steps_through_the_whole_game(page, tmp_path, screenshot_dir):
    record = sample_record()
    positions = record.replay()
    last = len(positions) - 1
    page.goto(write_replay(record, tmp_path / "game.html").as_uri())
    page.wait_for_selector("#board[data-ready=true]")
    page.keyboard.press("End")
    assert shown(page)["step"] == str(last)
    page.keyboard.press("Home")
    for step, game in enumerate(positions):  # every step, with the arrow key
        board = shown(page)
        assert board["step"] == str(step)
        assert board["spn"] == game.to_spn()
        assert board["pieces"] == engine_pieces(game), f"step {step}"
        page.keyboard.press("ArrowRight")
    assert shown(page)["step"] == str(last)  # the end stops there
    page.keyboard.press("ArrowLeft")
    assert shown(page)["spn"] == positions[-2].to_spn()
    # Click a move in the list; drag the slider.
    page.click('#moves button[data-step="5"]')
    assert shown(page)["spn"] == positions[5].to_spn()
    assert page.inner_text("#where").startswith(f"move 5 of {last}: {record.moves[4]}")
    page.eval_on_selector("#slider", "(s) => { s.value = 40; s.dispatchEvent(new Event('input')) }")
    assert shown(page)["spn"] == positions[40].to_spn()
    # Play, then pause: the steps advance by themselves, then stop.
    page.select_option("#speed", "80")
    page.keyboard.press("Space")
    page.wait_for_function("() => Number(document.getElementById('board').dataset.step) > 42")
    page.click("#play")
    stopped = shown(page)["step"]
    page.wait_for_timeout(300)
    assert shown(page)["step"] == stopped
    # The result with the colonies that decided it.
    result = page.inner_text("#result")
    winner = record.result["winner"]
    assert (f"{winner.capitalize()} wins" if winner else "Draw") in result
    assert record.result["reason"] in result
    assert page.locator("#result table.colonies tbody tr").count() == len(
        positions[-1].score().colonies
    )
    page.select_option("#speed", "500")  # the default, for the picture
    page.click("#last")
    page.screenshot(path=str(screenshot_dir / "replay_page.png"))
    assert (screenshot_dir / "replay_page.png").stat().st_size > 20_000
