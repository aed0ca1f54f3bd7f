"""The `satellites` parser: the description, `--version`, and each command group's commands
(each group module defines its commands' options and handlers)."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from . import evaluation, games, ladder, training

DESCRIPTION = """\
Satellites, a two-player board game: its agents, tournaments, rating ladder, replays, a play
page, and (with the train extra) self-play training.

A bad argument, agent spec, record, config or output path ends with one `error: ...` line
and exit status 2; Ctrl-C ends with status 130 (SIGTERM 143, SIGHUP 129), keeping every
finished game. Output paths are checked before any game is
played, and a finished game or tournament is never lost: if writing it fails at the end, it
goes to a fresh file in the current folder (or the temporary folder) and the message says
where."""


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
    # the order of `satellites --help`
    for add in (
        training.add_train,
        training.add_exploit,
        training.add_sweep,
        training.add_config,
        evaluation.add_evaluate,
        games.add_play,
        games.add_serve,
        games.add_replay,
        evaluation.add_dataset,
        games.add_demo,
        ladder.add_ladder,
    ):
        add(sub)
    return parser
