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

import json
import signal
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from .arena import (
    TournamentInterrupted,
    TournamentResult,
    check_summary,
    colors_of,
    run_tournament,
    schedule,
)
from .core.board import DEFAULT_MAX_MOVES
from .core.checks import quoted_path
from .core.game import Game
from .files import (
    OutputError,
    check_output_file,
    check_output_folder,
    fallback_folders,
    kind_at,
    make_folders,
    read_input,
    stamp,
    write_or_fallback,
    write_output,
)
from .record import GameRecord

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

#: the records folder's manifest: the results, and which record and replay is which game
MANIFEST = "tournament.json"
#: the records folder's index page: every game, linked to its replay
INDEX = "index.html"
#: the largest results file (`out`) read back to continue a tournament
MAX_RESULTS_BYTES = 256 * 1024 * 1024
#: the settings that make two tournaments the same one (the keys of a results file)
SETTINGS = ("agents", "games_per_pairing", "seed", "max_moves")


class TournamentError(OutputError):
    """A tournament's outputs cannot be used as given (a records folder of another
    tournament, a damaged unfinished results file), or could only be saved elsewhere."""


def record_name(k: int) -> str:
    """The file name of scheduled game `k`'s record in a records folder."""
    return f"game_{k:04d}.json"


def replay_name(k: int) -> str:
    """The file name of scheduled game `k`'s replay page in a records folder."""
    return f"game_{k:04d}.html"


class Reporter:
    """What [`play`][satellites_env.tournament.play] tells its caller as it goes. Every
    method does nothing here: override the ones to show."""

    def message(self, text: str) -> None:
        """A notice: a tournament continued, a file written, how to continue after Ctrl-C."""

    def problem(self, text: str) -> None:
        """An output that could not be written after Ctrl-C (where it went instead)."""

    def games(self, done: int, total: int) -> None:
        """`done` of the tournament's `total` games are finished."""

    def ended(self, result: TournamentResult) -> None:
        """The games are over (`result.complete`) or stopped by Ctrl-C; called before the
        results are written, with Ctrl-C held until they are."""

    def pages(self, done: int, total: int) -> None:
        """`done` of `total` replay pages are written."""


class HoldCtrlC:
    """Ctrl-C in the main thread while the block runs: a KeyboardInterrupt at once until
    `hold()`, then held and raised as the block ends, so that no finished game is lost between
    the last game and its file (an ignored Ctrl-C stays ignored).

    Args:
        held: Hold Ctrl-C from the start.
    """

    def __init__(self, held: bool = False):
        self.held, self.caught, self.installed = held, False, False
        self.previous: Callable[[int, FrameType | None], Any] | int | None = None

    def hold(self) -> None:
        """Hold Ctrl-C from now on, until the block ends."""
        self.held = True

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.held:
            self.caught = True
        elif callable(self.previous):
            self.previous(signum, frame)
        else:
            raise KeyboardInterrupt

    def __enter__(self) -> HoldCtrlC:
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
        ):
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
            self.installed = True
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self.previous)
        if self.caught and kind is None:
            raise KeyboardInterrupt


# --------------------------------------------------------------------------- continuing


def check_records_folder(path: Path, settings: dict | None = None) -> dict[int, GameRecord]:
    """Check a records folder before any game is played.

    Args:
        path: A new or empty folder, so that every record in it belongs to one tournament,
            or the folder of an unfinished tournament with these `settings`.
        settings: The tournament's `agents`, `games_per_pairing`, `seed` and `max_moves`
            (None: the folder must be new or empty).

    Returns:
        The finished games of the unfinished tournament in the folder, by schedule index
        (each checked against the schedule and replayed); {} for a new or empty folder.

    Raises:
        TournamentError: The folder is not one of those, or a record in it is not the game
            of the schedule that its name says.
    """
    if path.is_symlink() and not path.exists():
        raise TournamentError(
            f"--records {quoted_path(path)} is a dangling symbolic link; give a new or empty folder"
        )
    if path.exists() and not path.is_dir():
        raise TournamentError(
            f"--records {quoted_path(path)} is {kind_at(path)}; give a new or empty folder"
        )
    finished: dict[int, GameRecord] = {}
    if path.is_dir() and any(path.iterdir()):
        held = _unfinished_tournament(path / MANIFEST)
        if held is None or settings is None:
            raise TournamentError(
                f"--records folder {quoted_path(path)} is not empty; give a "
                f"new or empty folder, so that the records in it all belong "
                f"to one tournament"
            )
        if _settings_of(held) != settings:
            raise TournamentError(
                f"--records folder {quoted_path(path)} holds an unfinished "
                f"tournament with other settings ({_describe_settings(held)})"
                f"; run that command again to continue it, or give a new or "
                f"empty folder"
            )
        finished = finished_records(path, settings)
    check_output_folder(path, "--records")
    return finished


