"""Frames to files: PNG and animated GIF (Pillow). The HTML replay is `satellites_env.web`.

Files are written by `satellites_env.files`: atomically, and never over a folder, a
special file or a symbolic link."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..core.checks import quoted
from ..files import open_output, write_output


def save_png(frame: np.ndarray, path: str | Path) -> Path:
    """Write one (H, W, 3) uint8 frame as a PNG; return the path."""
    from PIL import Image

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open_output(out, "PNG file") as file:
        Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8), "RGB").save(file, "PNG")
    return out


#: the frame rates a GIF honours: a frame's delay is a whole number of centiseconds, and
#: browsers show delays under 2 cs (over 50 fps) at 10 cs, so 50 fps is the fastest; 0.1 fps
#: (10 s a frame) is the slowest this writes
MIN_FPS, MAX_FPS = 0.1, 50.0
#: the most bytes the frames of one GIF may take while it is made (one byte a pixel once
#: quantized to its palette): `frames * size * size`, checked before any frame is rendered
GIF_BUDGET = 512 * 2**20
#: the longest delay a GIF frame can state (an unsigned 16-bit count of centiseconds)
MAX_DELAY_CS = 65535


def check_fps(fps: float | str) -> float:
    """`fps` as a float when it is a frame rate a GIF honours (MIN_FPS to MAX_FPS).

    Raises:
        ValueError: Any other value (NaN and infinity included).
    """
    try:
        value = float(fps)
    except (TypeError, ValueError):
        value = math.nan
    if not MIN_FPS <= value <= MAX_FPS:
        raise ValueError(
            f"fps must be a number from {MIN_FPS:g} to {MAX_FPS:g} (a GIF frame "
            f"lasts a whole number of centiseconds, at least 2), got {quoted(fps)}"
        )
    return value


def check_gif_budget(frames: int, size: int, option: str = "size") -> None:
    """Refuse, before anything is rendered, a GIF of `frames` square frames of `size` pixels
    whose frames would take more than GIF_BUDGET bytes.

    Raises:
        ValueError: Over the budget; the message says the largest `option` that fits.
    """
    need = frames * size * size
    if need > GIF_BUDGET:
        fits = math.isqrt(GIF_BUDGET // max(frames, 1))
        raise ValueError(
            f"a GIF of {frames:,} frames of {size}x{size} pixels needs "
            f"{need / 2**20:,.0f} MiB, over the {GIF_BUDGET // 2**20} MiB this "
            f"makes; use {option} {fits} or less"
            if fits >= 64
            else f"a GIF of {frames:,} frames needs more than the {GIF_BUDGET // 2**20}"
            f" MiB this makes at any frame size; write an HTML replay instead"
        )


def gif_bytes(frames: Iterable[np.ndarray], fps: float = 2) -> bytes:
    """Frames as the bytes of a looping animated GIF at `fps` frames per second.

    Each frame is reduced to its palette as it arrives (only one full-colour frame is held at
    a time), and a frame equal to the one before it lengthens that one (a still picture
    lasts at most GIF's longest delay, about 11 minutes).

    Args:
        frames: (H, W, 3) uint8 frames, all of one size (a list or any iterable).
        fps: Frames per second, MIN_FPS to MAX_FPS; each frame lasts `round(100 / fps)`
            centiseconds.

    Returns:
        The GIF file's bytes.

    Raises:
        ValueError: No frames, an fps out of range, or frames over GIF_BUDGET bytes.
    """
    from PIL import Image

    delay = max(2, round(100 / check_fps(fps)))  # centiseconds
    images: list = []
    delays: list[int] = []
    previous = None
    held = 0
    for frame in frames:
        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        if previous is not None and np.array_equal(frame, previous):
            # Pillow would merge equal frames itself, past the longest delay a GIF can state
            delays[-1] = min(delays[-1] + delay, MAX_DELAY_CS)
            continue
        held += frame.shape[0] * frame.shape[1]
        if held > GIF_BUDGET:
            raise ValueError(
                f"the GIF's frames take more than {GIF_BUDGET // 2**20} MiB; use "
                f"fewer or smaller frames"
            )
        previous = frame
        images.append(
            Image.fromarray(frame, "RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        )
        delays.append(delay)
    if not images:
        raise ValueError("an animated GIF needs at least one frame")
    buffer = io.BytesIO()
    # durations in milliseconds, whole centiseconds: Pillow writes duration // 10
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=[d * 10 for d in delays],
        loop=0,
    )
    return buffer.getvalue()


def save_gif(frames: Iterable[np.ndarray], path: str | Path, fps: float = 2) -> Path:
    """Write frames as a looping animated GIF at `fps` frames per second (see
    [`gif_bytes`][satellites_env.render.files.gif_bytes]); return the path."""
    data = gif_bytes(frames, fps)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_output(path, data, "GIF file")
