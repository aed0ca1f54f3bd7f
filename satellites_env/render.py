"""Pictures of a game: a text board, an RGB frame (pygame, off-screen), a window, GIF/PNG.

The pure engine (:mod:`satellites_env.core`) never imports this module. pygame is imported
lazily, only by the functions that draw, so :func:`render_text` works without it.

* :func:`render_text` - a plain-text board with a header (turn, grace, displacement, result).
* :func:`render_rgb` - an ``(size, size, 3)`` ``uint8`` frame drawn on an off-screen Surface;
  it needs no display (works headless).
* :class:`HumanWindow` - a pygame window that shows such frames (``render_mode="human"``).
* :func:`save_gif`, :func:`save_png` - write frames with Pillow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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
    SIZE,
    decode_push_action,
    row_col,
)
from satellites_env.core.engine import CONNECTED, analyse_groups, links, new_work
from satellites_env.core.game import Game
from satellites_env.core.notation import FILES, NotationError, parse_move_text, square_name
from satellites_env.core.engine import Score
from satellites_env.core.state import PENDING_FROM

__all__ = [
    "PUSH_COLOR", "HumanWindow", "render_rgb", "render_text", "save_gif", "save_png",
]

GRACE_SYMBOL = "\u26a1"  # the card's lightning bolt

# --------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class _Facts:
    """What both renderers show, read once from the game."""

    board: np.ndarray  # 100 signed codes
    connected: np.ndarray  # 100 bools
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
    return work[CONNECTED, :N_CELLS] != 0


def _push_cells(game: Game) -> tuple[int, ...]:
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


def _last_move(game: Game, last_move: str | None):
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


def _facts(game: Game, last_move: str | None) -> _Facts:
    board = np.array(game.board, dtype=np.int64)
    pending = game.pending_push
    pending_from = None
    if pending is not None:
        pending_from = int(game.state[PENDING_FROM])
        pending_from = pending_from if pending_from >= 0 else None
    last, last_text = _last_move(game, last_move)
    return _Facts(
        board=board,
        connected=_connected_mask(board),
        score=game.score(),
        to_move=game.to_move,
        pending=pending,
        pending_piece=game.pending_piece if pending is not None else 0,
        pending_from=pending_from,
        push_cells=_push_cells(game),
        last=last,
        last_text=last_text,
    )


def _piece_name(code: int) -> str:
    """`R3` for a red 3, `B2` for a blue 2."""
    return ("R" if code > 0 else "B") + str(abs(int(code)))


def _colonies_summary(score: Score) -> str:
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


def _result_text(game: Game, score: Score) -> str:
    if score.winner is None:
        verdict = "draw"
    else:
        verdict = f"{COLOR_NAMES[score.winner]} wins"
    how = "stopped at the move cap (truncated)" if game.truncated else "game over"
    return f"{how}: {verdict} - {score.reason}"


def _turn_text(game: Game) -> str:
    if game.is_over:
        return f"after {game.moves} moves"
    return f"move {game.moves + 1}, {COLOR_NAMES[game.to_move]} to move"


# --------------------------------------------------------------------------- text


_ANSI = {"red": "\x1b[1;31m", "blue": "\x1b[1;34m", "push": "\x1b[1;33m", "dim": "\x1b[2m",
         "reset": "\x1b[0m"}


def render_text(game: Game, last_move: str | None = None, color: bool = False) -> str:
    """A readable text board with a header, a legend and (at the end) the result.

    Each satellite shows color and value (`R3` red 3, `B2` blue 2); a `*` marks a connected
    one; `o` marks a legal landing square of a pending push. `last_move` is the move to
    report (default: the game's last move; `""` for none). `color=True` adds ANSI colors.
    """
    f = _facts(game, last_move)

    def paint(text: str, style: str) -> str:
        return f"{_ANSI[style]}{text}{_ANSI['reset']}" if color else text

    lines = []
    red_c, blue_c = game.connected_counts
    header = (f"Satellites - {_turn_text(game)} | passes {game.passes} | "
              f"connected: red {red_c}, blue {blue_c} ({red_c + blue_c}/{END_CONNECTED})")
    if game.grace is not None:
        done = COLOR_NAMES[1 - game.to_move]
        header += f" | grace {GRACE_SYMBOL} {game.grace} ({done} is done)"
    lines.append(header)
    lines.append(_colonies_summary(f.score))
    if f.pending is not None:
        waiting = _piece_name(f.pending_piece)
        owner = COLOR_NAMES[RED if f.pending_piece > 0 else BLUE]
        came = f" (by {square_name(f.pending_from)}-{square_name(f.pending)})" \
            if f.pending_from is not None else ""
        pushes = ", ".join(square_name(c) for c in f.push_cells) or "none"
        lines.append(f"displacement{came}: {owner} {waiting} waits to be pushed from "
                     f"{square_name(f.pending)}; push squares (o): {pushes}")
    if f.last_text:
        lines.append(f"last move: {f.last_text}")

    files = ("    " + " ".join(f" {letter} " for letter in FILES)).rstrip()
    lines.append(files)
    push_set = set(f.push_cells)
    for row in range(SIZE):
        rank = SIZE - row
        cells = []
        for col in range(SIZE):
            cell = row * SIZE + col
            code = int(f.board[cell])
            if code != 0:
                text = _piece_name(code) + ("*" if f.connected[cell] else " ")
                cells.append(paint(text, "red" if code > 0 else "blue"))
            elif cell in push_set:
                cells.append(paint(" o ", "push"))
            else:
                cells.append(paint(" . ", "dim") if color else " . ")
        lines.append(f"{rank:>2}  " + " ".join(cells) + f" {rank}")
    lines.append(files)
    lines.append(f"legend: R1-R4 red / B1-B4 blue satellite (value), * connected (locked), "
                 f"o push square, {GRACE_SYMBOL} grace moves left")
    if game.is_over:
        lines.append(_result_text(game, f.score))
    return "\n".join(lines)


# --------------------------------------------------------------------------- colors

BACKGROUND = (17, 21, 38)
BOARD_FILL = (28, 34, 58)
BOARD_FILL_ALT = (32, 39, 65)
EDGE_FILL = (38, 46, 76)
GRID = (58, 68, 104)
COORD = (150, 160, 195)
TEXT = (232, 236, 248)
TEXT_DIM = (150, 160, 195)
RED_DISC = (226, 69, 69)
RED_DARK = (140, 30, 36)
BLUE_DISC = (58, 124, 232)
BLUE_DARK = (28, 60, 140)
LINK = (250, 245, 225)
GREY = (160, 166, 180)
GOLD = (255, 204, 51)
PUSH_COLOR = (255, 140, 0)  # the cards' "orange cells"; used for nothing else
LAST_MOVE = (255, 240, 150)
PAIR_TINT = (200, 210, 235)

_SUPERSAMPLE = 2


def _disc_colors(code: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    return (RED_DISC, RED_DARK) if code > 0 else (BLUE_DISC, BLUE_DARK)


def _controller_color(controller: int | None) -> tuple[int, int, int]:
    if controller is None:
        return GREY
    return RED_DISC if controller == RED else BLUE_DISC


# --------------------------------------------------------------------------- pygame helpers

_pygame = None
_fonts: dict[int, object] = {}


def _pg():
    """pygame, imported on first use (quietly) with its font module initialised."""
    global _pygame
    if _pygame is None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame

        _pygame = pygame
    if not _pygame.font.get_init():
        _pygame.font.init()
        _fonts.clear()
    return _pygame


def _font(px: int):
    px = max(6, int(px))
    font = _fonts.get(px)
    if font is None:
        font = _pg().font.Font(None, px)
        _fonts[px] = font
    return font


def _text(surface, text: str, px: int, color, pos, anchor: str = "topleft",
          max_width: int | None = None) -> object:
    """Blit `text` (shrunk until it fits `max_width`); return its rect."""
    font = _font(px)
    image = font.render(text, True, color)
    while max_width is not None and image.get_width() > max_width and px > 8:
        px = int(px * 0.92)
        font = _font(px)
        image = font.render(text, True, color)
    rect = image.get_rect(**{anchor: pos})
    surface.blit(image, rect)
    return rect


def _bolt(surface, x: float, y: float, h: float, color) -> float:
    """A lightning bolt of height `h` with its top-left at (x, y); return its width."""
    w = h * 0.6
    points = [(0.55, 0.0), (0.05, 0.58), (0.42, 0.58), (0.28, 1.0), (0.95, 0.36),
              (0.55, 0.36), (0.78, 0.0)]
    _pg().draw.polygon(surface, color, [(x + px * w, y + py * h) for px, py in points])
    return w


def _crown(surface, cx: float, cy: float, w: float, color, outline) -> None:
    """A small crown centred on (cx, cy), `w` wide."""
    h = w * 0.7
    x0, y0 = cx - w / 2, cy - h / 2
    points = [(0.0, 1.0), (0.0, 0.25), (0.25, 0.6), (0.5, 0.0), (0.75, 0.6), (1.0, 0.25),
              (1.0, 1.0)]
    poly = [(x0 + px * w, y0 + py * h) for px, py in points]
    pygame = _pg()
    pygame.draw.polygon(surface, color, poly)
    pygame.draw.polygon(surface, outline, poly, max(1, int(w / 12)))


def _disc(surface, cx: float, cy: float, r: float, code: int, connected: bool, s: int,
          alpha: int = 255) -> None:
    """A satellite: a shaded disc with its value; connected ones get a white ring."""
    pygame = _pg()
    fill, dark = _disc_colors(code)
    size = int(2 * r + 4 * s + 2)
    layer = pygame.Surface((size, size), pygame.SRCALPHA)
    c = size / 2
    pygame.draw.circle(layer, (0, 0, 0, 90), (c + r * 0.08, c + r * 0.12), r)  # shadow
    pygame.draw.circle(layer, dark, (c, c), r)
    pygame.draw.circle(layer, fill, (c, c), r * 0.86)
    highlight = tuple(min(255, v + 45) for v in fill)
    pygame.draw.circle(layer, highlight, (c - r * 0.25, c - r * 0.3), r * 0.28)
    if connected:
        pygame.draw.circle(layer, LINK, (c, c), r, max(1, int(r * 0.14)))
    _text(layer, str(abs(code)), int(r * 1.35), (255, 255, 255), (c, c + r * 0.06), "center")
    if alpha < 255:
        layer.set_alpha(alpha)
    surface.blit(layer, (cx - c, cy - c))


# --------------------------------------------------------------------------- rgb


def render_rgb(game: Game, size: int = 640, last_move: str | None = None) -> np.ndarray:
    """Draw the position as a ``(size, size, 3)`` ``uint8`` RGB frame (no display needed).

    Shows the board with coordinates, discs with values, connection links, colonies
    outlined and tinted by controller (grey when tied; gold and a crown when crowned), pairs
    drawn lightly, the last move, whose turn, the move number, the grace counter, a pending
    displacement (the waiting satellite and its legal landing cells in orange) and, at the
    end, the result. `last_move`: default the game's last move; `""` for none.
    """
    size = int(size)
    if size < 64:
        raise ValueError(f"size must be at least 64 pixels, got {size}")
    pygame = _pg()
    f = _facts(game, last_move)
    s = _SUPERSAMPLE
    S = size * s
    surf = pygame.Surface((S, S))
    surf.fill(BACKGROUND)

    header = int(S * 0.095)
    footer = int(S * 0.055)
    margin = int(S * 0.04)
    board_px = min(S - 2 * margin, S - header - footer - 2 * margin)
    cell = board_px // SIZE
    board_px = cell * SIZE
    x0 = (S - board_px) // 2
    y0 = header + margin + (S - header - footer - 2 * margin - board_px) // 2

    def centre(c: int) -> tuple[float, float]:
        r, col = row_col(c)
        return x0 + (col + 0.5) * cell, y0 + (r + 0.5) * cell

    def cell_rect(c: int, inset: float = 0.0):
        r, col = row_col(c)
        i = int(inset * cell)
        return pygame.Rect(x0 + col * cell + i, y0 + r * cell + i, cell - 2 * i, cell - 2 * i)

    # -- board, edges, grid, coordinates
    pygame.draw.rect(surf, GRID, pygame.Rect(x0 - 2 * s, y0 - 2 * s, board_px + 4 * s,
                                             board_px + 4 * s), border_radius=3 * s)
    for c in range(N_CELLS):
        r, col = row_col(c)
        edge = r in (0, SIZE - 1) or col in (0, SIZE - 1)
        fill = EDGE_FILL if edge else (BOARD_FILL if (r + col) % 2 == 0 else BOARD_FILL_ALT)
        pygame.draw.rect(surf, fill, cell_rect(c))
    for i in range(SIZE + 1):
        pygame.draw.line(surf, GRID, (x0 + i * cell, y0), (x0 + i * cell, y0 + board_px), s)
        pygame.draw.line(surf, GRID, (x0, y0 + i * cell), (x0 + board_px, y0 + i * cell), s)
    coord_px = int(min(cell * 0.42, margin * 0.9))
    for i in range(SIZE):
        cx = x0 + (i + 0.5) * cell
        _text(surf, FILES[i], coord_px, COORD, (cx, y0 - margin / 2), "center")
        _text(surf, FILES[i], coord_px, COORD, (cx, y0 + board_px + margin / 2), "center")
        cy = y0 + (i + 0.5) * cell
        _text(surf, str(SIZE - i), coord_px, COORD, (x0 - margin / 2, cy), "center")
        _text(surf, str(SIZE - i), coord_px, COORD, (x0 + board_px + margin / 2, cy), "center")

    # -- groups: tinted cells and outlines (colonies), light outlines (pairs)
    overlay = pygame.Surface((S, S), pygame.SRCALPHA)
    for group in f.score.groups:
        cells = set(group.cells)
        if group.is_colony:
            tint = _controller_color(group.controller)
            for c in cells:
                pygame.draw.rect(overlay, (*tint, 85), cell_rect(c))
        else:
            for c in cells:
                pygame.draw.rect(overlay, (*PAIR_TINT, 22), cell_rect(c))
    surf.blit(overlay, (0, 0))
    for group in f.score.groups:
        cells = set(group.cells)
        if group.is_colony:
            width = max(2, int(cell * 0.07))
            _outline(surf, cells, cell, x0, y0, _controller_color(group.controller), width)
            if group.crowned:  # a gold line inside the controller's outline
                _outline(surf, cells, cell, x0, y0, GOLD, max(2, int(cell * 0.045)),
                         extra_inset=width)
        else:
            color = tuple(int(v * 0.55) for v in PAIR_TINT)
            _outline(surf, cells, cell, x0, y0, color, max(1, int(cell * 0.03)))

    # -- push landing cells (orange) and the last move
    for c in f.push_cells:
        pygame.draw.rect(surf, PUSH_COLOR, cell_rect(c, 0.08), border_radius=int(cell * 0.12))
        pygame.draw.circle(surf, (120, 60, 0), centre(c), cell * 0.1)
    if f.last is not None:
        source, target, landing = f.last
        width = max(2, int(cell * 0.05))
        for c in (source, target, landing):
            if c is not None:
                pygame.draw.rect(surf, LAST_MOVE, cell_rect(c, 0.04), width,
                                 border_radius=int(cell * 0.1))
        if source is not None and target is not None:
            _dashed(surf, centre(source), centre(target), LAST_MOVE, max(1, width // 2), cell)
    if f.pending_from is not None and f.pending is not None:
        pygame.draw.rect(surf, LAST_MOVE, cell_rect(f.pending_from, 0.04),
                         max(2, int(cell * 0.05)), border_radius=int(cell * 0.1))
        _dashed(surf, centre(f.pending_from), centre(f.pending), LAST_MOVE,
                max(1, int(cell * 0.025)), cell)

    # -- connection links
    link_w = max(3, int(cell * 0.14))
    for c, n in links(f.board):
        a, b = centre(c), centre(n)
        pygame.draw.line(surf, (0, 0, 0), a, b, link_w + 2 * s)
        pygame.draw.line(surf, LINK, a, b, link_w)

    # -- satellites
    radius = cell * 0.36
    for c in range(N_CELLS):
        piece = int(f.board[c])
        if piece:
            _disc(surf, *centre(c), radius, piece, bool(f.connected[c]), s)

    # -- crowns on crowned colonies (on the top-most, left-most cell)
    for group in f.score.colonies:
        if group.crowned:
            first = min(group.cells)
            rect = cell_rect(first)
            _crown(surf, rect.left + cell * 0.19, rect.top + cell * 0.14, cell * 0.4, GOLD,
                   (90, 60, 0))

    # -- the displaced satellite waiting on its cell (ghost in the corner)
    if f.pending is not None and f.pending_piece:
        rect = cell_rect(f.pending)
        gx, gy = rect.right - cell * 0.19, rect.top + cell * 0.19
        pygame.draw.circle(surf, PUSH_COLOR, (gx, gy), cell * 0.29)
        _disc(surf, gx, gy, cell * 0.24, f.pending_piece, False, s)

    # -- header: turn and move, connected counts, grace, displacement
    _header(surf, game, f, S, header, margin, s)
    # -- footer: last move / result / legend
    _footer(surf, game, f, S, footer, margin, s)

    if s != 1:
        surf = pygame.transform.smoothscale(surf, (size, size))
    data = pygame.image.tobytes(surf, "RGB")
    return np.frombuffer(data, dtype=np.uint8).reshape(size, size, 3).copy()


def _outline(surf, cells: set[int], cell: int, x0: int, y0: int, color, width: int,
             extra_inset: float = 0) -> None:
    """Draw the border of a set of cells (a polyomino), inset by about half its width."""
    pygame = _pg()
    inset = width / 2 + 1 + extra_inset
    half = width / 2

    def inside(r: int, c: int) -> bool:
        return 0 <= r < SIZE and 0 <= c < SIZE and r * SIZE + c in cells

    def low_end(low: float, neighbour: bool, diagonal: bool) -> float:
        if not neighbour:
            return low + inset - half  # convex corner
        return low - inset - half if diagonal else low  # concave corner / straight on

    def high_end(high: float, neighbour: bool, diagonal: bool) -> float:
        if not neighbour:
            return high - inset + half
        return high + inset + half if diagonal else high

    for c in cells:
        r, col = row_col(c)
        left, top = x0 + col * cell, y0 + r * cell
        right, bottom = left + cell, top + cell
        for dr, y in ((-1, top + inset), (1, bottom - inset)):  # top and bottom sides
            if inside(r + dr, col):
                continue
            xa = low_end(left, inside(r, col - 1), inside(r + dr, col - 1))
            xb = high_end(right, inside(r, col + 1), inside(r + dr, col + 1))
            pygame.draw.rect(surf, color, pygame.Rect(round(xa), round(y - half),
                                                       round(xb - xa), max(1, round(width))))
        for dc, x in ((-1, left + inset), (1, right - inset)):  # left and right sides
            if inside(r, col + dc):
                continue
            ya = low_end(top, inside(r - 1, col), inside(r - 1, col + dc))
            yb = high_end(bottom, inside(r + 1, col), inside(r + 1, col + dc))
            pygame.draw.rect(surf, color, pygame.Rect(round(x - half), round(ya),
                                                       max(1, round(width)), round(yb - ya)))


def _dashed(surf, a, b, color, width: int, cell: int) -> None:
    """A dashed line from a to b (centre to centre), stopping short of the discs."""
    pygame = _pg()
    (ax, ay), (bx, by) = a, b
    length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
    if length < 1:
        return
    ux, uy = (bx - ax) / length, (by - ay) / length
    dash = cell * 0.14
    t = cell * 0.4
    while t < length - cell * 0.4:
        e = min(t + dash, length - cell * 0.4)
        pygame.draw.line(surf, color, (ax + ux * t, ay + uy * t), (ax + ux * e, ay + uy * e),
                         width)
        t += dash * 2


def _header(surf, game: Game, f: _Facts, S: int, header: int, margin: int, s: int) -> None:
    pygame = _pg()
    big = int(header * 0.40)
    small = int(header * 0.30)
    left = margin
    y1 = int(header * 0.30)
    y2 = int(header * 0.74)
    right_edge = S - margin

    # Line 1, left: the mover's disc and "Red to move  move n" (or the result).
    if game.is_over:
        winner = f.score.winner
        if winner is None:
            _text(surf, "Draw", big, TEXT, (left, y1), "midleft")
        else:
            color = RED_DISC if winner == RED else BLUE_DISC
            pygame.draw.circle(surf, color, (left + big * 0.35, y1), big * 0.32)
            _text(surf, f"{COLOR_NAMES[winner].capitalize()} wins", big, TEXT,
                  (left + big * 0.8, y1), "midleft")
        cap = " (move cap)" if game.truncated else ""
        _text(surf, f"after {game.moves} moves{cap}", small, TEXT_DIM,
              (right_edge, y1), "midright")
    else:
        color = RED_DISC if f.to_move == RED else BLUE_DISC
        pygame.draw.circle(surf, color, (left + big * 0.35, y1), big * 0.32)
        rect = _text(surf, f"{COLOR_NAMES[f.to_move].capitalize()} to move", big, TEXT,
                     (left + big * 0.8, y1), "midleft")
        _text(surf, f"  move {game.moves + 1}", small, TEXT_DIM, (rect.right, y1), "midleft")
        # Right, from the edge inwards: the grace counter, then a displacement in progress.
        x = right_edge
        if game.grace is not None:
            label = _text(surf, f"{game.grace}", big, GOLD, (x, y1), "midright")
            bolt_h = big * 0.9
            bolt_w = bolt_h * 0.6
            _bolt(surf, label.left - bolt_w - 3 * s, y1 - bolt_h / 2, bolt_h, GOLD)
            label = _text(surf, "grace", small, GOLD, (label.left - bolt_w - 8 * s, y1),
                          "midright")
            x = label.left - 4 * big * 0.5
        if f.pending is not None:
            r = big * 0.5
            gx = x - r * 1.2
            pygame.draw.circle(surf, PUSH_COLOR, (gx, y1), r * 1.2)
            _disc(surf, gx, y1, r, f.pending_piece, False, s)
            _text(surf, f"push from {square_name(f.pending)}:", small, TEXT,
                  (gx - r * 1.6, y1), "midright")

    # Line 2: connected counts, colonies, passes.
    red_c, blue_c = game.connected_counts
    red_col, blue_col = f.score.controlled
    parts = [f"connected {red_c + blue_c}/{END_CONNECTED}  (red {red_c}, blue {blue_c})",
             f"colonies red {red_col}, blue {blue_col}"]
    if game.passes:
        parts.append(f"passes {game.passes}")
    _text(surf, "   \u00b7   ".join(parts), small, TEXT_DIM, (margin, y2), "midleft",
          max_width=S - 2 * margin)


def _footer(surf, game: Game, f: _Facts, S: int, footer: int, margin: int, s: int) -> None:
    px = int(footer * 0.48)
    y = S - footer * 0.55
    if game.is_over:
        _text(surf, f.score.reason, px, TEXT, (S / 2, y), "center", max_width=S - 2 * margin)
        return
    if f.pending is not None:
        moved = f"{square_name(f.pending_from)}-{square_name(f.pending)}" \
            if f.pending_from is not None else square_name(f.pending)
        text = (f"displacement {moved}: choose an orange cell for "
                f"{COLOR_NAMES[RED if f.pending_piece > 0 else BLUE]} "
                f"{abs(f.pending_piece)}")
    elif f.last_text:
        text = f"last move: {f.last_text}"
    else:
        text = "ring = connected (locked)  \u00b7  tinted outline = colony, by controller"
    _text(surf, text, px, TEXT_DIM, (S / 2, y), "center", max_width=S - 2 * margin)


# --------------------------------------------------------------------------- window


class HumanWindow:
    """A pygame window showing RGB frames; opened on the first :meth:`show`."""

    def __init__(self, title: str = "Satellites", fps: float | None = None):
        self.title = title
        self.fps = fps  # at most this many frames a second, like PettingZoo's render_fps
        self._screen = None
        self._clock = None
        self.closed_by_user = False

    @property
    def is_open(self) -> bool:
        return self._screen is not None

    def show(self, frame: np.ndarray) -> bool:
        """Blit an (H, W, 3) uint8 frame, flip and pump events; False once the user closed it."""
        pygame = _pg()
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"frame must have shape (H, W, 3), got {frame.shape}")
        height, width = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (width, height):
            if not pygame.display.get_init():
                pygame.display.init()
            self._screen = pygame.display.set_mode((width, height))
            pygame.display.set_caption(self.title)
        image = pygame.image.frombuffer(np.ascontiguousarray(frame, dtype=np.uint8).tobytes(),
                                        (width, height), "RGB")
        self._screen.blit(image, (0, 0))
        pygame.display.flip()
        if self.fps:
            self._clock = self._clock or pygame.time.Clock()
            self._clock.tick(self.fps)
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                self.closed_by_user = True
        return not self.closed_by_user

    def close(self) -> None:
        """Close the window (safe to call more than once)."""
        if self._screen is not None:
            pygame = _pg()
            pygame.display.quit()
            self._screen = None


class EnvRenderer:
    """What an environment's `render()` does for each render mode (ansi, rgb_array, human)."""

    def __init__(self, render_mode: str | None, screen_size: int = 640, fps: float = 2):
        self.render_mode = render_mode
        self.screen_size = screen_size
        self.fps = fps
        self._window: HumanWindow | None = None

    def render(self, game):
        """Text for "ansi", an RGB frame for "rgb_array", None (window shown) for "human"."""
        last = game.history[-1] if game.history else None
        if self.render_mode == "ansi":
            return render_text(game, last_move=last)
        frame = render_rgb(game, size=self.screen_size, last_move=last)
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = HumanWindow(fps=self.fps)
        self._window.show(frame)
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None


# --------------------------------------------------------------------------- files


def save_png(frame: np.ndarray, path) -> Path:
    """Write one (H, W, 3) uint8 frame as a PNG; return the path."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8), "RGB").save(path)
    return path


def save_gif(frames: list[np.ndarray], path, fps: float = 2) -> Path:
    """Write frames as a looping animated GIF at `fps` frames per second; return the path.

    Pillow merges consecutive identical frames into one longer frame.
    """
    from PIL import Image

    frames = list(frames)
    if not frames:
        raise ValueError("save_gif needs at least one frame")
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    images = [Image.fromarray(np.ascontiguousarray(f, dtype=np.uint8), "RGB")
              .quantize(colors=256, method=Image.Quantize.MEDIANCUT) for f in frames]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:],
                   duration=max(20, int(round(1000 / fps))), loop=0)
    return path
