"""What every picture of a position shows, read once from the game through the engine API.

The text board, the raster frame and the SVG drawing all start from
[`board_facts`][satellites_env.render.facts.board_facts], so "which satellites are connected",
"which cells a pending push may land on" and "which move to highlight" are computed in one place
(from [`satellites_env.core.engine`][satellites_env.core.engine] and
[`Game`][satellites_env.core.Game]), and the words around the board (turn, counts, result) are
written once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from satellites_env.core.board import (
    BLUE,
    COLOR_NAMES,
    END_CONNECTED,
    N_CELLS,
    PASS_ACTION,
    PUSH_BASE,
    RAY,
    RED,
    decode_push_action,
)
from satellites_env.core.engine import CONNECTED, Group, Score, analyse_groups, links, new_work
from satellites_env.core.game import Game
from satellites_env.core.notation import NotationError, parse_move_text, square_name
from satellites_env.core.state import PENDING_FROM

GRACE_SYMBOL = "\u26a1"  # the card's lightning bolt


@dataclass(frozen=True)
class BoardFacts:
    """What the renderers show, read once from the game."""

    board: np.ndarray  # 100 signed codes
    connected: np.ndarray  # 100 bools
    links: tuple[tuple[int, int], ...]  # connections (R8), west/north cell first
    score: Score
    to_move: int
    pending: int | None  # cell the displaced satellite is pushed from
    pending_piece: int  # its signed code (0 when none)
    pending_from: int | None  # cell the mover came from
    push_cells: tuple[int, ...]  # legal landing cells of the push
    last: tuple[int | None, int | None, int | None] | None  # (from, to, landing) or None
    last_text: str | None


def _connected_mask(board: np.ndarray) -> np.ndarray:
    work = new_work()
    analyse_groups(board.astype(np.int32), work)
    connected: np.ndarray = work[CONNECTED, :N_CELLS] != 0
    return connected


def push_cells(game: Game) -> tuple[int, ...]:
    """The legal landing cells of the pending push (empty when no push is pending)."""
    target = game.pending_push
    if target is None:
        return ()
    cells = []
    for action in game.legal_actions():
        if PUSH_BASE <= action < PASS_ACTION:
            direction, distance = decode_push_action(int(action))
            landing = int(RAY[target, direction, distance - 1])
            if landing >= 0:
                cells.append(landing)
    return tuple(sorted(set(cells)))


def _last_move(
    game: Game, last_move: str | None
) -> tuple[tuple[int, int, int | None] | None, str | None]:
    """(squares, text) of the move to highlight; None: the game's last move; "": none."""
    if last_move is None:
        last_move = game.history[-1] if game.history else ""
    if not last_move:
        return None, None
    try:
        parsed = parse_move_text(last_move)
    except NotationError:
        return None, last_move
    if parsed is None:  # a pass
        return None, last_move
    return parsed, last_move


def board_facts(game: Game, last_move: str | None = None) -> BoardFacts:
    """The facts of `game`'s position; `last_move` is the move to highlight (default: the
    game's last move; `""` for none)."""
    board = np.array(game.board, dtype=np.int64)
    pending = game.pending_push
    pending_from = None
    if pending is not None:
        pending_from = int(game.state[PENDING_FROM])
        pending_from = pending_from if pending_from >= 0 else None
    last, last_text = _last_move(game, last_move)
    return BoardFacts(
        board=board,
        connected=_connected_mask(board),
        links=tuple(links(board)),
        score=game.score(),
        to_move=game.to_move,
        pending=pending,
        pending_piece=game.pending_piece if pending is not None else 0,
        pending_from=pending_from,
        push_cells=push_cells(game),
        last=last,
        last_text=last_text,
    )


# --------------------------------------------------------------------------- words


def piece_name(code: int) -> str:
    """`R3` for a red 3, `B2` for a blue 2."""
    return ("R" if code > 0 else "B") + str(abs(int(code)))


