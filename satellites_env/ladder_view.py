"""The ladder in the terminal: the steps of `satellites ladder` (add, run, rate, show).

Each opens the [`Ladder`][satellites_env.ladder.Ladder] database, does its step and prints
what it found: a line per agent added, a progress bar while games are played, and the
standings (a table and the head-to-head matrix, JSON, CSV, or an HTML leaderboard).
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from .core.board import DEFAULT_MAX_MOVES
from .core.checks import quoted_path
from .files import check_output_file, kind_at, refuse_folder_unless_ours
from .ladder import Ladder, RateResult
from .placement import Placement
from .terminal import CliError, console, plain, printable, progress_bar, say

#: the columns of `satellites ladder show --csv`
CSV_COLUMNS = ("rank", "name", "spec", "elo", "low", "high", "games", "score", "los_next")


def open_ladder(
    path: Path,
    create: bool,
    seed: int | None = None,
    max_moves: int | None = None,
    readonly: bool = False,
    allow_pickle: bool = False,
) -> Ladder:
    """The ladder database at `path`; CliError when `seed` or `max_moves` is given and differs
    from the ladder's own (its games are only comparable under one setting)."""
    ladder = Ladder(
        path,
        create=create,
        seed=0 if seed is None else seed,
        max_moves=DEFAULT_MAX_MOVES if max_moves is None else max_moves,
        readonly=readonly,
        allow_pickle=allow_pickle,
    )
    for option, asked, held in (
        ("--seed", seed, ladder.seed),
        ("--max-moves", max_moves, ladder.max_moves),
    ):
        if asked is not None and asked != held:
            ladder.close()
            raise CliError(
                f"the ladder {str(path)!r} was made with {option} {held}; its games "
                f"are only comparable under one setting"
            )
    return ladder


@contextmanager
def _playing(db: Path, allow_pickle: bool) -> Iterator[tuple[Ladder, Callable[..., None]]]:
    """The ladder at `db` and a progress bar's update (called with `completed`, `total`)."""
    with (
        open_ladder(db, create=False, allow_pickle=allow_pickle) as ladder,
        progress_bar("games", disable=not console.is_terminal) as progress,
    ):
        task = progress.add_task("games", total=None)
        yield ladder, lambda **fields: progress.update(task, **fields)


def add(
    db: Path,
    specs: list[str],
    name: str | None,
    seed: int | None = None,
    max_moves: int | None = None,
) -> None:
    """`satellites ladder add SPEC ...`: agents join the ladder (created if missing, with
    `seed` and `max_moves`)."""
    if name is not None and len(specs) != 1:
        raise CliError("--name names one agent: give one SPEC with it")
    with open_ladder(db, True, seed, max_moves) as ladder:
        for spec in specs:
            entry = ladder.add(spec, name=name)
            held = (
                ""
                if name is None or entry.name == name
                else f" already, by this name (--name {name} left unused)"
            )
            say(f"{entry.name}: on the ladder{held}, identity {entry.key[:60]}")


def run(db: Path, games: int, placement: Placement, allow_pickle: bool = False) -> None:
    """`satellites ladder run`: play every game the ladder's pairs still lack (at
    `placement`), then show the standings."""
    with _playing(db, allow_pickle) as (ladder, update):
        stored = ladder.run(
            games, placement, lambda done, total: update(completed=done, total=total)
        )
    say(f"{stored} games played and stored in {db}")
    show(db, None, False, False)


def rate(
    db: Path,
    spec: str,
    games: int,
    placement: Placement,
    name: str | None,
    allow_pickle: bool = False,
) -> None:
    """`satellites ladder rate SPEC`: one agent's rating against the ladder's fixed ratings
    (its games at `placement`)."""
    with _playing(db, allow_pickle) as (ladder, update):
        result = ladder.rate(
            spec,
            games,
            placement,
            lambda done, total: update(completed=done, total=total),
            name=name,
        )
    console.print(rating_table(result))


