"""Continuing a tournament: the finished games kept in its records folder or results file,
checked against the schedule before any is trusted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..agents import canonical_spec
from ..arena import (
    check_summary,
    colors_of,
    schedule,
)
from ..core.board import DEFAULT_MAX_MOVES
from ..core.checks import quoted_path
from ..core.game import Game
from ..files import (
    check_output_file,
    check_output_folder,
    kind_at,
    read_input,
)
from ..pairing import pairing_game
from ..record import GameRecord
from .outputs import MANIFEST, MAX_RESULTS_BYTES, SETTINGS, TournamentError, record_name


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
        if _settings_of(held) != _settings_of(settings):
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
    """A tournament's settings, its agents by canonical spec (`mcts:05` is `mcts:5`)."""
    settings = {key: data[key] for key in SETTINGS}
    agents = settings["agents"]
    if isinstance(agents, list) and all(isinstance(a, str) for a in agents):
        settings["agents"] = [canonical_spec(a) for a in agents]
    return settings


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
            setup_seed = pairing_game(job[1], seed).setup_seed
            start = Game.new(seed=setup_seed, max_moves=max_moves).to_spn()
            if (
                {c: canonical_spec(s) for c, s in record.players.items()}
                != {c: canonical_spec(s) for c, s in colors_of(job, seed).items()}
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
    if _settings_of(held) != _settings_of(settings):
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
    force: bool = False,
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
        force: Replace an `out` file that is not a results file of ours.

    Returns:
        The finished games by schedule index, for `run_tournament(..., finished=...)`.

    Raises:
        OutputError: An output that cannot be written.
        TournamentError: Outputs that hold another tournament, or damaged games.
    """
    if out:
        check_output_file(out, "--out", "results.json", "results", force)
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
