"""`satellites ladder` and its steps (`add`, `run`, `rate`, `show`), each with its options and
its handler; the steps themselves are `satellites_env.ladder_view`'s, imported only when a
ladder command runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..placement import Placement
from ..terminal import CliError
from .options import (
    MAX_MOVES,
    SEED,
    WORKERS,
    Commands,
    add_force,
    add_ray_option,
    int_in,
    path_arg,
)


def add_ladder(sub: Commands) -> None:
    """`satellites ladder` and its steps."""
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
    la.set_defaults(run=add)
    lr.set_defaults(run=run)
    lq.set_defaults(run=rate)
    ls.set_defaults(run=show)


def add(args: argparse.Namespace) -> None:
    """`satellites ladder add`."""
    from .. import ladder_view

    ladder_view.add(args.db, args.specs, args.name, args.seed, args.max_moves)


def run(args: argparse.Namespace) -> None:
    """`satellites ladder run`."""
    from .. import ladder_view

    ladder_view.run(
        args.db, args.games_per_pair, Placement.of(args.workers, args.ray), args.allow_pickle
    )


def rate(args: argparse.Namespace) -> None:
    """`satellites ladder rate`."""
    from .. import ladder_view

    ladder_view.rate(
        args.db,
        args.spec,
        args.games,
        Placement.of(args.workers, args.ray),
        args.name,
        args.allow_pickle,
    )


def show(args: argparse.Namespace) -> None:
    """`satellites ladder show`."""
    from .. import ladder_view

    if args.json and args.csv:
        raise CliError("--json and --csv: choose one")
    ladder_view.show(args.db, args.html, args.json, args.csv, force=args.force)
