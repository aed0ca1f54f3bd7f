"""The SVG drawing of a position: the one picture behind `render_mode="svg"`, the HTML replay
and the local play page.

It shows what the raster frame shows (coordinates, values, colors, connection links, colonies
outlined and tinted by controller, gold lines and crowns on crowned colonies, the last move,
orange push cells during a displacement, the ⚡ grace counter, the result) from the same
[`board_facts`][satellites_env.render.facts.board_facts] and `satellites_env.render.palette`.

A drawing has two parts, so that pages can draw the board once and swap positions:

* the *frame* ([`svg_frame`][satellites_env.render.svg.svg_frame]): background, cells, grid,
  coordinates and the satellite shapes (``<defs>``), the same for every position;
* the *layer* ([`svg_layer`][satellites_env.render.svg.svg_layer]): one position, inside
  ``<g class="position">`` which carries ``data-spn`` (when the position can be written in SPN),
  ``data-to-move`` and ``data-moves``. Every satellite is a ``<use class="sat">`` with ``data-sq``
  (its square), ``data-piece`` (``R3``, ``B2``) and ``data-connected``; every group is a
  ``<g class="group">`` with ``data-cells``, ``data-controller`` and ``data-crowned``; push cells
  are ``<rect class="push" data-sq=...>``. Tools and tests read these attributes.

[`render_svg`][satellites_env.render.svg.render_svg] joins them into one standalone document;
``interactive=True`` adds a transparent ``<rect class="hit" data-sq=...>`` over each cell for pages
to click on.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from html import escape

from satellites_env.core.board import COLOR_NAMES, N_CELLS, RED, SIZE, row_col
from satellites_env.core.checks import check_int
from satellites_env.core.game import Game
from satellites_env.core.notation import FILES, square_name

from .facts import BoardFacts, board_facts, footer_text, piece_name, status_line
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

__all__ = ["MAX_SVG_WIDTH", "SVG_HEIGHT", "SVG_WIDTH", "render_svg", "svg_frame", "svg_layer"]

# Layout in viewBox units.
CELL = 60
MARGIN = 32  # the coordinate band around the board
HEADER = 80
FOOTER = 44
X0 = MARGIN
Y0 = HEADER + MARGIN
BOARD = CELL * SIZE
SVG_WIDTH = BOARD + 2 * MARGIN
SVG_HEIGHT = HEADER + 2 * MARGIN + BOARD + FOOTER
RADIUS = CELL * 0.36
FONT = "'Inter','Segoe UI','Helvetica Neue',Arial,'Liberation Sans','DejaVu Sans',sans-serif"


def _n(x: float) -> str:
    """A coordinate with at most one decimal, no trailing zeros."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _rgb(color: tuple[int, ...]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*tuple(color[:3]))


def _centre(cell: int) -> tuple[float, float]:
    r, col = row_col(cell)
    return X0 + (col + 0.5) * CELL, Y0 + (r + 0.5) * CELL


def _cell_box(cell: int, inset: float = 0.0) -> tuple[float, float, float]:
    """(x, y, side) of a cell, inset by a fraction of the cell."""
    r, col = row_col(cell)
    i = inset * CELL
    return X0 + col * CELL + i, Y0 + r * CELL + i, CELL - 2 * i


def _rects_path(rects: Iterable[tuple[float, float, float, float]]) -> str:
    return "".join(f"M{_n(x)} {_n(y)}h{_n(w)}v{_n(h)}h{_n(-w)}z" for x, y, w, h in rects)


def _cells_path(cells: Iterable[int]) -> str:
    return _rects_path((*_cell_box(c)[:2], CELL, CELL) for c in cells)


def _polygon(points: Iterable[tuple[float, float]], fill: tuple[int, ...], **attrs: object) -> str:
    extra = "".join(
        f' {key.rstrip("_").replace("_", "-")}="{value}"' for key, value in attrs.items()
    )
    return (
        f'<polygon points="{" ".join(f"{_n(x)},{_n(y)}" for x, y in points)}" '
        f'fill="{_rgb(fill)}"{extra}/>'
    )


# --------------------------------------------------------------------------- the frame


