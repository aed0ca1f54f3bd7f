"""The `satellites` command line: train, exploit, sweep, evaluate, ladder, play, serve, replay,
demo, dataset.

This module parses the arguments and hands each command to its home: `evaluate` to
`satellites_env.tournament` (shown by `satellites_env.tournament_view`), `ladder` to
`satellites_env.ladder_view`, `play`, `demo` and `replay` to `satellites_env.terminal_game`,
`dataset` to `satellites_env.dataset` (the `minari` extra);
the console and key presses are `satellites_env.terminal`'s. `train`, `exploit` and `sweep` run the
trainer's commands (`satellites.commands` entry points of the `train` extra, PyTorch) and
`serve` the web server (Starlette, uvicorn); everything else is torch-free.

Errors and guarantees: a bad argument, agent spec, record, position, config, checkpoint or
output path ends with one `error: ...` line and exit status 2 (never a traceback); Ctrl-C
ends with status 130, and SIGTERM (143) and SIGHUP (129) take the same path, as does a worker
process that dies (status 1). Output paths are checked before any game is played, and a finished
game or tournament is never lost: if writing it still fails at the end, it goes to a fresh
file in the current folder (or the temp folder) and the message says where. Ctrl-C during
`evaluate` writes every finished game (`--out` marked incomplete, `--records`) before it
exits 130, and the same command continues the tournament (`satellites_env.tournament`).
Outputs are renamed into place and never replace a folder, a special file (FIFO, device,
socket) or a symbolic link (`satellites_env.files`).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from . import tournament
from .arena import TournamentResult
from .core.batch import configure_threads
from .core.board import DEFAULT_MAX_MOVES
from .stops import exit_status, stop_reason, stop_signals
from .terminal import CliError, console, errors, printable, progress_bar, say
from .terminal_game import demo, play, replay
from .tournament_view import TournamentView

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


# --------------------------------------------------------------------------- argument types


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high` (argparse names the option)."""

    def parse(text: str) -> int:
        value = None
        if text.strip().lstrip("+-").isascii() and text.strip().lstrip("+-").isdigit():
            value = int(text)
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r}"
            )
        return value

    return parse


