"""Masked rollouts of the AEC env `satellites_v0` through TorchRL.

TorchRL's `PettingZooWrapper` turns the turn-based game into a TensorDict env: with
`use_mask=True` and one group for both players, each frame holds both players' planes, a
`mask` that says who is to move and an `action_mask` of the legal actions (the acting player's
exact mask; all True for the player who waits). One small torch policy, shared by both seats,
samples from a `MaskedCategorical` over the 3217 actions, and a `Collector` gathers
batches of frames, resetting the game whenever it ends. The script then checks that every
action the env applied was legal and prints what it collected.

    python examples/torchrl_pettingzoo.py --total-frames 2000 --frames-per-batch 500

The default budget (these 2000 frames) takes about 15 seconds of one CPU core, plus numba's
one-time compile of the engine on the first run in a fresh install.

Needs the `train` and `examples` extras (PyTorch, torchrl): pip install -e ".[train,examples]".
The policy is untrained; a learner (PPO with torchrl's `ClipPPOLoss`, say) would read the
`("players", "action_log_prob")` the collector stores with each frame.
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

from satellites_env import satellites_v0

GROUP = "players"


def make_env(max_moves: int = 400, seed: int = 0) -> PettingZooWrapper:
    """`satellites_v0` wrapped for TorchRL, both players in one group (one shared policy)."""
    # TorchRL warns for any PettingZoo release but the one it is tested with; the wrapper's AEC
    # path is what this script checks, so the warning says nothing here.
    aec = satellites_v0.env(max_moves=max_moves)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(
            aec, use_mask=True, group_map={GROUP: list(aec.possible_agents)}, seed=seed
        )


def make_policy(env: PettingZooWrapper, hidden: int = 64) -> ProbabilisticActor:
    """A tiny MLP over the planes whose logits feed a `MaskedCategorical` with the env's
    `action_mask`, so it samples only legal actions."""
    planes_key = (GROUP, "observation", "observation")
    planes_shape = env.observation_spec[planes_key].shape[1:]  # (10, 10, 22), per player
    n_actions = env.full_action_spec[GROUP, "action"].space.n
    net = nn.Sequential(
        nn.Flatten(start_dim=-3),
        nn.Linear(planes_shape.numel(), hidden),
        nn.Tanh(),
        nn.Linear(hidden, n_actions),
    )
    logits = TensorDictModule(net, in_keys=[planes_key], out_keys=[(GROUP, "logits")])
    return ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        spec=env.full_action_spec[GROUP, "action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )


def count_illegal(frames) -> int:
    """How many of `frames` (a batch of the collector's frames) apply an action outside the
    acting player's `action_mask`."""
    players = frames[GROUP]
    actor = players["mask"].float().argmax(dim=-1)  # who acted in each frame
    rows = torch.arange(len(frames))
    action = players["action"][rows, actor]
    return int((~players["action_mask"][rows, actor, action]).sum())


def main(
    total_frames: int = 2000,
    frames_per_batch: int = 500,
    max_moves: int = 400,
    seed: int = 0,
    torch_threads: int | None = 1,
    verbose: bool = True,
) -> dict:
    """Collect `total_frames` frames with the masked policy; return a summary dict."""
    if torch_threads:
        torch.set_num_threads(torch_threads)  # a tiny net: more threads only add waiting
    torch.manual_seed(seed)
    start = time.perf_counter()
    env = make_env(max_moves, seed)
    policy = make_policy(env)
    # The policy keeps no recurrent state, so the env needs no transform added for it.
    collector = Collector(
        env,
        policy,
        frames_per_batch=frames_per_batch,
        total_frames=total_frames,
        auto_register_policy_transforms=False,
    )
    frames = illegal = 0
    lengths, current = [], 0  # episode lengths in frames (one frame = one player's action)
    for batch in collector:
        illegal += count_illegal(batch)
        for done in batch["next", "done"].squeeze(-1).tolist():
            current += 1
            if done:
                lengths.append(current)
                current = 0
        frames += batch.numel()
    episodes = len(lengths)
    collector.shutdown()
    summary = {
        "frames": frames,
        "episodes": episodes,
        "mean_episode_length": sum(lengths) / episodes if episodes else None,
        "illegal_actions": illegal,
        "seconds": round(time.perf_counter() - start, 1),
    }
    if verbose:
        mean = summary["mean_episode_length"]
        print(
            f"TorchRL Collector on satellites_v0: {frames} frames, {episodes} episodes "
            f"finished"
            + (f" (mean length {mean:.1f} frames)" if mean is not None else "")
            + f", {summary['seconds']} s"
        )
        print(
            f"illegal actions: {illegal} of {frames} (each checked against the acting "
            f"player's action_mask)"
        )
    return summary


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--total-frames",
        type=int,
        default=2000,
        help="frames to collect; one frame is one player's action",
    )
    parser.add_argument("--frames-per-batch", type=int, default=500)
    parser.add_argument(
        "--max-moves",
        type=int,
        default=400,
        help="the move cap; reaching it ends (truncates) the game",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--torch-threads", type=int, default=1, help="PyTorch threads (0: PyTorch's default)"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(**vars(_parse_args()))