def _unfinished_tournament(path: Path) -> dict | None:
    """The JSON of `path` when it is an unfinished tournament's results (`complete` false,
    with its settings), else None (missing, not a regular file, not JSON, finished...)."""
    try:
        data = json.loads(read_input(path, MAX_RESULTS_BYTES, "results file"))
    except (OSError, ValueError, RecursionError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("complete") is not False
        or not all(key in data for key in SETTINGS)
    ):
        return None
    return data


def _settings_of(data: dict) -> dict:
    return {key: data[key] for key in SETTINGS}


def _describe_settings(data: dict) -> str:
    agents = data["agents"]
    shown = " ".join(str(a)[:60] for a in agents[:6]) if isinstance(agents, list) else "?"
    return (
        f"--agents {shown[:300]} --games {str(data['games_per_pairing'])[:20]} --seed "
        f"{str(data['seed'])[:20]} --max-moves {str(data['max_moves'])[:20]}"
    )


def _jobs(settings: dict) -> list:
    return schedule(settings["agents"], settings["games_per_pairing"], settings["seed"])


def finished_records(folder: Path, settings: dict) -> dict[int, GameRecord]:
    """The finished games in the records folder of an unfinished tournament.

    Args:
        folder: The records folder.
        settings: The tournament's settings (see `check_records_folder`).

    Returns:
        The records by schedule index, each replayed and checked to be the finished game of
        the schedule that its file name says.

    Raises:
        TournamentError: A record that is not that game, naming its file.
    """
    jobs = _jobs(settings)
    seed, max_moves = settings["seed"], settings["max_moves"]
    finished = {}
    for path in sorted(folder.glob("game_*.json")):
        digits = path.stem[len("game_") :]
        k = int(digits) if digits.isascii() and digits.isdigit() else -1
        if not 0 <= k < len(jobs) or path.name != record_name(k):
            raise TournamentError(
                f"--records folder {quoted_path(folder)}: {path.name} is no "
                f"game of this tournament; delete it, or give a new or empty "
                f"folder"
            )
        job = jobs[k]
        try:
            record = GameRecord.load(path)
            start = Game.new(seed=seed + job[1] // 2, max_moves=max_moves).to_spn()
            if (
                record.players != colors_of(job)
                or record.max_moves != max_moves
                or record.start_spn != start
            ):
                raise ValueError(
                    f"it is not game {k} of the schedule (players, set-up or move cap differ)"
                )
            if not record.replay(f"game record {str(path)!r}")[-1].is_over or record.result.get(
                "end"
            ) not in ("terminated", "truncated"):
                raise ValueError("the game in it is not finished")
        except ValueError as error:
            raise TournamentError(
                f"--records folder {quoted_path(folder)}: {path.name} cannot "
                f"continue the tournament: {error}; delete it to play that "
                f"game again"
            ) from None
        finished[k] = record
    return finished


def finished_results(
    out: Path, settings: dict, say: Callable[[str], None] | None = None
) -> dict[int, dict]:
    """The finished games of an unfinished tournament in a results file.

    Args:
        out: The results file.
        settings: The tournament's settings (see `check_records_folder`).
        say: Told when `out` holds an unfinished tournament of other settings (it is then
            replaced).

    Returns:
        The games' summaries by schedule index, each checked for form and schedule (a
        summary holds no moves to replay); {} when `out` holds no unfinished tournament with
        these settings.

    Raises:
        TournamentError: A summary that is not a finished game of the schedule, naming its
            entry.
    """
    held = _unfinished_tournament(out)
    if held is None:
        return {}
    if _settings_of(held) != settings:
        if say:
            say(
                f"--out {out} holds an unfinished tournament with other settings "
                f"({_describe_settings(held)}); it will be replaced"
            )
        return {}
    jobs = _jobs(settings)
    games = held.get("games")
    if not isinstance(games, list):
        raise TournamentError(
            f"--out {quoted_path(out)}: 'games' must be a list; delete the "
            f"file to start the tournament over"
        )
    finished = {}
    for n, summary in enumerate(games):
        try:
            pair, game = (
                (summary.get("pair"), summary.get("game"))
                if isinstance(summary, dict)
                else (None, None)
            )
            if (
                type(pair) is not int
                or type(game) is not int
                or not 0 <= game < settings["games_per_pairing"]
                or not 0 <= pair * settings["games_per_pairing"] + game < len(jobs)
            ):
                raise ValueError("'pair' and 'game' must name a game of the schedule")
            k = pair * settings["games_per_pairing"] + game
            if k in finished:
                raise ValueError(f"game {game} of pair {pair} is listed twice")
            finished[k] = check_summary(summary, jobs[k], settings["seed"], settings["max_moves"])
        except ValueError as error:
            raise TournamentError(
                f"--out {quoted_path(out)}: entry {n} of 'games' cannot "
                f"continue the tournament: {error}; delete the file to start "
                f"over"
            ) from None
    return finished


def resume(
    agents: list[str],
    games: int,
    seed: int = 0,
    max_moves: int = DEFAULT_MAX_MOVES,
    out: Path | None = None,
    records: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[int, GameRecord | dict]:
    """Check a tournament's outputs and read back the games it finished before.

    Args:
        agents: The tournament's agent specs.
        games: Games per pairing.
        seed: The tournament's seed.
        max_moves: The move cap of its games.
        out: The results file, if any.
        records: The records folder, if any: the games are read from it when given (each
            record replayed), else from `out` (summaries).
        say: Told when `out` holds an unfinished tournament of other settings.

    Returns:
        The finished games by schedule index, for `run_tournament(..., finished=...)`.

    Raises:
        OutputError: An output that cannot be written.
        TournamentError: Outputs that hold another tournament, or damaged games.
    """
    if out:
        check_output_file(out, "--out", "results.json")
    settings = {
        "agents": list(agents),
        "games_per_pairing": games,
        "seed": seed,
        "max_moves": max_moves,
    }
    if records:
        return dict(check_records_folder(records, settings))
    if out:
        return dict(finished_results(out, settings, say))
    return {}


# --------------------------------------------------------------------------- saving


def write_records(
    result: TournamentResult,
    folder: Path,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write a records folder whole.

    Every game record and its HTML replay, `tournament.json` (the results, and which record
    and replay is which game) and `index.html` (every game, linked to its replay).

    Args:
        result: The tournament.
        folder: The records folder (created if missing).
        progress: Called as `progress(done, total)` after each replay page.
    """
    write_replays(result, folder, save_records(result, folder), progress)


def save_records(result: TournamentResult, folder: Path) -> dict:
    """The fast half of `write_records`: each game's record and `tournament.json`, marked
    unfinished until `write_replays` has written the pages. A folder whose writing stopped
    here is continued by the same tournament, not refused as a foreign non-empty folder.

    Returns:
        The manifest, for `write_replays`.
    """
    make_folders(folder)
    manifest = result.as_dict()
    for game in manifest["games"]:
        k = game["pair"] * result.games_per_pairing + game["game"]
        if result.records[k] is not None:
            game["record"] = record_name(k)
            game["replay"] = replay_name(k)
    write_output(
        folder / MANIFEST,
        json.dumps({**manifest, "complete": False}, indent=1) + "\n",
        "--records manifest",
    )
    for k, record in enumerate(result.records):
        if record is not None:
            record.save(folder / record_name(k))
    return manifest


def write_replays(
    result: TournamentResult,
    folder: Path,
    manifest: dict,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """The slow half of `write_records`: each game's HTML replay, `index.html`, and last the
    manifest as `manifest` says (finished when the tournament is): a folder whose manifest
    says finished holds every file."""
    from .web import index_html, write_replay

    written = [(k, record) for k, record in enumerate(result.records) if record is not None]
    for done, (k, record) in enumerate(written, start=1):
        write_replay(record, folder / replay_name(k), f"game {k}")
        if progress:
            progress(done, len(written))
    write_output(folder / INDEX, index_html(manifest), "--records index")
    write_output(folder / MANIFEST, json.dumps(manifest, indent=1) + "\n", "--records manifest")


def _records_fallback(result: TournamentResult, records: Path, error: OSError) -> str:
    problem = f"could not write --records {quoted_path(records)}: {error.strerror or error}"
    for folder in fallback_folders():
        try:
            fresh = Path(tempfile.mkdtemp(prefix=f"satellites-records-{stamp()}-", dir=folder))
            write_records(result, fresh)
        except OSError:
            continue
        return f"{problem}; saved the records to {quoted_path(fresh)} instead"
    return f"{problem}; the current and temp folders cannot be written either"


def save_results(
    result: TournamentResult,
    out: Path | None,
    records: Path | None,
    say: Callable[[str], None] | None = None,
) -> tuple[list[str], dict | None]:
    """Write the results file and the records folder's records (not yet its pages).

    Each output that cannot be written goes to a fresh place instead (see the module).

    Args:
        result: The tournament, finished or not.
        out: The results file, if any.
        records: The records folder, if any.
        say: Told of each file written.

    Returns:
        The problems (each says where its output went instead), and the manifest when the
        replay pages are still to be written (`write_pages`).
    """
    problems, manifest = [], None
    if out:
        try:
            write_or_fallback(
                lambda path: write_output(
                    path, json.dumps(result.as_dict(), indent=1) + "\n", "--out"
                ),
                out,
                "--out",
            )
            if say:
                say(f"wrote {out}" + ("" if result.complete else " (marked incomplete)"))
        except OutputError as error:
            problems.append(str(error))
    if records:
        try:
            manifest = save_records(result, records)
        except OSError as error:
            problems.append(_records_fallback(result, records, error))
    return problems, manifest


def write_pages(
    result: TournamentResult,
    records: Path | None,
    manifest: dict | None,
    reporter: Reporter | None = None,
) -> list[str]:
    """The replay pages, the index and the finished manifest of a saved records folder.

    Ctrl-C here loses nothing: the records are saved, and the same tournament writes the
    pages without playing a game.

    Args:
        result: The tournament.
        records: The records folder (None: nothing to do).
        manifest: What `save_results` returned (None: nothing to do).
        reporter: Told of each page written and of a Ctrl-C.

    Returns:
        The problems (where the folder went instead).
    """
    if records is None or manifest is None:
        return []
    reporter = reporter or Reporter()
    written = sum(record is not None for record in result.records)
    try:
        write_replays(result, records, manifest, reporter.pages)
    except KeyboardInterrupt:
        reporter.message(
            f"interrupted while writing the replay pages: the records are saved "
            f"in {records}/, and the same command writes the pages"
        )
        raise
    except OSError as error:
        return [_records_fallback(result, records, error)]
    reporter.message(
        f"wrote {written} game records with their replays, {MANIFEST} and {INDEX} to {records}/"
    )
    return []


# --------------------------------------------------------------------------- playing


def play(
    agents: list[str],
    games: int,
    seed: int = 0,
    workers: int = 1,
    max_moves: int = DEFAULT_MAX_MOVES,
    *,
    out: Path | None = None,
    records: Path | None = None,
    ray: bool = False,
    ray_address: str | None = None,
    reporter: Reporter | None = None,
    finished: Mapping[int, GameRecord | dict] | None = None,
) -> TournamentResult:
    """Play a round robin, continuing the unfinished one in its outputs, and save it.

    Args:
        agents: Agent specs (at least 2, distinct).
        games: Games per pairing.
        seed: The tournament's seed (see [`arena`][satellites_env.arena]).
        workers: Processes (or Ray actors) that play the games.
        max_moves: The move cap of every game.
        out: The results file (JSON), if any.
        records: The records folder, if any.
        ray: Play the games in `workers` Ray actors (a local Ray, or the cluster at
            `ray_address`).
        ray_address: The Ray cluster's address.
        reporter: Told of progress and of what is written (`Reporter`).
        finished: Games already played, by schedule index (a record, or a summary as
            `TournamentResult.game_summaries` gives it), e.g. those of a
            `TournamentInterrupted`'s result; None: those kept in the outputs (`resume`).
            The outputs are checked either way.

    Returns:
        The tournament's result.

    Raises:
        OutputError: An output refused before any game is played.
        TournamentError: Outputs that hold another tournament; or, at the end, an output
            that could only be written elsewhere (the message says where).
        TournamentInterrupted: Ctrl-C, once every finished game is saved (its `result`).
    """
    reporter = reporter or Reporter()
    held = resume(agents, games, seed, max_moves, out, records, reporter.message)
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
                    workers,
                    max_moves,
                    progress=progress,
                    ray=ray,
                    ray_address=ray_address,
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
