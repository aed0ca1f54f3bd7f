"""The trainer's commands: `train`, `exploit`, `sweep` and `config`, each with its options and
its handler. They run `satellites.commands` entry points of the `train` extra (PyTorch):
satellites_env imports no trainer code itself."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from ..core.batch import configure_threads
from ..placement import Placement
from ..terminal import console
from .options import (
    AGENT_SPECS,
    COMPILE_NOTE,
    GAMES,
    MAX_MOVES,
    MINUTES,
    SEED,
    Commands,
    add_ray_option,
    int_in,
    path_arg,
)

#: the commands that set the engine's threads themselves, once torch is imported
SETS_ITS_THREADS = ("train", "exploit", "sweep")

PICKLE_HELP = (
    "let the config's agent specs load pickled files (rllib:PATH, agents of "
    "other packages): a pickle can run any code, so only for a config and files "
    "you trust (a spec you type, as --target, is yours)"
)


def trainer_command(name: str) -> Callable:
    """The trainer's command `name` (an entry point of the `train` extra: satellites_env
    imports no trainer code itself)."""
    points = entry_points(group="satellites.commands", name=name)
    try:
        command: Callable = next(iter(points)).load()
    except (StopIteration, ImportError) as error:
        raise ValueError(
            f"`satellites {name}` needs the trainer: install the 'train' extra "
            f"(pip install 'satellites-env[train]'); "
            f"{error or 'not installed'}"
        ) from None
    return command


# --------------------------------------------------------------------------- train


def add_train(sub: Commands) -> None:
    """`satellites train`."""
    tr = sub.add_parser(
        "train",
        help="train a policy by self-play (the learner the config names: PPO or AlphaZero)",
        description="Train a policy by self-play: the learner the config names "
        "(PPO or AlphaZero), into a run folder that --resume continues. "
        "az_quick is the main job. " + COMPILE_NOTE,
    )
    tr.add_argument(
        "--config",
        required=True,
        metavar="NAME_OR_FILE",
        help="a shipped config's name (satellites config list) or a YAML file; a "
        "value with a / or ending in .yaml or .yml is a file, any other a shipped "
        "name",
    )
    tr.add_argument("--out", type=path_arg, help="run folder (default runs/<config name>)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out")
    add_ray_option(
        tr,
        "self-play in Ray actors (distributed.backend: ray): alone, a local Ray "
        "on this machine; with the address of a cluster started by `ray start "
        "--head` (or auto), join it",
    )
    tr.add_argument("--allow-pickle", action="store_true", help=PICKLE_HELP)
    tr.set_defaults(
        run=lambda args: train(args.config, args.out, args.resume, args.ray, args.allow_pickle)
    )


def train(
    config: str,
    out: Path | None,
    resume: bool,
    ray: str | None = None,
    allow_pickle: bool = False,
) -> None:
    """`satellites train`: the learner named by the config (needs the `train` extra); `ray`
    (a cluster address, or "" for a local Ray) runs self-play on Ray whatever the config says;
    `allow_pickle` lets the config's agent specs unpickle files."""
    command = trainer_command("train")  # imports torch before the engine's thread settings
    configure_threads()
    command(config, out, resume, console, ray=ray, allow_pickle=allow_pickle)


# --------------------------------------------------------------------------- exploit


def add_exploit(sub: Commands) -> None:
    """`satellites exploit`."""
    ex = sub.add_parser(
        "exploit",
        help="train an exploiter of a frozen agent (AlphaZero from "
        "the rules, every self-play game against it) and show what it found",
        description="Train an exploiter of a frozen agent for a time budget: "
        "AlphaZero from the rules (or from --init), every self-play game "
        "against the target, then a final table against it. " + COMPILE_NOTE,
    )
    ex.add_argument(
        "--target", required=True, metavar="SPEC", help=f"the agent to exploit: {AGENT_SPECS}"
    )
    ex.add_argument(
        "--minutes",
        type=MINUTES,
        required=True,
        help="the time budget in minutes of the whole run, final table included (summed "
        "over --resume sessions): training and its evaluations take up to 80%%, the final "
        "table the rest, its games cut where the time runs out",
    )
    ex.add_argument("--out", type=path_arg, help="run folder (default runs/exploit-<target>)")
    ex.add_argument(
        "--config",
        metavar="NAME_OR_FILE",
        help="an AlphaZero config: a shipped name or a YAML file, as in train (default exploit)",
    )
    ex.add_argument("--seed", type=SEED, help="the run's seed (default: the config's)")
    ex.add_argument(
        "--games",
        type=GAMES,
        default=200,
        help="final games against the target, per player (default 200)",
    )
    ex.add_argument(
        "--init",
        metavar="NETWORK",
        help="start from this network (a "
        "checkpoint file or pretrained) instead of a random one; the model is "
        "its shape",
    )
    ex.add_argument(
        "--victim-play",
        action="store_true",
        help="inside the exploiter's search, the target's moves follow the target's own "
        "network (A-MCTS-S; an az: target's raw policy); a target without a network is "
        "searched as without it (search.victim_play)",
    )
    ex.add_argument("--resume", action="store_true", help="continue the run in --out")
    add_ray_option(ex, "self-play in Ray actors, as in train")
    ex.add_argument("--allow-pickle", action="store_true", help=PICKLE_HELP)
    ex.set_defaults(
        run=lambda args: exploit(
            args.target,
            args.minutes,
            args.out,
            args.config,
            args.seed,
            args.games,
            args.resume,
            args.ray,
            args.init,
            args.victim_play,
            args.allow_pickle,
        )
    )


