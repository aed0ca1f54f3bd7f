"""What an environment's `render()` returns for each render mode."""

from __future__ import annotations

import numpy as np

from satellites_env.core.game import Game

from .raster import render_rgb
from .svg import render_svg
from .text import render_text
from .window import HumanWindow

#: the render modes of the envs, in PettingZoo's and Gymnasium's order
RENDER_MODES = ("human", "ansi", "rgb_array", "svg")


class EnvRenderer:
    """What an environment's `render()` does for each render mode: text for "ansi", an RGB
    frame for "rgb_array", an SVG document (a string) for "svg", a window for "human"."""

    def __init__(self, render_mode: str | None, screen_size: int = 640, fps: float = 2):
        self.render_mode = render_mode
        self.screen_size = screen_size
        self.fps = fps
        self._window: HumanWindow | None = None

    def __getstate__(self) -> dict:
        # A window is the screen's, not the env's: a copy (deepcopy, pickle) of an env opens
        # its own on its first render instead of sharing or cloning pygame's display.
        return {**self.__dict__, "_window": None}

    def render(self, game: Game) -> str | np.ndarray | None:
        """Text for "ansi", an RGB frame for "rgb_array", SVG text for "svg", None (window
        shown) for "human"."""
        last = game.history[-1] if game.history else None
        if self.render_mode == "ansi":
            return render_text(game, last_move=last)
        if self.render_mode == "svg":
            return render_svg(game, last_move=last)
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
