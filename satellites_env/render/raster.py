"""The RGB frame: a position drawn with pygame on an off-screen Surface (no display needed).

pygame is imported lazily, only when a frame is drawn, so the text board works without it.
The facts come from `satellites_env.render.facts`, the colors and shapes from
`satellites_env.render.palette` (shared with the SVG drawing).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from satellites_env.core.board import COLOR_NAMES, N_CELLS, RED, SIZE, row_col
from satellites_env.core.checks import check_int
from satellites_env.core.game import Game
from satellites_env.core.notation import FILES, square_name

from .facts import BoardFacts, board_facts, footer_text, status_line
from .palette import (
    BACKGROUND,
    BLUE_DISC,
    COLONY_TINT_ALPHA,
    COORD,
    GOLD,
    GOLD_DARK,
    GRID,
    LAST_MOVE,
    LINK,
    PAIR_LINE,
    PAIR_TINT,
    PAIR_TINT_ALPHA,
    PUSH_COLOR,
    PUSH_DOT,
    RED_DISC,
    TEXT,
    TEXT_DIM,
    bolt_polygon,
    cell_fill,
    controller_color,
    crown_polygon,
    disc_colors,
    highlight_color,
    outline_rects,
)

__all__ = ["MAX_FRAME_SIZE", "MIN_FRAME_SIZE", "render_rgb"]

# Frame sizes in pixels (the envs' screen_size, the CLI's --frame-size): below 64 the text is
# unreadable; 4096 is drawn at twice the size first, a 256 MB surface.
MIN_FRAME_SIZE, MAX_FRAME_SIZE = 64, 4096

_SUPERSAMPLE = 2

if TYPE_CHECKING:  # pygame itself is imported when a frame is drawn
    from pygame import Rect, Surface
    from pygame.font import Font

RGB = tuple[int, ...]  # a colour of the palette (RGB, or RGBA)
Point = tuple[float, float]


# --------------------------------------------------------------------------- pygame helpers

_pygame = None
_fonts: dict[int, Font] = {}


def pygame_module():
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


def _font(px: int) -> Font:
    px = max(6, int(px))
    font = _fonts.get(px)
    if font is None:
        font = pygame_module().font.Font(None, px)
        _fonts[px] = font
    return font


def _text(
    surface: Surface,
    text: str,
    px: int,
    color: RGB,
    pos: Point,
    anchor: str = "topleft",
    max_width: int | None = None,
) -> Rect:
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


def _bolt(surface: Surface, x: float, y: float, h: float, color: RGB) -> float:
    """A lightning bolt of height `h` with its top-left at (x, y); return its width."""
    pygame_module().draw.polygon(surface, color, bolt_polygon(x, y, h))
    return h * 0.6


def _crown(surface: Surface, cx: float, cy: float, w: float, color: RGB, outline: RGB) -> None:
    """A small crown centred on (cx, cy), `w` wide."""
    poly = crown_polygon(cx, cy, w)
    pygame = pygame_module()
    pygame.draw.polygon(surface, color, poly)
    pygame.draw.polygon(surface, outline, poly, max(1, int(w / 12)))


def _disc(
    surface: Surface,
    cx: float,
    cy: float,
    r: float,
    code: int,
    connected: bool,
    s: int,
    alpha: int = 255,
) -> None:
    """A satellite: a shaded disc with its value; connected ones get a white ring."""
    pygame = pygame_module()
    fill, dark = disc_colors(code)
    size = int(2 * r + 4 * s + 2)
    layer = pygame.Surface((size, size), pygame.SRCALPHA)
    c = size / 2
    pygame.draw.circle(layer, (0, 0, 0, 90), (c + r * 0.08, c + r * 0.12), r)  # shadow
    pygame.draw.circle(layer, dark, (c, c), r)
    pygame.draw.circle(layer, fill, (c, c), r * 0.86)
    pygame.draw.circle(layer, highlight_color(fill), (c - r * 0.25, c - r * 0.3), r * 0.28)
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
    end, the result. `last_move`: default the game's last move; `""` for none. `size`: 64 ..
    4096 pixels (ValueError naming it otherwise).
    """
    size = check_int("size", size, MIN_FRAME_SIZE, MAX_FRAME_SIZE)
    pygame = pygame_module()
    f = board_facts(game, last_move)
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

    def cell_rect(c: int, inset: float = 0.0) -> Rect:
        r, col = row_col(c)
        i = int(inset * cell)
        rect: Rect = pygame.Rect(x0 + col * cell + i, y0 + r * cell + i, cell - 2 * i, cell - 2 * i)
        return rect

    # -- board, edges, grid, coordinates
    pygame.draw.rect(
        surf,
        GRID,
        pygame.Rect(x0 - 2 * s, y0 - 2 * s, board_px + 4 * s, board_px + 4 * s),
        border_radius=3 * s,
    )
    for c in range(N_CELLS):
        pygame.draw.rect(surf, cell_fill(c), cell_rect(c))
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
            tint = controller_color(group.controller)
            for c in cells:
                pygame.draw.rect(overlay, (*tint, COLONY_TINT_ALPHA), cell_rect(c))
        else:
            for c in cells:
                pygame.draw.rect(overlay, (*PAIR_TINT, PAIR_TINT_ALPHA), cell_rect(c))
    surf.blit(overlay, (0, 0))
    for group in f.score.groups:
        cells = set(group.cells)
        if group.is_colony:
            width = max(2, int(cell * 0.07))
            _outline(surf, cells, cell, x0, y0, controller_color(group.controller), width)
            if group.crowned:  # a gold line inside the controller's outline
                _outline(
                    surf, cells, cell, x0, y0, GOLD, max(2, int(cell * 0.045)), extra_inset=width
                )
        else:
            _outline(surf, cells, cell, x0, y0, PAIR_LINE, max(1, int(cell * 0.03)))

    # -- push landing cells (orange) and the last move
    for c in f.push_cells:
        pygame.draw.rect(surf, PUSH_COLOR, cell_rect(c, 0.08), border_radius=int(cell * 0.12))
        pygame.draw.circle(surf, PUSH_DOT, centre(c), cell * 0.1)
    if f.last is not None:
        source, target, landing = f.last
        width = max(2, int(cell * 0.05))
        for square in (source, target, landing):
            if square is not None:
                pygame.draw.rect(
                    surf, LAST_MOVE, cell_rect(square, 0.04), width, border_radius=int(cell * 0.1)
                )
        if source is not None and target is not None:
            _dashed(surf, centre(source), centre(target), LAST_MOVE, max(1, width // 2), cell)
    if f.pending_from is not None and f.pending is not None:
        pygame.draw.rect(
            surf,
            LAST_MOVE,
            cell_rect(f.pending_from, 0.04),
            max(2, int(cell * 0.05)),
            border_radius=int(cell * 0.1),
        )
        _dashed(
            surf,
            centre(f.pending_from),
            centre(f.pending),
            LAST_MOVE,
            max(1, int(cell * 0.025)),
            cell,
        )

    # -- connection links
    link_w = max(3, int(cell * 0.14))
    for c, n in f.links:
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
            _crown(
                surf, rect.left + cell * 0.19, rect.top + cell * 0.14, cell * 0.4, GOLD, GOLD_DARK
            )

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


def _outline(
    surf: Surface,
    cells: set[int],
    cell: int,
    x0: int,
    y0: int,
    color: RGB,
    width: int,
    extra_inset: float = 0,
) -> None:
    """Draw the border of a set of cells (a polyomino), inset by about half its width."""
    pygame = pygame_module()
    for x, y, w, h in outline_rects(cells, cell, x0, y0, width, extra_inset):
        pygame.draw.rect(surf, color, pygame.Rect(round(x), round(y), round(w), max(1, round(h))))


def _dashed(surf: Surface, a: Point, b: Point, color: RGB, width: int, cell: int) -> None:
    """A dashed line from a to b (centre to centre), stopping short of the discs."""
    pygame = pygame_module()
    (ax, ay), (bx, by) = a, b
    length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
    if length < 1:
        return
    ux, uy = (bx - ax) / length, (by - ay) / length
    dash = cell * 0.14
    t = cell * 0.4
    while t < length - cell * 0.4:
        e = min(t + dash, length - cell * 0.4)
        pygame.draw.line(surf, color, (ax + ux * t, ay + uy * t), (ax + ux * e, ay + uy * e), width)
        t += dash * 2


def _header(
    surf: Surface, game: Game, f: BoardFacts, S: int, header: int, margin: int, s: int
) -> None:
    pygame = pygame_module()
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
            _text(
                surf,
                f"{COLOR_NAMES[winner].capitalize()} wins",
                big,
                TEXT,
                (left + big * 0.8, y1),
                "midleft",
            )
        cap = " (move cap)" if game.truncated else ""
        _text(surf, f"after {game.moves} moves{cap}", small, TEXT_DIM, (right_edge, y1), "midright")
    else:
        color = RED_DISC if f.to_move == RED else BLUE_DISC
        pygame.draw.circle(surf, color, (left + big * 0.35, y1), big * 0.32)
        rect = _text(
            surf,
            f"{COLOR_NAMES[f.to_move].capitalize()} to move",
            big,
            TEXT,
            (left + big * 0.8, y1),
            "midleft",
        )
        _text(surf, f"  move {game.moves + 1}", small, TEXT_DIM, (rect.right, y1), "midleft")
        # Right, from the edge inwards: the grace counter, then a displacement in progress.
        x: float = right_edge
        if game.grace is not None:
            label = _text(surf, f"{game.grace}", big, GOLD, (x, y1), "midright")
            bolt_h = big * 0.9
            bolt_w = bolt_h * 0.6
            _bolt(surf, label.left - bolt_w - 3 * s, y1 - bolt_h / 2, bolt_h, GOLD)
            label = _text(surf, "grace", small, GOLD, (label.left - bolt_w - 8 * s, y1), "midright")
            x = label.left - 4 * big * 0.5
        if f.pending is not None:
            r = big * 0.5
            gx = x - r * 1.2
            pygame.draw.circle(surf, PUSH_COLOR, (gx, y1), r * 1.2)
            _disc(surf, gx, y1, r, f.pending_piece, False, s)
            _text(
                surf,
                f"push from {square_name(f.pending)}:",
                small,
                TEXT,
                (gx - r * 1.6, y1),
                "midright",
            )

    # Line 2: connected counts, colonies, passes.
    _text(
        surf,
        status_line(game, f),
        small,
        TEXT_DIM,
        (margin, y2),
        "midleft",
        max_width=S - 2 * margin,
    )


def _footer(
    surf: Surface, game: Game, f: BoardFacts, S: int, footer: int, margin: int, s: int
) -> None:
    px = int(footer * 0.48)
    y = S - footer * 0.55
    _text(
        surf,
        footer_text(game, f),
        px,
        TEXT if game.is_over else TEXT_DIM,
        (S / 2, y),
        "center",
        max_width=S - 2 * margin,
    )