def _satellite_shape(code: int, connected: bool) -> str:
    """One satellite centred on (0, 0): shadow, rim, body, shine, ring when connected, value."""
    fill, dark = disc_colors(code)
    r = RADIUS
    ring = (
        f'<circle r="{_n(r * 0.93)}" fill="none" stroke="{_rgb(LINK)}" '
        f'stroke-width="{_n(r * 0.14)}"/>'
        if connected
        else ""
    )
    return (
        f'<g id="sat-{piece_name(code)}{"c" if connected else ""}">'
        f'<circle cx="{_n(r * 0.08)}" cy="{_n(r * 0.12)}" r="{_n(r)}" fill="#000" '
        f'fill-opacity="0.35"/>'
        f'<circle r="{_n(r)}" fill="{_rgb(dark)}"/>'
        f'<circle r="{_n(r * 0.86)}" fill="{_rgb(fill)}"/>'
        f'<circle cx="{_n(-r * 0.25)}" cy="{_n(-r * 0.3)}" r="{_n(r * 0.28)}" '
        f'fill="{_rgb(highlight_color(fill))}"/>{ring}'
        f'<text y="1" text-anchor="middle" dominant-baseline="central" font-size="24" '
        f'font-weight="700" fill="#fff">{abs(code)}</text></g>'
    )


@lru_cache(maxsize=2)
def svg_frame(interactive: bool = False) -> tuple[str, str]:
    """(below, above): the SVG drawn under every position (definitions, background, cells,
    grid, coordinates) and over it (with `interactive`, one ``<rect class="hit">`` per cell)."""
    defs = "".join(
        _satellite_shape(sign * value, connected)
        for sign in (1, -1)
        for value in range(1, 5)
        for connected in (False, True)
    )
    parts = [
        f"<defs>{defs}</defs>",
        f'<rect width="{SVG_WIDTH}" height="{SVG_HEIGHT}" fill="{_rgb(BACKGROUND)}"/>',
        f'<rect x="{X0 - 2}" y="{Y0 - 2}" width="{BOARD + 4}" height="{BOARD + 4}" rx="3" '
        f'fill="{_rgb(GRID)}"/>',
    ]
    by_fill: dict[tuple[int, int, int], list[int]] = {}
    for c in range(N_CELLS):
        by_fill.setdefault(cell_fill(c), []).append(c)
    parts += [
        f'<path fill="{_rgb(fill)}" d="{_cells_path(cells)}"/>' for fill, cells in by_fill.items()
    ]
    grid = "".join(
        f"M{X0 + i * CELL} {Y0}v{BOARD}M{X0} {Y0 + i * CELL}h{BOARD}" for i in range(SIZE + 1)
    )
    parts.append(f'<path d="{grid}" stroke="{_rgb(GRID)}" stroke-width="1" fill="none"/>')
    labels = []
    for i in range(SIZE):
        cx, cy = X0 + (i + 0.5) * CELL, Y0 + (i + 0.5) * CELL
        for y in (Y0 - MARGIN / 2, Y0 + BOARD + MARGIN / 2):
            labels.append(f'<text x="{_n(cx)}" y="{_n(y)}">{FILES[i]}</text>')
        for x in (X0 - MARGIN / 2, X0 + BOARD + MARGIN / 2):
            labels.append(f'<text x="{_n(x)}" y="{_n(cy)}">{SIZE - i}</text>')
    parts.append(
        f'<g class="coords" font-size="15" font-weight="600" fill="{_rgb(COORD)}" '
        f'text-anchor="middle" dominant-baseline="central">{"".join(labels)}</g>'
    )
    above = ""
    if interactive:
        hits = "".join(
            f'<rect class="hit" data-sq="{square_name(c)}" x="{_n(x)}" y="{_n(y)}" '
            f'width="{CELL}" height="{CELL}" fill="transparent"/>'
            for c in range(N_CELLS)
            for x, y, _ in [_cell_box(c)]
        )
        above = f'<g class="hints"></g><g class="hits">{hits}</g>'
    return "".join(parts), above


# --------------------------------------------------------------------------- the layer


