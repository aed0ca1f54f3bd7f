"""Frames to files: PNG and animated GIF (Pillow). The HTML replay is `satellites_env.web`.

Files are written by `satellites_env.files`: atomically, and never over a folder, a
special file or a symbolic link."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ..files import open_output, write_output


def save_png(frame: np.ndarray, path) -> Path:
    """Write one (H, W, 3) uint8 frame as a PNG; return the path."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_output(path, "PNG file") as file:
        Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8), "RGB").save(file, "PNG")
    return path


def gif_bytes(frames: list[np.ndarray], fps: float = 2) -> bytes:
    """Frames as the bytes of a looping animated GIF at `fps` frames per second.

    Pillow merges consecutive identical frames into one longer frame.
    """
    from PIL import Image

    frames = list(frames)
    if not frames:
        raise ValueError("an animated GIF needs at least one frame")
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    images = [Image.fromarray(np.ascontiguousarray(f, dtype=np.uint8), "RGB")
              .quantize(colors=256, method=Image.Quantize.MEDIANCUT) for f in frames]
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=images[1:],
                   duration=max(20, int(round(1000 / fps))), loop=0)
    return buffer.getvalue()


def save_gif(frames: list[np.ndarray], path, fps: float = 2) -> Path:
    """Write frames as a looping animated GIF at `fps` frames per second; return the path."""
    data = gif_bytes(frames, fps)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_output(path, data, "GIF file")