def float_in(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number with low < value <= high."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and low < value <= high):
            raise argparse.ArgumentTypeError(
                f"expected a number greater than {low:g} and at most {high:g}, got {text!r}"
            )
        return value

    return parse


def ray_address(text: str) -> str:
    """An argparse type: a Ray address (`auto`, `HOST:PORT`, `ray://HOST:PORT`); "" (what
    `--ray` alone gives) starts a local Ray."""
    if text == "":
        return text
    text = text.strip()
    if not text or any(c.isspace() or not c.isprintable() for c in text) or len(text) > 300:
        raise argparse.ArgumentTypeError(
            f"expected a Ray cluster address such as auto or 127.0.0.1:6379, got {text!r}"
        )
    return text


def path_arg(text: str) -> Path:
    """An argparse type: a file or folder path; an empty one (which would mean the current
    folder) is refused."""
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return Path(text)


def add_ray_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--ray [ADDRESS]`: alone, "" (a local Ray); with an address, that cluster."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        type=ray_address,
        help=help_text,
    )


def add_force(parser: argparse.ArgumentParser, outputs: str) -> None:
    """`--force`: replace `outputs` even when satellites did not write what is there."""
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"replace {outputs} even when it is a file (or folder) that satellites did not "
        "write; without it, only new paths and satellites' own outputs are replaced",
    )


GAMES = int_in(1, 1_000_000)
SEED = int_in(0, 2**32 - 1)
WORKERS = int_in(1, 256)
MAX_MOVES = int_in(1, 1_000_000)
FRAME_SIZE = int_in(64, 4096)


def FPS(text: str) -> float:
    """An argparse type: a GIF frame rate, MIN_FPS to MAX_FPS (render.files)."""
    from .render.files import check_fps

    try:
        return check_fps(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            "expected " + str(error).removeprefix("fps must be ")
        ) from None


PORT = int_in(0, 65535)
MINUTES = float_in(0, 10**6)


def add_seed(parser: argparse.ArgumentParser, of: str) -> None:
    """`--seed`, default 0: the seed `of` what (for the help)."""
    parser.add_argument(
        "--seed", type=SEED, default=0, help=f"seed of {of}, 0-4294967295 (default 0)"
    )


def add_max_moves(parser: argparse.ArgumentParser) -> None:
    """`--max-moves`, the move cap (R20), default DEFAULT_MAX_MOVES."""
    parser.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=DEFAULT_MAX_MOVES,
        help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})",
    )


# --------------------------------------------------------------------------- evaluate


MANIFEST, INDEX = tournament.MANIFEST, tournament.INDEX


def evaluate(
    specs: list[str],
    games: int,
    seed: int,
    workers: int,
    out: Path | None,
    records: Path | None,
    max_moves: int,
    ray: str | None = None,
    force: bool = False,
) -> TournamentResult:
    """`satellites evaluate` ([`tournament.play`][satellites_env.tournament.play] with
    progress bars and tables); `ray` None: this machine's processes, "" a local Ray, else
    the address of a Ray cluster (the games run in `workers` actors, with the same results).
    With `out` or `records`, Ctrl-C keeps every finished game there, and the same command
    continues the tournament."""
    shown = TournamentView(f"{games} games per pairing, seed {seed}")
    try:
        return tournament.play(
            specs,
            games,
            seed,
            workers,
            max_moves,
            out=out,
            records=records,
            ray=ray is not None,
            ray_address=ray or None,
            reporter=shown,
            force=force,
        )
    finally:
        shown.close()


# --------------------------------------------------------------------------- serve


def serve(opponent: str, host: str, port: int, max_moves: int, open_browser: bool) -> None:
    """`satellites serve`: the play page on http://HOST:PORT/ until Ctrl-C."""
    try:
        from .web.server import serve as run_server
    except ImportError as error:
        raise CliError(
            "`satellites serve` needs the 'web' extra (Starlette and uvicorn): "
            f"pip install 'satellites-env[web]'; import failed: {error}"
        ) from None

    def announce(url: str) -> None:
        say(
            f"playing against {opponent} at {url}  (each browser tab plays its own game; "
            f"Ctrl-C stops)"
        )
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    run_server(opponent, host, port, max_moves, announce=announce)


# --------------------------------------------------------------------------- dataset


def dataset(
    dataset_id: str,
    agent: str,
    opponent: str,
    games: int,
    seat: str,
    seed: int,
    max_moves: int,
    root: Path | None,
) -> None:
    """`satellites dataset`: record games of `agent` as a Minari data set (the `minari` extra)."""
    try:
        from .dataset import check_new_dataset, record_dataset

        check_new_dataset(dataset_id, root)  # before the bar: a refusal plays no game
    except ImportError as error:
        raise CliError(
            "`satellites dataset` needs the 'minari' extra: pip install "
            f"'satellites-env[minari]'; import failed: {error}"
        ) from None
    started = time.monotonic()
    with progress_bar() as progress:
        task = progress.add_task(f"{agent} vs {opponent}", total=games)
        written = record_dataset(
            dataset_id,
            agent,
            opponent,
            games,
            seat=seat,
            seed=seed,
            max_moves=max_moves,
            root=root,
            on_game=lambda done, total: progress.update(task, completed=done),
        )
    table = Table(title=f"Minari data set {dataset_id}")
    for column in ("episodes", "steps", "mean return", "seconds", "stored in"):
        table.add_column(column)
    returns = [float(episode.rewards.sum()) for episode in written.iterate_episodes()]
    table.add_row(
        str(written.total_episodes),
        str(written.total_steps),
        f"{sum(returns) / len(returns):+.3f}",
        f"{time.monotonic() - started:.0f}",
        str(written.storage.data_path.parent),
    )
    console.print(table)


# --------------------------------------------------------------------------- train


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


def sweep(args: argparse.Namespace) -> None:
    """`satellites sweep` (the `train` extra; training/sweep.py)."""
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
        ray=args.ray,
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


DESCRIPTION = """\
Satellites, a two-player board game: its agents, tournaments, rating ladder, replays, a play
page, and (with the train extra) self-play training.

A bad argument, agent spec, record, config or output path ends with one `error: ...` line
and exit status 2; Ctrl-C ends with status 130 (SIGTERM 143, SIGHUP 129), keeping every
finished game. Output paths are checked before any game is
played, and a finished game or tournament is never lost: if writing it fails at the end, it
goes to a fresh file in the current folder (or the temporary folder) and the message says
where."""

COMPILE_NOTE = (
    "The search kernels are compiled on first use, then cached for later runs (the times: "
    "the README's table of times)."
)
AGENT_SPECS = (
    "random, greedy, mcts:N, openspiel-mcts:N, checkpoint:PATH, az:PATH[:SIMS], rllib:PATH"
)


def package_version() -> str:
    """The installed version of the `satellites-env` distribution."""
    try:
        return version("satellites-env")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The parser of every `satellites` command; every option has its help."""
    parser = argparse.ArgumentParser(
        prog="satellites",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"satellites-env {package_version()}",
        help="print the installed version and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    for command in (tr, ex):
        command.add_argument(
            "--allow-pickle",
            action="store_true",
            help="let the config's agent specs load pickled files (rllib:PATH, agents of "
            "other packages): a pickle can run any code, so only for a config and files "
            "you trust (a spec you type, as --target, is yours)",
        )

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

    ev = sub.add_parser(
        "evaluate",
        help="round-robin tournament between agents",
        description="A round-robin tournament between agents, colours "
        "balanced: win rates with 95%% intervals and Elo. The search of az: "
        "agents is compiled on first use, then cached for later runs (the times: "
        "the README's table of times).",
    )
    ev.add_argument(
        "--agents", nargs="+", required=True, metavar="SPEC", help=f"agent specs: {AGENT_SPECS}"
    )
    ev.add_argument(
        "--games",
        type=GAMES,
        default=100,
        help="games per pairing, 1-1000000 (colours balanced; default 100)",
    )
    add_seed(ev, "the set-ups and agents")
    ev.add_argument(
        "--workers",
        type=WORKERS,
        default=1,
        help="games in parallel, 1-256: processes (Ray actors with --ray), one "
        "CPU thread each; at most one per core pays off (default 1)",
    )
    add_max_moves(ev)
    add_ray_option(
        ev,
        "play the games in --workers Ray actors: alone, a local Ray; with an "
        "address, that cluster (the same results as without)",
    )
    ev.add_argument(
        "--out",
        type=path_arg,
        help="write the results as JSON to this file (checked "
        'before the first game; winners are "red", "blue" or null). Ctrl-C '
        'writes the games finished, marked "complete": false, and the same '
        "command continues the tournament",
    )
    ev.add_argument(
        "--records",
        type=path_arg,
        help="save every game record and its HTML replay in this folder, which "
        f"must be new or empty (a non-empty one is refused, except the folder of "
        f"this command stopped by Ctrl-C, which it continues), with {MANIFEST} "
        f"(the results, and which record is which game) and {INDEX} (every game, "
        "linked to its replay)",
    )
    add_force(ev, "--out")

    pl = sub.add_parser("play", help="play a game in the terminal against an agent")
    pl.add_argument(
        "--opponent", default="mcts:200", metavar="SPEC", help="agent spec (default mcts:200)"
    )
    pl.add_argument(
        "--color",
        "--colour",
        dest="color",
        choices=("red", "blue"),
        default="red",
        help="your colour; red moves first (default red)",
    )
    add_seed(pl, "the set-up and the agent")
    pl.add_argument(
        "--render",
        choices=("ansi", "human"),
        default="ansi",
        help="ansi: boards in the terminal; human: also a window (default ansi)",
    )
    add_max_moves(pl)
    pl.add_argument(
        "--save",
        type=path_arg,
        help="save the game record (JSON) to this file, "
        "however the game stops (checked before the game)",
    )
    add_force(pl, "--save")

    sv = sub.add_parser("serve", help="play against an agent in the browser (a local page)")
    sv.add_argument(
        "--opponent", default="mcts:200", metavar="SPEC", help="agent spec (default mcts:200)"
    )
    sv.add_argument(
        "--port", type=PORT, default=8000, help="port, 0-65535; 0 picks a free one (default 8000)"
    )
    sv.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; "
        "0.0.0.0 or :: for every address; an empty one is refused)",
    )
    add_max_moves(sv)
    sv.add_argument("--open", action="store_true", help="open the page in the web browser")

    rp = sub.add_parser("replay", help="show a saved game: HTML page, GIF or boards")
    rp.add_argument("record", type=path_arg, help="a game record (.json)")
    rp.add_argument("--html", type=path_arg, help="write a self-contained HTML replay page")
    rp.add_argument("--gif", type=path_arg, help="write an animated GIF")
    rp.add_argument(
        "--boards",
        action="store_true",
        help="print every board at once (without --gif or --html, a terminal "
        "steps through the game on key presses instead)",
    )
    rp.add_argument(
        "--frame-size",
        type=FRAME_SIZE,
        default=480,
        help="GIF frame size in pixels, 64-4096 (default 480)",
    )
    rp.add_argument(
        "--fps",
        type=FPS,
        default=2.0,
        help="GIF frames per second, 0.1 to 50 (default 2); a frame lasts a whole "
        "number of hundredths of a second, so rates are rounded to 100/n",
    )
    add_force(rp, "--html and --gif")

    ds = sub.add_parser(
        "dataset",
        help="record an agent's games as a Minari data set (the minari extra)",
        description="Play --games games of --agent against --opponent through the Gymnasium "
        "env and write them as a Minari data set: observations (planes and action mask), "
        "actions, rewards, and the agents in its metadata. Data sets go where Minari keeps "
        "them (MINARI_DATASETS_PATH, else ~/.minari/datasets) unless --root says; an "
        "existing data set is never overwritten.",
    )
    ds.add_argument("id", metavar="ID", help="the data set id, namespace/name-vN (Minari's form)")
    ds.add_argument("--agent", required=True, metavar="SPEC", help="the recorded agent's spec")
    ds.add_argument(
        "--opponent", default="random", metavar="SPEC", help="the opponent's spec (default random)"
    )
    ds.add_argument("--games", type=GAMES, default=100, help="games, 1-1000000 (default 100)")
    ds.add_argument(
        "--seat",
        choices=("red", "blue", "both"),
        default="both",
        help="the recorded agent's colour; both alternates it game by game (default)",
    )
    add_seed(ds, "the first game (game i uses seed + i)")
    add_max_moves(ds)
    ds.add_argument(
        "--root",
        type=path_arg,
        default=None,
        help="the folder of data sets (sets MINARI_DATASETS_PATH for this command)",
    )

    dm = sub.add_parser("demo", help="play and render one game between two agents")
    add_seed(dm, "the set-up and the agents")
    add_max_moves(dm)
    dm.add_argument("--gif", type=path_arg, default=None, help="save the game as an animated GIF")
    dm.add_argument(
        "--frame-size",
        type=FRAME_SIZE,
        default=400,
        help="GIF frame size in pixels, 64-4096 (default 400)",
    )
    dm.add_argument(
        "--red", default="greedy", metavar="SPEC", help="agent spec playing red (default greedy)"
    )
    dm.add_argument(
        "--blue", default="random", metavar="SPEC", help="agent spec playing blue (default random)"
    )
    add_force(dm, "--gif")

    ld = sub.add_parser(
        "ladder", help="a rating ladder: every game in a database, ratings with 95%% intervals"
    )
    steps = ld.add_subparsers(dest="ladder", required=True, metavar="STEP")
    db_help = "the ladder's database (default ladder.db)"
    la = steps.add_parser("add", help="add agents to the ladder (it is created if missing)")
    la.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs")
    la.add_argument("--name", help="the agent's name on the ladder (one SPEC; default: SPEC)")
    la.add_argument(
        "--seed",
        type=SEED,
        help="a new ladder's seed: every game's set-up follows from it and the pair (default 0)",
    )
    la.add_argument(
        "--max-moves", type=MAX_MOVES, help="a new ladder's move cap per game (default 400, R20)"
    )
    lr = steps.add_parser("run", help="play the games each pair of agents still lacks")
    lr.add_argument(
        "--games-per-pair",
        type=int_in(1, 100_000),
        default=20,
        help="games per pair of agents, colours balanced (default 20)",
    )
    lq = steps.add_parser("rate", help="rate one agent against the ladder's fixed ratings")
    lq.add_argument("spec", metavar="SPEC", help="the agent spec to rate")
    lq.add_argument(
        "--games", type=int_in(2, 100_000), default=200, help="games to play (default 200)"
    )
    lq.add_argument("--name", help="its name in the database (default: SPEC)")
    for command in (lr, lq):
        command.add_argument(
            "--allow-pickle",
            action="store_true",
            help="let the database's agent specs load pickled files "
            "(rllib:PATH, agents of other packages): a pickle can run any "
            "code, so only for a database and files you trust",
        )
        command.add_argument(
            "--workers",
            type=WORKERS,
            default=1,
            help="games in parallel (processes, or Ray actors with --ray; default 1)",
        )
        add_ray_option(
            command, "play the games in Ray actors (a local Ray, or the cluster at ADDRESS)"
        )
    ls = steps.add_parser("show", help="the ratings, intervals, games and head-to-head matrix")
    ls.add_argument(
        "--html",
        type=path_arg,
        help="write the leaderboard page (and every game's replay) into this folder",
    )
    ls.add_argument("--json", action="store_true", help="print the table as JSON")
    ls.add_argument("--csv", action="store_true", help="print the ratings as CSV")
    add_force(ls, "the --html folder's pages")
    for command in (la, lr, lq, ls):
        command.add_argument("--db", type=path_arg, default=Path("ladder.db"), help=db_help)
    return parser


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename!r}" if error.filename else ""
        return f"{error.strerror}{where}"
    return str(error) or type(error).__name__


def run_command(args: argparse.Namespace) -> None:
    if args.command not in ("train", "exploit", "sweep"):  # those set it once torch is in
        configure_threads()
    if args.command == "train":
        train(args.config, args.out, args.resume, args.ray, args.allow_pickle)
    elif args.command == "sweep":
        sweep(args)
    elif args.command == "exploit":
        exploit(
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
    elif args.command == "config":
        trainer_command("config")(args.config_action, getattr(args, "name", None), console)
    elif args.command == "evaluate":
        evaluate(
            args.agents,
            args.games,
            args.seed,
            args.workers,
            args.out,
            args.records,
            args.max_moves,
            args.ray,
            args.force,
        )
    elif args.command == "play":
        play(
            args.opponent,
            args.color,
            args.seed,
            args.render,
            args.max_moves,
            args.save,
            force=args.force,
        )
    elif args.command == "serve":
        serve(args.opponent, args.host, args.port, args.max_moves, args.open)
    elif args.command == "replay":
        replay(
            args.record,
            args.gif,
            args.boards,
            args.frame_size,
            args.fps,
            args.html,
            force=args.force,
        )
    elif args.command == "dataset":
        dataset(
            args.id,
            args.agent,
            args.opponent,
            args.games,
            args.seat,
            args.seed,
            args.max_moves,
            args.root,
        )
    elif args.command == "demo":
        demo(
            args.seed,
            args.max_moves,
            args.gif,
            args.frame_size,
            args.red,
            args.blue,
            force=args.force,
        )
    elif args.command == "ladder":
        from . import ladder_view

        if args.ladder == "add":
            ladder_view.add(args.db, args.specs, args.name, args.seed, args.max_moves)
        elif args.ladder == "run":
            ladder_view.run(args.db, args.games_per_pair, args.workers, args.ray, args.allow_pickle)
        elif args.ladder == "rate":
            ladder_view.rate(
                args.db, args.spec, args.games, args.workers, args.ray, args.name, args.allow_pickle
            )
        else:
            if args.json and args.csv:
                raise CliError("--json and --csv: choose one")
            ladder_view.show(args.db, args.html, args.json, args.csv, force=args.force)


#: the exit status of a command whose output's reader went away (128 + SIGPIPE, as the shell
#: reports a tool that SIGPIPE ended)
EXIT_BROKEN_PIPE = 141


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush finds no broken pipe
    (Python's documented way to leave quietly after a BrokenPipeError)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced (tests) or already closed
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command; the exit status: 0 done, 2 a user error (one `error: ...` line),
    128 + the signal when stopped by one (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP: what finished
    is kept, `satellites_env.stops`), 1 a worker process that died (what finished is kept)
    or an internal error (a bug: set SATELLITES_TRACEBACK=1 to see it)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit:  # --help, or argparse's usage error (it printed why)
        return exit.code if isinstance(exit.code, int) else EXIT_ERROR if exit.code else 0
    try:
        with stop_signals():
            run_command(args)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP or a dead worker: what finished is kept
        errors.print(stop_reason(), markup=False, highlight=False)
        return exit_status()
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, as Unix tools do
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, OSError) as error:  # user errors: spec, record, SPN, config, paths...
        errors.print(f"[red]error:[/red] {escape(printable(_describe(error)))}")
        return EXIT_ERROR
    except Exception as error:
        if os.environ.get("SATELLITES_TRACEBACK"):
            raise
        errors.print(
            f"[red]internal error:[/red] {type(error).__name__}: "
            f"{escape(printable(error))} (please report it; SATELLITES_TRACEBACK=1 shows "
            f"the traceback)"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