def _groups(f: BoardFacts) -> tuple[str, str]:
    """(tints, outlines) of every group: colonies by controller, pairs lightly."""
    tints, outlines = [], []
    for group in f.score.groups:
        cells = set(group.cells)
        if group.is_colony:
            tint = controller_color(group.controller)
            tints.append(
                f'<path fill="{_rgb(tint)}" fill-opacity="'
                f'{COLONY_TINT_ALPHA / 255:.2f}" d="{_cells_path(group.cells)}"/>'
            )
            width = CELL * 0.07
            body = (
                f'<path fill="{_rgb(tint)}" '
                f'd="{_rects_path(outline_rects(cells, CELL, X0, Y0, width))}"/>'
            )
            if group.crowned:  # a gold line inside the controller's outline
                inner = outline_rects(cells, CELL, X0, Y0, CELL * 0.045, extra_inset=width)
                body += f'<path fill="{_rgb(GOLD)}" d="{_rects_path(inner)}"/>'
        else:
            tints.append(
                f'<path fill="{_rgb(PAIR_TINT)}" fill-opacity="'
                f'{PAIR_TINT_ALPHA / 255:.2f}" d="{_cells_path(group.cells)}"/>'
            )
            body = (
                f'<path fill="{_rgb(PAIR_LINE)}" '
                f'd="{_rects_path(outline_rects(cells, CELL, X0, Y0, CELL * 0.03))}"/>'
            )
        controller = "none" if group.controller is None else COLOR_NAMES[group.controller]
        kind = "colony" if group.is_colony else "pair"
        outlines.append(
            f'<g class="group {kind}" data-cells="'
            f'{" ".join(square_name(c) for c in group.cells)}" '
            f'data-controller="{controller}" data-red-sum="{group.red_sum}" '
            f'data-blue-sum="{group.blue_sum}" '
            f'data-crowned="{str(group.crowned).lower()}">{body}</g>'
        )
    return "".join(tints), "".join(outlines)


def _highlight(cell: int) -> str:
    x, y, side = _cell_box(cell, 0.04)
    return (
        f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(side)}" height="{_n(side)}" '
        f'rx="{_n(CELL * 0.1)}" fill="none" stroke="{_rgb(LAST_MOVE)}" '
        f'stroke-width="{_n(CELL * 0.05)}"/>'
    )


def _dashed(a: int, b: int) -> str:
    (ax, ay), (bx, by) = _centre(a), _centre(b)
    length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
    if length <= CELL * 0.8:
        return ""
    ux, uy = (bx - ax) / length, (by - ay) / length
    gap = CELL * 0.4
    return (
        f'<path d="M{_n(ax + ux * gap)} {_n(ay + uy * gap)}L{_n(bx - ux * gap)} '
        f'{_n(by - uy * gap)}" stroke="{_rgb(LAST_MOVE)}" stroke-width="{_n(CELL * 0.03)}" '
        f'stroke-dasharray="{_n(CELL * 0.14)}"/>'
    )


def _moves_marks(f: BoardFacts) -> str:
    """The push cells (orange) and the last move (pale yellow squares and a dashed line)."""
    parts = []
    for c in f.push_cells:
        x, y, side = _cell_box(c, 0.08)
        cx, cy = _centre(c)
        parts.append(
            f'<rect class="push" data-sq="{square_name(c)}" x="{_n(x)}" y="{_n(y)}" '
            f'width="{_n(side)}" height="{_n(side)}" rx="{_n(CELL * 0.12)}" '
            f'fill="{_rgb(PUSH_COLOR)}"/><circle cx="{_n(cx)}" cy="{_n(cy)}" '
            f'r="{_n(CELL * 0.1)}" fill="{_rgb(PUSH_DOT)}"/>'
        )
    if f.last is not None:
        source, target, landing = f.last
        parts += [_highlight(c) for c in (source, target, landing) if c is not None]
        if source is not None and target is not None:
            parts.append(_dashed(source, target))
    if f.pending_from is not None and f.pending is not None:
        parts += [_highlight(f.pending_from), _dashed(f.pending_from, f.pending)]
    return f'<g class="marks">{"".join(parts)}</g>'


def _links(f: BoardFacts) -> str:
    if not f.links:
        return '<g class="links" data-links=""></g>'
    d = "".join(
        f"M{_n(_centre(a)[0])} {_n(_centre(a)[1])}L{_n(_centre(b)[0])} {_n(_centre(b)[1])}"
        for a, b in f.links
    )
    names = " ".join(f"{square_name(a)}-{square_name(b)}" for a, b in f.links)
    width = CELL * 0.14
    return (
        f'<g class="links" data-links="{names}">'
        f'<path d="{d}" stroke="#000" stroke-width="{_n(width + 2.5)}"/>'
        f'<path d="{d}" stroke="{_rgb(LINK)}" stroke-width="{_n(width)}"/></g>'
    )


