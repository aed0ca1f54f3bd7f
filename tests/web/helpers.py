"""Shared by the web tests: sample games, what a page shows, and the engine's view of it."""

from __future__ import annotations

from functools import cache

from play_helpers import engine_pieces  # noqa: F401 - re-exported for the web tests

from satellites_env.agents import make_agent
from satellites_env.arena import play_game
from satellites_env.record import GameRecord

# Red to move; f1-f5 displaces the unconnected blue 2 on f5 (as in tests/render).
DISPLACEMENT_SPN = (
    "D..B.D.c../C..A....../...b...ac./.......B../........dC/.b..db..../"
    "d...A...../..aB...a../....c..A../C....D.... r - 0 72"
)
# Red's free A on e5 can move; blue, stuck, may only pass (R19).
PASS_SPN = (
    "adAc..cAda/bD......Db/B........C/........../........../....A...../........../"
    "C........./bD......cC/adB.....B. r - 0 10"
)

SHOWN = """() => {
  const board = document.getElementById("board");
  const sats = [...board.querySelectorAll("g.layer use.sat")];
  return {spn: board.dataset.spn || null, step: board.dataset.step || null,
          pieces: sats.map(u => [u.dataset.sq, u.dataset.piece, u.dataset.connected === "1"])};
}"""


@cache
def sample_record() -> GameRecord:
    """A whole game, greedy (red) against random, the same every time."""
    return play_game(make_agent("greedy", seed=1), make_agent("random", seed=2), 5)


def shown(page) -> dict:
    """What the page's board element shows: its SPN, step and drawn satellites."""
    data = page.evaluate(SHOWN)
    data["pieces"] = {sq: (name, connected) for sq, name, connected in data["pieces"]}
    return data
