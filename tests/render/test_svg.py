"""The SVG drawing: well-formed, and every rules fact it shows matches the engine."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from play_helpers import engine_pieces
from test_render import DISPLACEMENT_SPN, FINAL_SPN, GRACE_SPN, displacement_game, push_cells

from satellites_env import satellites_v0
from satellites_env.core import Game, engine, square_name
from satellites_env.gym_env import SatellitesGymEnv
from satellites_env.render import render_svg, svg_frame, svg_layer
from satellites_env.render.svg import MAX_SVG_WIDTH

NS = {"svg": "http://www.w3.org/2000/svg"}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def drawn_satellites(root) -> dict[str, tuple[str, bool]]:
    return {
        use.get("data-sq"): (use.get("data-piece"), use.get("data-connected") == "1")
        for use in root.iterfind(".//svg:use[@class='sat']", NS)
    }


def position(root):
    return root.find(".//svg:g[@class='position']", NS)


def positions_to_check() -> list[Game]:
    return [
        Game.new(seed=0),
        Game.from_spn(DISPLACEMENT_SPN),
        displacement_game(),
        Game.from_spn(GRACE_SPN),
        Game.from_spn(FINAL_SPN),
    ]


@pytest.mark.parametrize("index", range(5))
def test_svg_shows_the_engine_position(index):
    game = positions_to_check()[index]
    root = parse(render_svg(game))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert drawn_satellites(root) == engine_pieces(game)
    groups = {
        g.get("data-cells"): (g.get("data-controller"), g.get("data-crowned"))
        for g in root.iterfind(".//svg:g[@data-cells]", NS)
    }
    expected = {
        " ".join(square_name(c) for c in g.cells): (
            "none" if g.controller is None else ("red", "blue")[g.controller],
            str(g.size == 6).lower(),
        )
        for g in engine.groups(np.asarray(game.board))
    }
    assert groups == expected
    links = root.find(".//svg:g[@class='links']", NS).get("data-links").split()
    assert links == [
        f"{square_name(a)}-{square_name(b)}" for a, b in engine.links(np.asarray(game.board))
    ]
    pushes = {r.get("data-sq") for r in root.iterfind(".//svg:rect[@class='push']", NS)}
    expected_pushes = (
        {square_name(c) for c in push_cells(game)} if game.pending_push is not None else set()
    )
    assert pushes == expected_pushes
    layer = position(root)
    assert layer.get("data-to-move") == ("red", "blue")[game.to_move]
    if game.pending_push is None:
        assert layer.get("data-spn") == game.to_spn()
    else:  # a position mid-displacement has no SPN
        assert layer.get("data-spn") is None
        assert root.find(".//svg:g[@class='pending']", NS).get("data-sq") == square_name(
            game.pending_push
        )
    grace = root.find(".//svg:g[@class='grace']", NS)
    assert (grace is None) == (game.grace is None)
    if grace is not None:
        assert grace.get("data-grace") == str(game.grace)
    crowns = len(root.findall(".//svg:polygon[@class='crown']", NS))
    assert crowns == sum(g.crowned for g in game.score().colonies)


def test_svg_header_and_footer_words():
    final = render_svg(Game.from_spn(FINAL_SPN))
    assert "Blue wins" in final and Game.from_spn(FINAL_SPN).score().reason in final
    start = render_svg(Game.new(seed=0))
    assert "Red to move" in start and "move 1" in start
    assert "push from f5" in render_svg(displacement_game())
    played = Game.new(seed=0)
    played.play(int(played.legal_actions()[0]))
    assert f"last move: {played.history[-1]}" in render_svg(played)
    assert "last move" not in render_svg(played, last_move="")


def test_frame_and_layer_make_the_document():
    game = Game.new(seed=2)
    below, above = svg_frame()
    assert above == ""
    svg = render_svg(game)
    assert below in svg and svg_layer(game) in svg
    interactive = parse(render_svg(game, interactive=True))
    hits = [r.get("data-sq") for r in interactive.iterfind(".//svg:rect[@class='hit']", NS)]
    assert sorted(hits) == sorted(square_name(c) for c in range(100))
    sized = parse(render_svg(game, width=400))
    assert sized.get("width") == "400" and int(sized.get("height")) > 400
    assert parse(render_svg(game, width=MAX_SVG_WIDTH)).get("width") == str(MAX_SVG_WIDTH)
    for bad in (0, -3, 2.5, True, "400", MAX_SVG_WIDTH + 1, 10**400, 10**5000, "9" * 10**6):
        with pytest.raises(ValueError, match=r"^width must be an integer from 1 to") as error:
            render_svg(game, width=bad)
        assert len(str(error.value)) < 200


def test_svg_render_mode_of_both_envs():
    env = satellites_v0.env(render_mode="svg")
    env.reset(seed=0)
    assert parse(env.render()).tag.endswith("svg")
    gym = SatellitesGymEnv(render_mode="svg")
    gym.reset(seed=0)
    root = parse(gym.render())
    assert drawn_satellites(root) == engine_pieces(gym.game)
    assert "svg" in satellites_v0.raw_env.metadata["render_modes"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), moves=st.integers(0, 150))
def test_svg_matches_the_engine_along_random_games(seed, moves):
    rng = np.random.default_rng(seed)
    game = Game.new(seed=seed)
    while not game.is_over and game.moves < moves:
        game.play(int(rng.choice(game.legal_actions())))
    root = parse(render_svg(game))
    assert drawn_satellites(root) == engine_pieces(game)