def _satellites(f: BoardFacts) -> str:
    parts = []
    for c in range(N_CELLS):
        code = int(f.board[c])
        if code:
            x, y = _centre(c)
            connected = bool(f.connected[c])
            parts.append(
                f'<use class="sat" href="#sat-{piece_name(code)}'
                f'{"c" if connected else ""}" x="{_n(x)}" y="{_n(y)}" '
                f'data-sq="{square_name(c)}" data-piece="{piece_name(code)}" '
                f'data-connected="{int(connected)}"/>'
            )
    return "".join(parts)


def _crowns(f: BoardFacts) -> str:
    parts = []
    for group in f.score.colonies:
        if group.crowned:  # on the top-most, left-most cell
            x, y, _ = _cell_box(min(group.cells))
            parts.append(
                _polygon(
                    crown_polygon(x + CELL * 0.19, y + CELL * 0.14, CELL * 0.4),
                    GOLD,
                    stroke=_rgb(GOLD_DARK),
                    stroke_width="2",
                    class_="crown",
                )
            )
    return "".join(parts)


def _pending_ghost(f: BoardFacts) -> str:
    """The displaced satellite waiting on its cell, small, in the cell's corner."""
    if f.pending is None or not f.pending_piece:
        return ""
    x, y, _ = _cell_box(f.pending)
    gx, gy = x + CELL - CELL * 0.19, y + CELL * 0.19
    return (
        f'<g class="pending" data-sq="{square_name(f.pending)}" '
        f'data-piece="{piece_name(f.pending_piece)}">'
        f'<circle cx="{_n(gx)}" cy="{_n(gy)}" r="{_n(CELL * 0.29)}" '
        f'fill="{_rgb(PUSH_COLOR)}"/><use href="#sat-{piece_name(f.pending_piece)}" '
        f'transform="translate({_n(gx)} {_n(gy)}) scale(0.667)"/></g>'
    )


def _header(game: Game, f: BoardFacts) -> str:
    y1, y2 = 30, 62
    parts = []
    if game.is_over:
        winner = f.score.winner
        if winner is None:
            title = "Draw"
        else:
            title = f"{COLOR_NAMES[winner].capitalize()} wins"
            parts.append(
                f'<circle cx="{MARGIN + 9}" cy="{y1}" r="9" '
                f'fill="{_rgb(RED_DISC if winner == RED else BLUE_DISC)}"/>'
            )
        cap = " (move cap)" if game.truncated else ""
        parts.append(
            f'<text x="{SVG_WIDTH - MARGIN}" y="{y1}" text-anchor="end" '
            f'font-size="15" fill="{_rgb(TEXT_DIM)}" dominant-baseline="central">'
            f"after {game.moves} moves{cap}</text>"
        )
        sub = ""
    else:
        title = f"{COLOR_NAMES[f.to_move].capitalize()} to move"
        parts.append(
            f'<circle cx="{MARGIN + 9}" cy="{y1}" r="9" '
            f'fill="{_rgb(RED_DISC if f.to_move == RED else BLUE_DISC)}"/>'
        )
        sub = (
            f'<tspan dx="10" font-size="15" font-weight="400" fill="{_rgb(TEXT_DIM)}">'
            f"move {game.moves + 1}</tspan>"
        )
        x = SVG_WIDTH - MARGIN  # right-aligned, from the edge inwards
        if game.grace is not None:
            parts.append(
                f'<g class="grace" data-grace="{game.grace}">'
                f'<text x="{x}" y="{y1}" text-anchor="end" dominant-baseline="central" '
                f'font-size="22" font-weight="700" fill="{_rgb(GOLD)}">{game.grace}'
                f"</text>{_polygon(bolt_polygon(x - 34, y1 - 11, 22), GOLD)}"
                f'<text x="{x - 40}" y="{y1}" text-anchor="end" '
                f'dominant-baseline="central" font-size="15" fill="{_rgb(GOLD)}">grace'
                f"</text></g>"
            )
            x -= 110
        if f.pending is not None:
            parts.append(
                f'<circle cx="{x - 14}" cy="{y1}" r="14" fill="{_rgb(PUSH_COLOR)}"/>'
                f'<use href="#sat-{piece_name(f.pending_piece)}" '
                f'transform="translate({x - 14} {y1}) scale(0.5)"/>'
                f'<text x="{x - 34}" y="{y1}" text-anchor="end" '
                f'dominant-baseline="central" font-size="15" fill="{_rgb(TEXT)}">'
                f"push from {square_name(f.pending)}:</text>"
            )
    left = MARGIN if title == "Draw" else MARGIN + 26  # after the color's disc
    parts.append(
        f'<text x="{left}" y="{y1}" dominant-baseline="central" font-size="22" '
        f'font-weight="700" fill="{_rgb(TEXT)}">{title}{sub}</text>'
    )
    parts.append(
        f'<text x="{MARGIN}" y="{y2}" dominant-baseline="central" font-size="14" '
        f'fill="{_rgb(TEXT_DIM)}" style="white-space:pre">'
        f"{escape(status_line(game, f))}</text>"
    )
    return f'<g class="header">{"".join(parts)}</g>'


