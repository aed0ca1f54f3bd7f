"""Pictures of a game: a text board, an RGB frame, an SVG drawing, a window, GIF/PNG files.

The pure engine (:mod:`satellites_env.core`) never imports this package. pygame is imported
lazily, only by the functions that draw frames, so :func:`render_text` and :func:`render_svg`
work without it.

* :func:`render_text` - a text board with a header (turn, grace, displacement, result);
  :func:`render_rich` - the same board as colored :class:`rich.text.Text` for terminals.
* :func:`render_rgb` - an ``(size, size, 3)`` ``uint8`` frame drawn on an off-screen Surface;
  it needs no display (works headless).
* :func:`render_svg` - the position as an SVG document (`render_mode="svg"`); the HTML replay
  and the local play page (:mod:`satellites_env.web`) draw with it.
* :class:`HumanWindow` - a pygame window that shows such frames (``render_mode="human"``).
* :func:`save_gif`, :func:`save_png` - write frames with Pillow.

Modules: :mod:`.facts` (what every picture shows, read from the engine), :mod:`.palette`
(colors and shapes), :mod:`.text`, :mod:`.raster`, :mod:`.svg`, :mod:`.window`,
:mod:`.modes` (the envs' render modes) and :mod:`.files`.
"""

from .facts import GRACE_SYMBOL, BoardFacts, board_facts
from .files import gif_bytes, save_gif, save_png
from .modes import RENDER_MODES, EnvRenderer
from .palette import PUSH_COLOR
from .raster import render_rgb
from .svg import render_svg, svg_frame, svg_layer
from .text import render_rich, render_text
from .window import HumanWindow

__all__ = [
    "GRACE_SYMBOL", "PUSH_COLOR", "RENDER_MODES", "BoardFacts", "EnvRenderer", "HumanWindow",
    "board_facts", "gif_bytes", "render_rgb", "render_rich", "render_svg", "render_text",
    "save_gif", "save_png", "svg_frame", "svg_layer",
]
