"""RLlib's multi-agent PPO (new API stack) on `satellites_v0`: one shared policy plays both
colors, with RLlib's action-masking RLModule, then plays `random` with no illegal action.

    pip install -e ".[train,rllib]"
    python examples/rllib_ppo_selfplay.py --total-steps 20000 --save runs/rllib_module
    satellites evaluate --agents rllib:runs/rllib_module random greedy --games 20

* The env is `PettingZooEnv(MaskedDictObservation(satellites_v0.env(), flatten=True))`: RLlib's
  PettingZoo adapter over our AEC env, whose observations become ``{"observations": planes
  (flattened), "action_mask": float32 mask}``, the form RLlib's `ActionMaskingTorchRLModule`
  reads (it adds log(mask) to the logits, so an illegal action is never sampled).
* Shared-policy self-play: `policy_mapping_fn` maps `player_0` and `player_1` to the one module
  "shared"; each learns from its own turns (RLlib's multi-agent episodes keep the two apart).
* Illegal actions are counted twice: by a callback at the end of every training episode (our
  env ends a game on an illegal action and says so in `infos[agent]["illegal_action"]`), and in
  the evaluation games. Both must be 0.
* The trained module is saved with `save_to_path`; `rllib:PATH` plays it in `satellites
  evaluate` and anywhere an agent spec is taken.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from satellites_env import satellites_v0
from satellites_env.wrappers import MaskedDictObservation

ENV_NAME = "satellites_masked_dict"
POLICY = "shared"


def make_env(config: dict | None = None):
    """RLlib's multi-agent env over `satellites_v0` (registered under ENV_NAME)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    config = config or {}
    return PettingZooEnv(
        MaskedDictObservation(
            satellites_v0.env(max_moves=int(config.get("max_moves", 400))), flatten=True
        )
    )


def _callbacks_class():
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class IllegalActionCounter(RLlibCallback):
        """Counts finished training games and those that an illegal action ended."""

        def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
            infos = episode.get_infos(-1) if len(episode) else {}
            illegal = any("illegal_action" in (info or {}) for info in infos.values())
            metrics_logger.log_value("illegal_actions", int(illegal), reduce="sum")
            metrics_logger.log_value("games", 1, reduce="sum")

    return IllegalActionCounter


def build_config(
    seed: int, max_moves: int, batch: int, minibatch: int, epochs: int, hidden: int, lr: float
):
    """The PPOConfig: new API stack, one env runner in this process, one shared module."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return (
        PPOConfig()
        # RLlib's env check steps random actions of the whole action space: our env ends
        # such a game as illegal (with PettingZoo's warning). The callback counts the real ones.
        .environment(ENV_NAME, env_config={"max_moves": max_moves}, disable_env_checking=True)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .multi_agent(
            policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    POLICY: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={
                            "fcnet_hiddens": [hidden],
                            "head_fcnet_hiddens": [],
                            "vf_share_layers": True,
                        },
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr
        )
        .callbacks(_callbacks_class())
        .debugging(seed=seed)
    )


def play_against_random(module_path: Path, games: int, seed: int, max_moves: int) -> dict:
    """The saved module (as `rllib:PATH`) against `random` through `satellites_v0.env()`,
    colors alternating; counts results and illegal actions."""
    from satellites_env.agents import make_agent

    player = make_agent(f"rllib:{module_path}", seed=seed)
    rng = np.random.default_rng(seed)
    summary = {"wins": 0, "draws": 0, "losses": 0, "illegal_actions": 0}
    for g in range(games):
        env = satellites_v0.env(max_moves=max_moves)
        env.reset(seed=seed + g)
        ours = f"player_{g % 2}"
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                if agent == ours:
                    summary["illegal_actions"] += "illegal_action" in info
                    key = "wins" if reward > 0 else "losses" if reward < 0 else "draws"
                    summary[key] += 1
                env.step(None)
                continue
            if agent == ours:
                action = player.act(env.unwrapped.game)
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
    return summary


def main(
    total_steps: int = 20_000,
    seed: int = 0,
    max_moves: int = 400,
    batch: int = 2000,
    minibatch: int = 250,
    epochs: int = 2,
    hidden: int = 256,
    lr: float = 3e-4,
    eval_games: int = 10,
    save: str = "runs/rllib_module",
    num_cpus: int = 2,
    verbose: bool = True,
) -> dict:
    """Train until `total_steps` env steps were sampled, save the shared module to `save`,
    play `eval_games` against random; returns the counts (illegal actions must be 0)."""
    import ray
    from ray.tune.registry import register_env

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    register_env(ENV_NAME, make_env)
    algo = build_config(seed, max_moves, batch, minibatch, epochs, hidden, lr).build_algo()
    summary = {"train_steps": 0, "train_games": 0, "train_illegal_actions": 0, "iterations": 0}
    start = time.perf_counter()
    try:
        while summary["train_steps"] < total_steps:
            result = algo.train()
            runners = result["env_runners"]
            summary["iterations"] += 1
            summary["train_steps"] = int(result["num_env_steps_sampled_lifetime"])
            summary["train_games"] += int(runners.get("games", 0))
            summary["train_illegal_actions"] += int(runners.get("illegal_actions", 0))
            if verbose:
                print(
                    f"iteration {summary['iterations']}: {summary['train_steps']:,} env "
                    f"steps, {summary['train_games']} games, illegal actions "
                    f"{summary['train_illegal_actions']}",
                    flush=True,
                )
        path = Path(save)
        path.mkdir(parents=True, exist_ok=True)
        algo.get_module(POLICY).save_to_path(str(path.absolute()))
    finally:
        algo.stop()
        if started:
            ray.shutdown()
    summary["train_seconds"] = time.perf_counter() - start
    summary.update(play_against_random(path, eval_games, seed, max_moves))
    summary["module"] = str(path)
    if verbose:
        print(
            f"saved the shared module to {path} (agent spec rllib:{path}); against random: "
            f"{summary['wins']} won, {summary['draws']} drawn, {summary['losses']} lost, "
            f"{summary['illegal_actions']} illegal actions"
        )
    return summary


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--total-steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-moves", type=int, default=400)
    parser.add_argument("--batch", type=int, default=2000, help="env steps per PPO iteration")
    parser.add_argument("--minibatch", type=int, default=250)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--eval-games", type=int, default=10)
    parser.add_argument("--save", default="runs/rllib_module")
    parser.add_argument("--num-cpus", type=int, default=2)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(**vars(_parse_args()))