def _footer(game: Game, f: BoardFacts) -> str:
    color = TEXT if game.is_over else TEXT_DIM
    return (
        f'<text class="footer" x="{SVG_WIDTH / 2}" y="{SVG_HEIGHT - FOOTER / 2 - 2}" '
        f'text-anchor="middle" dominant-baseline="central" font-size="15" '
        f'fill="{_rgb(color)}" style="white-space:pre">{escape(footer_text(game, f))}'
        f"</text>"
    )


def svg_layer(game: Game, last_move: str | None = None) -> str:
    """One position as an SVG fragment (``<g class="position">``) to draw over
    [`svg_frame`][satellites_env.render.svg.svg_frame]. `last_move`: the move to highlight (default
    the game's last; ``""`` for none)."""
    f = board_facts(game, last_move)
    spn = f' data-spn="{escape(game.to_spn())}"' if game.pending_push is None else ""
    tints, outlines = _groups(f)
    return (
        f'<g class="position"{spn} data-to-move="{COLOR_NAMES[game.to_move]}" '
        f'data-moves="{game.moves}" data-over="{str(game.is_over).lower()}">'
        f"{tints}{outlines}{_moves_marks(f)}{_links(f)}{_satellites(f)}{_crowns(f)}"
        f"{_pending_ghost(f)}{_header(game, f)}{_footer(game, f)}</g>"
    )


# The widest drawing render_svg makes, in pixels: far beyond any screen, and small enough
# that the height computed from it is an exact float.
MAX_SVG_WIDTH = 100_000


def svg_document(
    layer: str, *, width: int | None = None, interactive: bool = False, attributes: str = ""
) -> str:
    """A standalone ``<svg>`` of a layer from [`svg_layer`][satellites_env.render.svg.svg_layer]
    over the frame; `width` sets the drawn width (the height follows), `attributes` are added to the
    root element."""
    below, above = svg_frame(interactive)
    size = (
        ""
        if width is None
        else f' width="{int(width)}" height="{round(int(width) * SVG_HEIGHT / SVG_WIDTH)}"'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SVG_WIDTH} {SVG_HEIGHT}"'
        f'{size} font-family="{FONT}" class="satellites-board"{attributes}>'
        f'{below}<g class="layer">{layer}</g>{above}</svg>'
    )


def render_svg(
    game: Game, last_move: str | None = None, *, width: int | None = None, interactive: bool = False
) -> str:
    """The position as a standalone SVG document (a string), e.g. to save as ``board.svg``
    or show in a notebook with ``IPython.display.SVG``. `last_move` as in
    [`svg_layer`][satellites_env.render.svg.svg_layer]; `width` in pixels, 1 .. MAX_SVG_WIDTH
    (default: scales to its container; ValueError naming it otherwise); `interactive` adds click
    targets."""
    if width is not None:
        width = check_int("width", width, 1, MAX_SVG_WIDTH)
    return svg_document(svg_layer(game, last_move), width=width, interactive=interactive)
