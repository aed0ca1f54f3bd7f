"""A sample evaluation game as an animation in TensorBoard (training/common/tensorboard.py)."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import IMAGES, EventAccumulator
from test_training import tiny_config
from torch.utils.tensorboard import SummaryWriter

from satellites_env.agents import make_agent
from satellites_env.arena import play_game
from training.common.tensorboard import game_frames, log_game
from training.ppo.trainer import PPOTrainer


def images(folder, tag):
    events = EventAccumulator(str(folder), size_guidance={IMAGES: 0})
    events.Reload()
    assert tag in events.Tags()[IMAGES], events.Tags()[IMAGES]
    return events.Images(tag)


def gif_frames(encoded: bytes) -> tuple[str, int, tuple[int, int]]:
    with Image.open(io.BytesIO(encoded)) as image:
        return image.format, image.n_frames, image.size


def test_log_game_writes_an_animated_gif(tmp_path):
    record = play_game(make_agent("random", seed=1), make_agent("greedy", seed=2), 3, max_moves=12)
    with SummaryWriter(tmp_path) as writer:
        frames = log_game(writer, "eval/sample", record, step=7, size=96, max_frames=50)
    assert frames == len(record.moves) + 1 == 13
    (event,) = images(tmp_path, "eval/sample")
    assert event.step == 7 and (event.width, event.height) == (96, 96)
    fmt, n_frames, size = gif_frames(event.encoded_image_string)
    assert fmt == "GIF" and size == (96, 96)
    assert 2 <= n_frames <= 13  # Pillow merges identical consecutive frames


def test_long_games_are_thinned_keeping_both_ends():
    record = play_game(make_agent("random", seed=1), make_agent("random", seed=2), 4, max_moves=60)
    frames = game_frames(record, size=64, max_frames=10)
    assert len(frames) == 10
    first = game_frames(type(record)(record.start_spn, [], record.max_moves), size=64)
    assert (frames[0] == first[0]).all()
    with pytest.raises(ValueError, match="max_frames"):
        game_frames(record, max_frames=1)


def test_ppo_evaluations_log_a_sample_game(tmp_path):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    trainer.run()
    events = images(tmp_path / "run" / "tensorboard", "eval/game_vs_random")
    evaluations = [e.progress for e in trainer.history if not e.final]
    assert [event.step for event in events] == evaluations and evaluations
    fmt, n_frames, _ = gif_frames(events[-1].encoded_image_string)
    assert fmt == "GIF" and n_frames >= 2
