"""One evaluation game as a short animation in TensorBoard, so a run shows how play changes.

    from satellites_env.arena import play_game
    from training.common.tensorboard import log_game

    record = play_game(learner_agent, make_agent("greedy"), setup_seed=0)  # or any GameRecord
    log_game(writer, "eval/sample_game", record, step)

The animation is an animated GIF in TensorBoard's Images tab (the same summary that
`SummaryWriter.add_video` writes, which TensorBoard plays as an animation), drawn with the
raster renderer ([`render.render_rgb`][satellites_env.render.render_rgb]) at a small size. It is
encoded with Pillow, so it needs neither moviepy (which `add_video` imports, and whose 2.x releases
it cannot use) nor ffmpeg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from satellites_env.record import GameRecord
from satellites_env.render import gif_bytes, render_rgb

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

FRAME_SIZE = 192  # pixels: small, readable in the Images tab
FPS = 6.0
MAX_FRAMES = 150


def game_frames(
    record: GameRecord, size: int = FRAME_SIZE, max_frames: int = MAX_FRAMES
) -> list[np.ndarray]:
    """RGB frames of a recorded game: the start, the positions after each move (evenly
    thinned to at most `max_frames`, the first and last always kept)."""
    if max_frames < 2:
        raise ValueError(f"max_frames must be at least 2, got {max_frames}")
    positions = record.replay()  # each with its history: its last move is highlighted
    keep = np.unique(
        np.linspace(0, len(positions) - 1, min(len(positions), max_frames)).round().astype(int)
    )
    return [render_rgb(positions[i], size=size) for i in keep]


def log_game(
    writer: SummaryWriter,
    tag: str,
    record: GameRecord,
    step: int,
    *,
    size: int = FRAME_SIZE,
    fps: float = FPS,
    max_frames: int = MAX_FRAMES,
) -> int:
    """Log `record` (a [`GameRecord`][satellites_env.record.GameRecord]) as an animation under
    `tag` at `step` to `writer` (a ``torch.utils.tensorboard.SummaryWriter``); return the
    number of frames.

    Args:
        writer (torch.utils.tensorboard.SummaryWriter): the run's writer.
        tag: e.g. ``"eval/sample_game"``.
        record: the game to show, e.g. from ``satellites_env.arena.play_game`` or the
            records an evaluation keeps.
        step: the global step (learner steps in the PPO trainer).
        size: frame side in pixels.
        fps: frames per second of the animation.
        max_frames: at most this many frames (long games are thinned evenly).
    """
    from tensorboard.compat.proto.summary_pb2 import Summary

    frames = game_frames(record, size, max_frames)
    image = Summary.Image(
        height=size, width=size, colorspace=3, encoded_image_string=gif_bytes(frames, fps)
    )
    summary = Summary(value=[Summary.Value(tag=tag, image=image)])
    # SummaryWriter has no public call for an encoded image; add_video does exactly this.
    writer._get_file_writer().add_summary(summary, step)
    return len(frames)
