"""Pictures of a game: a text board, an RGB frame, an SVG drawing, a window, GIF/PNG files.

The pure engine (`satellites_env.core`) never imports this package. pygame is imported
lazily, only by the functions that draw frames, so
[`render_text`][satellites_env.render.render_text] and
[`render_svg`][satellites_env.render.render_svg] work without it.

* [`render_text`][satellites_env.render.render_text] - a text board with a header (turn, grace,
  displacement, result); [`render_rich`][satellites_env.render.render_rich] - the same board as
  colored `rich.text.Text` for terminals.
* [`render_rgb`][satellites_env.render.render_rgb] - an ``(size, size, 3)`` ``uint8`` frame drawn on
  an off-screen Surface; it needs no display (works headless).
* [`render_svg`][satellites_env.render.render_svg] - the position as an SVG document
  (`render_mode="svg"`); the HTML replay and the local play page (`satellites_env.web`) draw with
  it.
* [`HumanWindow`][satellites_env.render.HumanWindow] - a pygame window that shows such frames
  (``render_mode="human"``).
* [`save_gif`][satellites_env.render.save_gif], [`save_png`][satellites_env.render.save_png] - write
  frames with Pillow.

Modules: `satellites_env.render.facts` (what every picture shows, read from the engine),
`satellites_env.render.palette` (colors and shapes), `satellites_env.render.text`,
`satellites_env.render.raster`, `satellites_env.render.svg`, `satellites_env.render.window`,
`satellites_env.render.modes` (the envs' render modes) and `satellites_env.render.files`.
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
    "GRACE_SYMBOL",
    "PUSH_COLOR",
    "RENDER_MODES",
    "BoardFacts",
    "EnvRenderer",
    "HumanWindow",
    "board_facts",
    "gif_bytes",
    "render_rgb",
    "render_rich",
    "render_svg",
    "render_text",
    "save_gif",
    "save_png",
    "svg_frame",
    "svg_layer",
]
