"""The pygame window of `render_mode="human"`, shown frame by frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .raster import pygame_module

if TYPE_CHECKING:  # pygame itself is imported when a frame is drawn
    from pygame import Surface
    from pygame.time import Clock


class HumanWindow:
    """A pygame window showing RGB frames; opened on the first `show`."""

    def __init__(self, title: str = "Satellites", fps: float | None = None):
        self.title = title
        self.fps = fps  # at most this many frames a second, like PettingZoo's render_fps
        self._screen: Surface | None = None
        self._clock: Clock | None = None
        self.closed_by_user = False

    @property
    def is_open(self) -> bool:
        return self._screen is not None

    def show(self, frame: np.ndarray) -> bool:
        """Blit an (H, W, 3) uint8 frame, flip and pump events; False once the user closed it."""
        pygame = pygame_module()
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"frame must have shape (H, W, 3), got {frame.shape}")
        height, width = frame.shape[:2]
        # pygame has one display a process: another window (a copy of the env) may have
        # closed it or resized it since this one drew; then it is opened again.
        if (
            self._screen is None
            or not pygame.display.get_init()
            or self._screen.get_size() != (width, height)
        ):
            if not pygame.display.get_init():
                pygame.display.init()
            self._screen = pygame.display.set_mode((width, height))
            pygame.display.set_caption(self.title)
        image = pygame.image.frombuffer(
            np.ascontiguousarray(frame, dtype=np.uint8).tobytes(), (width, height), "RGB"
        )
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
            pygame = pygame_module()
            pygame.display.quit()
            self._screen = None