def owner_name(code: int) -> str:
    """ "red" or "blue": the color of a satellite's signed code."""
    return COLOR_NAMES[RED if code > 0 else BLUE]


def colonies_summary(score: Score) -> str:
    """`colonies: red 2, blue 1 (1 tied, 1 crowned), pairs 3`."""
    colonies = score.colonies
    pairs = sum(1 for g in score.groups if not g.is_colony)
    tied = sum(1 for g in colonies if g.controller is None)
    crowned = sum(1 for g in colonies if g.crowned)
    red, blue = score.controlled
    text = f"colonies: red {red}, blue {blue}"
    extras = []
    if tied:
        extras.append(f"{tied} tied")
    if crowned:
        extras.append(f"{crowned} crowned")
    if extras:
        text += " (" + ", ".join(extras) + ")"
    return text + f", pairs {pairs}"


def result_text(game: Game, score: Score) -> str:
    """`game over: blue wins - red controls 1 colony, blue 2 (R22)`."""
    verdict = "draw" if score.winner is None else f"{COLOR_NAMES[score.winner]} wins"
    how = "stopped at the move cap (truncated)" if game.truncated else "game over"
    return f"{how}: {verdict} - {score.reason}"


def turn_text(game: Game) -> str:
    """`move 5, red to move`, or `after 88 moves` once the game is over."""
    if game.is_over:
        return f"after {game.moves} moves"
    return f"move {game.moves + 1}, {COLOR_NAMES[game.to_move]} to move"


def status_line(game: Game, f: BoardFacts) -> str:
    """The counts under a picture's title: connected, colonies controlled, passes."""
    red_c, blue_c = game.connected_counts
    red_col, blue_col = f.score.controlled
    parts = [
        f"connected {red_c + blue_c}/{END_CONNECTED}  (red {red_c}, blue {blue_c})",
        f"colonies red {red_col}, blue {blue_col}",
    ]
    if game.passes:
        parts.append(f"passes {game.passes}")
    return "   \u00b7   ".join(parts)


def pending_text(f: BoardFacts) -> str:
    """`c10-f7` (or `f7`): the displacement waiting for its push."""
    assert f.pending is not None, "no push is pending"
    if f.pending_from is not None:
        return f"{square_name(f.pending_from)}-{square_name(f.pending)}"
    return square_name(f.pending)


def footer_text(game: Game, f: BoardFacts) -> str:
    """The line under a picture: the reason of the result, the push to choose, the last
    move, or a legend."""
    if game.is_over:
        return f.score.reason
    if f.pending is not None:
        return (
            f"displacement {pending_text(f)}: choose an orange cell for "
            f"{owner_name(f.pending_piece)} {abs(f.pending_piece)}"
        )
    if f.last_text:
        return f"last move: {f.last_text}"
    return "ring = connected (locked)  \u00b7  tinted outline = colony, by controller"


def colony_notes(score: Score) -> list[tuple[Group, str]]:
    """Every colony with what it did for the result (R21-R23), in board order: counted for
    its controller, took no part (tied sums), or decided the R23 tie-break."""
    red, blue = score.controlled
    tie_break = red == blue and red > 0
    lowest_marked: set[int] = set()
    notes = []
    for group in score.colonies:
        owner = group.controller
        if owner is None:
            notes.append((group, "nobody controls it (equal sums): it takes no part (R21)"))
            continue
        name = COLOR_NAMES[owner]
        if tie_break and group.total == score.lowest_total[owner] and owner not in lowest_marked:
            lowest_marked.add(owner)
            notes.append(
                (
                    group,
                    f"{name}'s lowest-total colony ({group.total}): "
                    f"compared in the tie-break (R23)",
                )
            )
        else:
            notes.append((group, f"counts for {name} (R22)"))
    return notes


def colony_squares(group: Group) -> str:
    """`b8 b7 c7`: a group's squares in board order."""
    return " ".join(square_name(c) for c in group.cells)
