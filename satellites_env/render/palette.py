"""Colors and shapes shared by the raster frame and the SVG drawing (one look, two outputs).

Geometry here is in board units with the cell side as a parameter, so pygame (pixels) and SVG
(viewBox units) draw the same outlines, bolts and crowns.
"""

from __future__ import annotations

from satellites_env.core.board import RED, SIZE, row_col

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
GOLD_DARK = (90, 60, 0)
PUSH_COLOR = (255, 140, 0)  # the cards' "orange cells"; used for nothing else
PUSH_DOT = (120, 60, 0)
LAST_MOVE = (255, 240, 150)
PAIR_TINT = (200, 210, 235)
PAIR_LINE = tuple(int(v * 0.55) for v in PAIR_TINT)
COLONY_TINT_ALPHA = 85  # of 255
PAIR_TINT_ALPHA = 22

# A lightning bolt in a (0.6 h) x h box and a crown in a w x (0.7 w) box, as fractions.
BOLT_POINTS = (
    (0.55, 0.0),
    (0.05, 0.58),
    (0.42, 0.58),
    (0.28, 1.0),
    (0.95, 0.36),
    (0.55, 0.36),
    (0.78, 0.0),
)
CROWN_POINTS = (
    (0.0, 1.0),
    (0.0, 0.25),
    (0.25, 0.6),
    (0.5, 0.0),
    (0.75, 0.6),
    (1.0, 0.25),
    (1.0, 1.0),
)


def disc_colors(code: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(fill, rim) of a satellite by its color."""
    return (RED_DISC, RED_DARK) if code > 0 else (BLUE_DISC, BLUE_DARK)


def highlight_color(fill: tuple[int, int, int]) -> tuple[int, int, int]:
    """The shine on a disc."""
    red, green, blue = (min(255, v + 45) for v in fill)
    return red, green, blue


def controller_color(controller: int | None) -> tuple[int, int, int]:
    """A colony's color: its controller's, grey when tied."""
    if controller is None:
        return GREY
    return RED_DISC if controller == RED else BLUE_DISC


def cell_fill(cell: int) -> tuple[int, int, int]:
    """Edge cells (where satellites start) are lighter; the inside is a faint checkerboard."""
    r, col = row_col(cell)
    if r in (0, SIZE - 1) or col in (0, SIZE - 1):
        return EDGE_FILL
    return BOARD_FILL if (r + col) % 2 == 0 else BOARD_FILL_ALT


def bolt_polygon(x: float, y: float, h: float) -> list[tuple[float, float]]:
    """The bolt of height `h` with its top-left corner at (x, y)."""
    w = h * 0.6
    return [(x + px * w, y + py * h) for px, py in BOLT_POINTS]


def crown_polygon(cx: float, cy: float, w: float) -> list[tuple[float, float]]:
    """The crown `w` wide centred on (cx, cy)."""
    h = w * 0.7
    x0, y0 = cx - w / 2, cy - h / 2
    return [(x0 + px * w, y0 + py * h) for px, py in CROWN_POINTS]


def outline_rects(
    cells: set[int], cell: float, x0: float, y0: float, width: float, extra_inset: float = 0
) -> list[tuple[float, float, float, float]]:
    """The border of a set of cells (a polyomino) inset by about half its `width`, as
    (x, y, w, h) rectangles that join at convex and concave corners."""
    inset = width / 2 + 1 + extra_inset
    half = width / 2
    rects = []

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

    for c in sorted(cells):
        r, col = row_col(c)
        left, top = x0 + col * cell, y0 + r * cell
        right, bottom = left + cell, top + cell
        for dr, y in ((-1, top + inset), (1, bottom - inset)):  # top and bottom sides
            if inside(r + dr, col):
                continue
            xa = low_end(left, inside(r, col - 1), inside(r + dr, col - 1))
            xb = high_end(right, inside(r, col + 1), inside(r + dr, col + 1))
            rects.append((xa, y - half, xb - xa, width))
        for dc, x in ((-1, left + inset), (1, right - inset)):  # left and right sides
            if inside(r, col + dc):
                continue
            ya = low_end(top, inside(r - 1, col), inside(r - 1, col + dc))
            yb = high_end(bottom, inside(r + 1, col), inside(r + 1, col + dc))
            rects.append((x - half, ya, width, yb - ya))
    return rects
