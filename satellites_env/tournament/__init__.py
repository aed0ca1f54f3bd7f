"""Tournaments that are saved, resumed and never lost: the arena's round robin with its files.

[`play`][satellites_env.tournament.play] runs
[`run_tournament`][satellites_env.arena.run_tournament] and saves what it played to a results
file (`out`, JSON: the `as_dict` of the result) and a records folder (`records`: every game's
record and replay page, `tournament.json` and `index.html`); `satellites evaluate` is this
function with a progress bar and tables. The guarantees:

* Outputs are checked before any game is played, and written by the rules of
  `satellites_env.files` (renamed into place; never a folder, a special
  file or a symbolic link). A finished result that still cannot be written goes to a fresh
  file (or folder) in the current folder, else the temp folder, and the error says where.
* Ctrl-C keeps every finished game: `out` gets the results so far (`"complete": false`) and
  `records` their records, manifest and index. The same call continues the tournament,
  playing only the games missing: from the records folder when there is one (each record
  replayed), else from `out`, whose summaries are checked for form and schedule only. A
  Ctrl-C after the last game waits until every result is written.
* The records folder is new or empty, or holds the unfinished tournament of the same
  settings; anything else is refused, so that every record in it belongs to one tournament.

Messages name the outputs by the command line's options (`--out`, `--records`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..arena import TournamentInterrupted, TournamentResult, run_tournament, schedule
from ..core.board import DEFAULT_MAX_MOVES
from ..placement import Placement
from ..record import GameRecord
from ..stops import HoldCtrlC
from .continuing import (
    check_records_folder,
    finished_records,
    finished_results,
    resume,
)
from .outputs import INDEX, MANIFEST, Reporter, TournamentError, record_name, replay_name
from .saving import save_records, save_results, write_pages, write_records, write_replays

__all__ = [
    "INDEX",
    "MANIFEST",
    "HoldCtrlC",
    "Reporter",
    "TournamentError",
    "check_records_folder",
    "finished_records",
    "finished_results",
    "play",
    "record_name",
    "replay_name",
    "resume",
    "save_records",
    "save_results",
    "write_pages",
    "write_records",
    "write_replays",
]

# --------------------------------------------------------------------------- playing


def play(
    agents: list[str],
    games: int,
    seed: int = 0,
    placement: Placement | None = None,
    max_moves: int = DEFAULT_MAX_MOVES,
    *,
    out: Path | None = None,
    records: Path | None = None,
    reporter: Reporter | None = None,
    finished: Mapping[int, GameRecord | dict] | None = None,
    force: bool = False,
) -> TournamentResult:
    """Play a round robin, continuing the unfinished one in its outputs, and save it.

    Args:
        agents: Agent specs (at least 2, distinct).
        games: Games per pairing.
        seed: The tournament's seed (see [`arena`][satellites_env.arena]).
        placement: Where the games run (default this process; worker processes or Ray
            actors: the same results).
        max_moves: The move cap of every game.
        out: The results file (JSON), if any.
        records: The records folder, if any.
        reporter: Told of progress and of what is written (`Reporter`).
        finished: Games already played, by schedule index (a record, or a summary as
            `TournamentResult.game_summaries` gives it), e.g. those of a
            `TournamentInterrupted`'s result; None: those kept in the outputs (`resume`).
            The outputs are checked either way.
        force: Replace an `out` file that is not a results file of ours.

    Returns:
        The tournament's result.

    Raises:
        OutputError: An output refused before any game is played.
        TournamentError: Outputs that hold another tournament; or, at the end, an output
            that could only be written elsewhere (the message says where).
        TournamentInterrupted: Ctrl-C, once every finished game is saved (its `result`).
    """
    reporter = reporter or Reporter()
    held = resume(agents, games, seed, max_moves, out, records, reporter.message, force)
    finished = held if finished is None else dict(finished)
    total = len(schedule(agents, games, seed)) if len(agents) >= 2 else 0
    if finished:
        reporter.message(
            f"continuing the unfinished tournament in {records or out}: "
            f"{len(finished)} of {total} games finished, "
            f"{total - len(finished)} to play"
        )
    ctrl_c = HoldCtrlC()

    def progress(done: int, total: int) -> None:
        reporter.games(done, total)
        if done == total:  # from the last game on, Ctrl-C waits for the files
            ctrl_c.hold()

    try:
        with ctrl_c:
            try:
                result = run_tournament(
                    agents,
                    games,
                    seed,
                    placement,
                    max_moves,
                    progress=progress,
                    finished=finished,
                )
            except TournamentInterrupted as stop:
                _keep_interrupted(stop.result, out, records, reporter)
                raise TournamentInterrupted(stop.result) from None
            ctrl_c.hold()
            reporter.ended(result)
            problems, manifest = save_results(result, out, records, reporter.message)
    except KeyboardInterrupt:
        if ctrl_c.caught:
            reporter.message(
                "interrupted after the last game; every result is saved"
                + (
                    f", and the same command writes the replay pages in {records}/"
                    if records
                    else ""
                )
            )
        raise
    problems += write_pages(result, records, manifest, reporter)
    if problems:
        raise TournamentError("; ".join(problems))
    return result


def _keep_interrupted(
    result: TournamentResult, out: Path | None, records: Path | None, reporter: Reporter
) -> None:
    """Ctrl-C: report and write the games finished, and say how to continue."""
    played, total = len(result.finished), len(result.records)
    with HoldCtrlC(held=True):  # a second Ctrl-C must not lose what the first one kept
        reporter.ended(result)
        if not (out or records):
            reporter.message(
                f"interrupted after {played} of {total} games; nothing kept (give "
                f"--out or --records to keep the finished games and continue "
                f"later)"
            )
            return
        problems, manifest = save_results(result, out, records, reporter.message)
    problems += write_pages(result, records, manifest, reporter)
    for problem in problems:
        reporter.problem(problem)
    reporter.message(
        f"interrupted after {played} of {total} games: the same command "
        f"continues the tournament, playing the {total - played} missing"
    )