def rating_table(result: RateResult) -> Table:
    """An agent's rating with its 95% interval, and its games against each opponent."""
    table = Table(
        title=plain(
            f"{result.name}: Elo {result.elo:+.0f} "
            f"[{result.low:+.0f}, {result.high:+.0f}] (95%), against the "
            f"ladder's fixed ratings"
        )
    )
    table.add_column("opponent")
    table.add_column("games", justify="right")
    for opponent, count in result.games.items():
        table.add_row(plain(opponent), str(count))
    return table


def show(db: Path, html: Path | None, as_json: bool, as_csv: bool, force: bool = False) -> None:
    """`satellites ladder show`: the ratings, intervals, games and head-to-head matrix (a
    table, JSON, CSV of the ratings, or an HTML leaderboard). The database is opened for
    reading only."""
    from .web.leaderboard import standings, write_leaderboard

    if html is not None:
        if html.exists() and not html.is_dir():
            raise CliError(
                f"--html {quoted_path(html)} is {kind_at(html)}; give a folder for the "
                f"leaderboard page"
            )
        check_output_file(html / "index.html", "--html", "index.html", "html", force)
        refuse_folder_unless_ours(html, "--html", "index.html", "html", force)
    with open_ladder(db, create=False, readonly=True) as ladder:
        table = standings(ladder)
        if html is not None:
            index = write_leaderboard(ladder, html)
            say(f"leaderboard: {index}")
    if as_json:
        print(json.dumps(table, indent=1, allow_nan=False))
    elif as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows(  # a name or spec from the database is shown escaped (`printable`)
            [
                "" if row[c] is None else printable(row[c]) if isinstance(row[c], str) else row[c]
                for c in CSV_COLUMNS
            ]
            for row in table["agents"]
        )
    else:
        console.print(standings_table(table, db))
        if len(table["agents"]) > 1:
            console.print(head_to_head_table(table))


def standings_table(table: dict[str, Any], db: Path) -> Table:
    """The ratings of [`standings`][satellites_env.web.leaderboard.standings] `table`: rank,
    Elo with its 95% interval, games, score and the likelihood of superiority over the next
    (an unrated agent: "unrated", and none of them)."""
    from .rating import anchor_text

    out = Table(
        title=plain(
            f"Ladder {db}: {table['games']} games, Elo "
            f"{anchor_text(table['anchor'], table['anchor_elo'])}, "
            f"95% intervals"
        )
    )
    for column in ("#", "agent", "Elo", "95% interval", "games", "score", "LOS next"):
        out.add_column(column, justify="left" if column == "agent" else "right")
    for row in table["agents"]:
        rated = row["elo"] is not None  # else no chain of games links it to the anchor
        out.add_row(
            str(row["rank"]) if rated else "",
            plain(row["name"]),
            f"{row['elo']:+.0f}" if rated else "unrated",
            f"[{row['low']:+.0f}, {row['high']:+.0f}]" if rated else "",
            str(row["games"]),
            "" if row["score"] is None else f"{100 * row['score']:.1f}%",
            "" if row["los_next"] is None else f"{100 * row['los_next']:.1f}%",
        )
    return out


def head_to_head_table(table: dict[str, Any]) -> Table:
    """The head-to-head matrix of [`standings`][satellites_env.web.leaderboard.standings]
    `table`: each row's score against each column, in %."""
    names = [row["name"] for row in table["agents"]]
    matrix = Table(title=Text("Head to head: the row's score against the column (by rank), in %"))
    matrix.add_column("agent")
    for rank in range(1, len(names) + 1):
        matrix.add_column(str(rank), justify="right")
    for rank, a in enumerate(names, start=1):
        cells = [table["matrix"].get(a, {}).get(b) for b in names]
        scores = ("" if c is None else f"{100 * c['score'] / c['games']:.0f}" for c in cells)
        matrix.add_row(plain(f"{rank} {a}"), *scores)
    return matrix
