"""Draw docs/board.png, the board picture of the README (deterministic).

    python docs/make_board_picture.py [--size 800] [--out docs/board.png]

The position is a fixed mid-game SPN (reached by a seeded self-play game, move 63): two
red and two blue colonies (the blue one at the bottom is crowned), two pairs, links
between connected satellites, and the last move h10-h8 highlighted. Blue is to move.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from satellites_env.core import Game  # noqa: E402
from satellites_env.render import render_rgb, render_text, save_png  # noqa: E402

SPN = (
    "...Ad...../C........./.D.....D.b/.aC...cB../.......b../....c...../"
    ".bC....aB./aB..dAc.../..DdA...../.......... b - 0 63"
)
LAST_MOVE = "h10-h8"


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=800, help="picture side in pixels")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "board.png")
    args = parser.parse_args(argv)
    game = Game.from_spn(SPN)
    path = save_png(render_rgb(game, size=args.size, last_move=LAST_MOVE), args.out)
    print(render_text(game, last_move=LAST_MOVE))
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