def exploit(
    target: str,
    minutes: float,
    out: Path | None,
    config: str | None,
    seed: int | None,
    games: int,
    resume: bool,
    ray: str | None = None,
    init: str | None = None,
    victim_play: bool = False,
    allow_pickle: bool = False,
) -> None:
    """`satellites exploit`: train an exploiter of the agent `target` for `minutes`, from a
    random network or from `init`, its search modelling the target by the target's network
    with `victim_play`; `allow_pickle` lets the config's agent specs unpickle files (the
    `train` extra; training/exploit.py)."""
    command = trainer_command("exploit")  # imports torch before the engine's thread settings
    configure_threads()
    command(
        target,
        minutes,
        out,
        config,
        seed,
        games,
        resume,
        console,
        ray=ray,
        init=init,
        victim_play=victim_play,
        allow_pickle=allow_pickle,
    )


# --------------------------------------------------------------------------- sweep


def add_sweep(sub: Commands) -> None:
    """`satellites sweep`."""
    sw = sub.add_parser(
        "sweep",
        help="train config variants over several seeds with one budget and compare them "
        "(paired intervals)",
        description="Train a grid of config variants (--set) over several seeds (--seeds), "
        "every trial with the same budget (--positions or --cpu-minutes), then play each "
        "final network against fixed opponents on fixed evaluation games and compare the "
        "arms to the first with paired 95%% intervals: a table, sweep.json and sweep.png in "
        "--out. Rerunning the same command continues; trials run one after another, or as "
        "Ray Tune trials with --ray (docs/training/sweep.md). " + COMPILE_NOTE,
    )
    sw.add_argument(
        "--config",
        required=True,
        metavar="NAME_OR_FILE",
        help="the base config: a shipped name or a YAML file, as in train",
    )
    sw.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE[,VALUE...]",
        help="an override of a dotted config key (replay.replay_ratio=4,6), each value an "
        "arm; several --set make a grid (the first arm takes every first value)",
    )
    sw.add_argument(
        "--seeds",
        nargs="+",
        default=["0-4"],
        metavar="SEEDS",
        help="training seeds of every arm: a range (0-4) or a list (0,1,2) (default 0-4)",
    )
    budget = sw.add_mutually_exclusive_group(required=True)
    budget.add_argument(
        "--positions",
        type=int_in(1, 10**12),
        help="the trials' length: the config's length key (total_positions; total_steps for PPO)",
    )
    budget.add_argument(
        "--cpu-minutes",
        type=MINUTES,
        help="the trials' budget in minutes of the training process's CPU time (all its "
        "threads), which a busy machine does not shrink as it does wall time",
    )
    sw.add_argument(
        "--player",
        default="az:PATH:32",
        metavar="SPEC",
        help="what plays the evaluation games, PATH standing for each trial's final "
        "network: az:PATH:N (its search) or checkpoint:PATH (its raw policy) (default "
        "az:PATH:32)",
    )
    sw.add_argument(
        "--against",
        nargs="+",
        metavar="SPEC=GAMES",
        help="the evaluation opponents and games against each, colours balanced (default "
        "greedy=200)",
    )
    sw.add_argument(
        "--eval-seed",
        type=SEED,
        default=1_000_000,
        help="the seed of the evaluation games: game i is the arena's game i of each "
        "pairing at this seed, for every trial (default 1000000)",
    )
    sw.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=400,
        help="move cap of the evaluation games (default 400)",
    )
    sw.add_argument("--out", type=path_arg, required=True, help="the sweep folder")
    add_ray_option(
        sw,
        "run the trials as Ray Tune trials: alone, on a local Ray; with an address, on "
        "that cluster (each trial asks for the cores its config uses)",
    )
    sw.set_defaults(run=sweep)


def sweep(args: argparse.Namespace) -> None:
    """`satellites sweep` (the `train` extra; training/sweep/)."""
    command = trainer_command("sweep")  # imports torch before the engine's thread settings
    configure_threads()
    command(
        args.config,
        args.sets,
        args.seeds,
        args.out,
        console,
        positions=args.positions,
        cpu_minutes=args.cpu_minutes,
        player=args.player,
        against=args.against,
        eval_seed=args.eval_seed,
        max_moves=args.max_moves,
        placement=Placement.of(1, args.ray),
    )


# --------------------------------------------------------------------------- config


def add_config(sub: Commands) -> None:
    """`satellites config list` and `satellites config show NAME`."""
    cf = sub.add_parser(
        "config",
        help="list the shipped training configs, or print one to "
        "copy and edit (needs the train extra)",
        description="The shipped training configs: `satellites config list` "
        "names each with its purpose; `satellites config show az_quick > "
        "my_run.yaml` copies one to edit, and `satellites train --config "
        "my_run.yaml` trains it.",
    )
    actions = cf.add_subparsers(dest="config_action", required=True, metavar="ACTION")
    actions.add_parser("list", help="each shipped config with its purpose")
    cs = actions.add_parser("show", help="print a shipped config (YAML), to copy and edit")
    cs.add_argument("name", metavar="NAME", help="the shipped config's name (config list)")
    cf.set_defaults(
        run=lambda args: trainer_command("config")(
            args.config_action, getattr(args, "name", None), console
        )
    )
