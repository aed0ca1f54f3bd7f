"""`satellites evaluate` (a tournament, `satellites_env.tournament`, shown by
`satellites_env.tournament_view`) and `satellites dataset` (games as a Minari data set,
`satellites_env.dataset`), each with its options and its handler."""

from __future__ import annotations

import time
from pathlib import Path

from rich.table import Table

from .. import tournament
from ..arena import TournamentResult
from ..placement import Placement
from ..terminal import CliError, console, progress_bar
from ..tournament_view import TournamentView
from .options import (
    AGENT_SPECS,
    GAMES,
    WORKERS,
    Commands,
    add_force,
    add_max_moves,
    add_ray_option,
    add_seed,
    path_arg,
)

MANIFEST, INDEX = tournament.MANIFEST, tournament.INDEX

# --------------------------------------------------------------------------- evaluate


def add_evaluate(sub: Commands) -> None:
    """`satellites evaluate`."""
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
    ev.set_defaults(
        run=lambda args: evaluate(
            args.agents,
            args.games,
            args.seed,
            Placement.of(args.workers, args.ray),
            args.out,
            args.records,
            args.max_moves,
            args.force,
        )
    )


def evaluate(
    specs: list[str],
    games: int,
    seed: int,
    placement: Placement,
    out: Path | None,
    records: Path | None,
    max_moves: int,
    force: bool = False,
) -> TournamentResult:
    """`satellites evaluate` ([`tournament.play`][satellites_env.tournament.play] with
    progress bars and tables), its games at `placement` (`--workers` and `--ray`: the same
    results wherever they run).
    With `out` or `records`, Ctrl-C keeps every finished game there, and the same command
    continues the tournament."""
    shown = TournamentView(f"{games} games per pairing, seed {seed}")
    try:
        return tournament.play(
            specs,
            games,
            seed,
            placement,
            max_moves,
            out=out,
            records=records,
            reporter=shown,
            force=force,
        )
    finally:
        shown.close()


# --------------------------------------------------------------------------- dataset


def add_dataset(sub: Commands) -> None:
    """`satellites dataset`."""
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
    ds.set_defaults(
        run=lambda args: dataset(
            args.id,
            args.agent,
            args.opponent,
            args.games,
            args.seat,
            args.seed,
            args.max_moves,
            args.root,
        )
    )


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
        from ..dataset import check_new_dataset, record_dataset

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
