"""The `satellites` command line: train, exploit, evaluate, ladder, play, serve, replay, demo.

`train` and `exploit` run the trainer's commands (`satellites.commands` entry points of the
`train` extra, PyTorch) and `serve` the web server (Starlette, uvicorn); everything else is
torch-free.

Errors and guarantees: a bad argument, agent spec, record, position, config, checkpoint or
output path ends with one `error: ...` line and exit status 2 (never a traceback); Ctrl-C
ends with status 130. Output paths are checked before any game is played, and a finished
game or tournament is never lost: if writing it still fails at the end, it goes to a fresh
file in the current folder (or the temp folder) and the message says where. Ctrl-C during
`evaluate` writes every finished game (`--out` marked incomplete, `--records`) before it
exits 130, and the same command continues the tournament. Outputs are
renamed into place and never replace a folder, a special file (FIFO, device, socket) or a
symbolic link (:mod:`satellites_env.files`).
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TextColumn
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .agents import make_agent
from .core.board import DEFAULT_MAX_MOVES
from .core.game import Game
from .core.notation import NotationError
from .core.engine import IllegalActionError
from .files import FileKindError, check_output, kind_of, read_input, write_output
from .record import GameRecord

from .arena import (TournamentInterrupted, TournamentResult, check_summary, colors_of,
                    rate_with_interval, run_tournament, schedule)

# Long messages stay on one line (greppable); tables keep their columns when piped to a file.
console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, soft_wrap=True, highlight=False)


def say(message: str) -> None:
    """Print a plain line: text from users, files or errors is never read as rich markup."""
    console.print(message, markup=False, highlight=False)

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class CliError(ValueError):
    """A user error found by the command line itself (an output path, a refused folder...)."""


# --------------------------------------------------------------------------- argument types


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high` (argparse names the option)."""

    def parse(text: str) -> int:
        value = None
        if text.strip().lstrip("+-").isascii() and text.strip().lstrip("+-").isdigit():
            value = int(text)
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r}")
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
                f"expected a number greater than {low:g} and at most {high:g}, got {text!r}")
        return value

    return parse


def ray_address(text: str) -> str:
    """An argparse type: a Ray address (`auto`, `HOST:PORT`, `ray://HOST:PORT`); "" (what
    `--ray` alone gives) starts a local Ray."""
    if text == "":
        return text
    text = text.strip()
    if not text or any(c.isspace() or not c.isprintable() for c in text) or len(text) > 300:
        raise argparse.ArgumentTypeError(f"expected a Ray cluster address such as auto or "
                                         f"127.0.0.1:6379, got {text!r}")
    return text


def add_ray_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--ray [ADDRESS]`: alone, "" (a local Ray); with an address, that cluster."""
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        type=ray_address, help=help_text)


GAMES = int_in(1, 1_000_000)
SEED = int_in(0, 2**32 - 1)
WORKERS = int_in(1, 256)
MAX_MOVES = int_in(1, 1_000_000)
FRAME_SIZE = int_in(64, 4096)


def FPS(text: str) -> float:  # noqa: N802 - an argparse type, named like the others
    """An argparse type: a GIF frame rate, MIN_FPS to MAX_FPS (render.files)."""
    from .render.files import check_fps

    try:
        return check_fps(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            "expected " + str(error).removeprefix("fps must be ")) from None


PORT = int_in(0, 65535)
MINUTES = float_in(0, 10**6)


# --------------------------------------------------------------------------- output paths


def _show(path: Path) -> str:
    return repr(str(path))


def _kind_of(path: Path) -> str:
    """'a file', 'a FIFO (named pipe)', ...: what is at an existing path that is no folder."""
    mode = path.stat().st_mode
    return "a file" if stat.S_ISREG(mode) else kind_of(mode)


def _nearest_existing(folder: Path) -> Path:
    folder = folder.absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _probe_folder(folder: Path) -> None:
    """Raise OSError unless a file can be created in `folder` (checked by creating one)."""
    with tempfile.TemporaryFile(dir=folder):
        pass


def check_output_file(path: Path, option: str, example: str) -> None:
    """Refuse, before any work, an output file that is a folder, a special file (a FIFO, a
    device), a symbolic link, or cannot be written (:mod:`satellites_env.files`: outputs are
    renamed into place, never written through a link or into a device)."""
    if path.is_dir() and not path.is_symlink():
        raise CliError(f"{option} {_show(path)} is a directory; give a file path such as "
                       f"{_show(path / example)}")
    ancestor = _nearest_existing(path.parent)
    if not ancestor.is_dir():
        raise CliError(f"{option} {_show(path)}: {_show(ancestor)} is a file, not a folder")
    try:
        existing = check_output(path, option)
    except FileKindError as error:
        raise CliError(str(error)) from None
    except OSError as error:
        raise CliError(f"{option} {_show(path)} cannot be written: "
                       f"{error.strerror or error}") from None
    try:
        if existing is not None and not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        _probe_folder(ancestor)
    except OSError as error:
        raise CliError(f"{option} {_show(path)} cannot be written: "
                       f"{error.strerror or error}") from None


def check_records_folder(path: Path, settings: dict | None = None) -> dict[int, GameRecord]:
    """`--records`: a new or empty folder, so every record in it belongs to one tournament,
    or the folder of an unfinished tournament with these `settings` (agents,
    games_per_pairing, seed, max_moves), whose finished games are returned by schedule index
    (checked against the schedule and replayed) to be continued."""
    if path.is_symlink() and not path.exists():
        raise CliError(f"--records {_show(path)} is a dangling symbolic link; give a new or "
                       f"empty folder")
    if path.exists() and not path.is_dir():
        raise CliError(f"--records {_show(path)} is {_kind_of(path)}; give a new or empty "
                       f"folder")
    finished: dict[int, GameRecord] = {}
    if path.is_dir() and any(path.iterdir()):
        held = _unfinished_tournament(path / MANIFEST)
        if held is None or settings is None:
            raise CliError(f"--records folder {_show(path)} is not empty; give a new or empty "
                           f"folder, so that the records in it all belong to one tournament")
        if _settings_of(held) != settings:
            raise CliError(f"--records folder {_show(path)} holds an unfinished tournament with "
                           f"other settings ({_describe_settings(held)}); run that command "
                           f"again to continue it, or give a new or empty folder")
        finished = _finished_records(path, settings)
    ancestor = _nearest_existing(path)
    if not ancestor.is_dir():
        raise CliError(f"--records {_show(path)}: {_show(ancestor)} is a file, not a folder")
    try:
        _probe_folder(ancestor)
    except OSError as error:
        raise CliError(f"--records {_show(path)} cannot be written: "
                       f"{error.strerror or error}") from None
    return finished


# --------------------------------------------------------------------------- continuing

#: the largest results file (`evaluate --out`) read back to continue a tournament
MAX_RESULTS_BYTES = 256 * 1024 * 1024
SETTINGS = ("agents", "games_per_pairing", "seed", "max_moves")


def _unfinished_tournament(path: Path) -> dict | None:
    """The JSON of `path` when it is an unfinished tournament's results (`complete` false,
    with its settings), else None (missing, not a regular file, not JSON, finished...)."""
    try:
        data = json.loads(read_input(path, MAX_RESULTS_BYTES, "results file"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("complete") is not False or \
            not all(key in data for key in SETTINGS):
        return None
    return data


def _settings_of(data: dict) -> dict:
    return {key: data[key] for key in SETTINGS}


def _describe_settings(data: dict) -> str:
    agents = data["agents"]
    shown = " ".join(str(a)[:60] for a in agents[:6]) if isinstance(agents, list) else "?"
    return (f"--agents {shown[:300]} --games {str(data['games_per_pairing'])[:20]} --seed "
            f"{str(data['seed'])[:20]} --max-moves {str(data['max_moves'])[:20]}")


def _jobs(settings: dict) -> list:
    return schedule(settings["agents"], settings["games_per_pairing"], settings["seed"])


def _finished_records(folder: Path, settings: dict) -> dict[int, GameRecord]:
    """The finished games in the records folder of an unfinished tournament, by schedule
    index; a record that is not the game the schedule says is an error naming its file."""
    jobs = _jobs(settings)
    seed, max_moves = settings["seed"], settings["max_moves"]
    finished = {}
    for path in sorted(folder.glob("game_*.json")):
        digits = path.stem[len("game_"):]
        k = int(digits) if digits.isascii() and digits.isdigit() else -1
        if not 0 <= k < len(jobs) or path.name != record_name(k):
            raise CliError(f"--records folder {_show(folder)}: {path.name} is no game of this "
                           f"tournament; delete it, or give a new or empty folder")
        job = jobs[k]
        try:
            record = GameRecord.load(path)
            start = Game.new(seed=seed + job[1] // 2, max_moves=max_moves).to_spn()
            if record.players != colors_of(job) or record.max_moves != max_moves or \
                    record.start_spn != start:
                raise ValueError(f"it is not game {k} of the schedule (players, set-up or "
                                 f"move cap differ)")
            if not record.replay(f"game record {str(path)!r}")[-1].is_over or \
                    record.result.get("end") not in ("terminated", "truncated"):
                raise ValueError("the game in it is not finished")
        except ValueError as error:
            raise CliError(f"--records folder {_show(folder)}: {path.name} cannot continue the "
                           f"tournament: {error}; delete it to play that game again") from None
        finished[k] = record
    return finished


def _finished_results(out: Path, settings: dict) -> dict[int, dict]:
    """The finished games (summaries, by schedule index) of an unfinished tournament with
    these settings in the results file `out`; {} when it holds none (it is then replaced)."""
    held = _unfinished_tournament(out)
    if held is None:
        return {}
    if _settings_of(held) != settings:
        say(f"--out {out} holds an unfinished tournament with other settings "
            f"({_describe_settings(held)}); it will be replaced")
        return {}
    jobs = _jobs(settings)
    games = held.get("games")
    if not isinstance(games, list):
        raise CliError(f"--out {_show(out)}: 'games' must be a list; delete the file to start "
                       f"the tournament over")
    finished = {}
    for n, summary in enumerate(games):
        try:
            pair, game = (summary.get("pair"), summary.get("game")) \
                if isinstance(summary, dict) else (None, None)
            if type(pair) is not int or type(game) is not int or \
                    not 0 <= game < settings["games_per_pairing"] or \
                    not 0 <= pair * settings["games_per_pairing"] + game < len(jobs):
                raise ValueError("'pair' and 'game' must name a game of the schedule")
            k = pair * settings["games_per_pairing"] + game
            if k in finished:
                raise ValueError(f"game {game} of pair {pair} is listed twice")
            finished[k] = check_summary(summary, jobs[k], settings["seed"],
                                        settings["max_moves"])
        except ValueError as error:
            raise CliError(f"--out {_show(out)}: entry {n} of 'games' cannot continue the "
                           f"tournament: {error}; delete the file to start over") from None
    return finished


def _fallback_folders() -> list[Path]:
    return [Path.cwd(), Path(tempfile.gettempdir())]


def _stamp() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def write_or_fallback(write: Callable[[Path], object], path: Path, option: str) -> Path:
    """Write an output with `write(path)`; if that fails, write it to a new file in the
    current folder (else the temp folder) and raise CliError saying where it went."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path)
        return path
    except OSError as error:
        problem = f"could not write {option} {_show(path)}: {error.strerror or error}"
    for folder in _fallback_folders():
        try:
            handle, name = tempfile.mkstemp(prefix=f"satellites-{path.stem or 'output'}-"
                                                   f"{_stamp()}-", suffix=path.suffix,
                                            dir=folder)
            os.close(handle)
            write(Path(name))
        except OSError:
            continue
        raise CliError(f"{problem}; saved it to {_show(Path(name))} instead")
    raise CliError(f"{problem}; the current and temp folders cannot be written either")


# --------------------------------------------------------------------------- evaluate


def results_table(result: TournamentResult, title: str) -> Table:
    table = Table(title=title)
    for column in ("a", "b", "games", "a wins", "draws", "b wins", "a win rate (95% CI)",
                   "b win rate (95% CI)"):
        table.add_column(column, justify="left" if column in ("a", "b") else "right")
    for pair in result.pairs:
        table.add_row(Text(pair.a), Text(pair.b), str(pair.games), str(pair.a_wins),
                      str(pair.draws),
                      str(pair.b_wins),
                      *((rate_with_interval(pair.a_wins, pair.games),
                         rate_with_interval(pair.b_wins, pair.games)) if pair.games
                        else ("-", "-")))  # a pair not reached before Ctrl-C
    return table


def elo_title(result: TournamentResult) -> str:
    """Names the agent fixed at 0: random when it played, else the first agent."""
    anchor = result.elo_anchor or result.agents[0]
    if anchor == "random":
        return "Elo, random = 0"
    return f"Elo, {anchor} = 0 (the first agent; random did not play)"


def elo_table(result: TournamentResult) -> Table:
    table = Table(title=Text(elo_title(result)))
    table.add_column("agent")
    table.add_column("Elo", justify="right")
    for agent, elo in sorted(result.elo.items(), key=lambda item: -item[1]):
        table.add_row(Text(agent), f"{elo:+.0f}")
    return table


MANIFEST = "tournament.json"


def record_name(k: int) -> str:
    return f"game_{k:04d}.json"


def replay_name(k: int) -> str:
    return f"game_{k:04d}.html"


INDEX = "index.html"


def write_records(result: TournamentResult, folder: Path, progress=None) -> None:
    """Every game record and its HTML replay, `tournament.json` (the results, and which
    record and replay is which game) and `index.html` (every game, linked to its replay).
    `progress(done, total)` is called after each game's replay."""
    write_replays(result, folder, save_records(result, folder), progress)


def save_records(result: TournamentResult, folder: Path) -> dict:
    """The fast half of :func:`write_records`: each game's record and `tournament.json`,
    marked unfinished until :func:`write_replays` has written the pages. A folder whose
    writing stopped here is continued by the same command, not refused as a foreign
    non-empty folder. Returns the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = result.as_dict()
    for game in manifest["games"]:
        k = game["pair"] * result.games_per_pairing + game["game"]
        if result.records[k] is not None:
            game["record"] = record_name(k)
            game["replay"] = replay_name(k)
    write_output(folder / MANIFEST, json.dumps({**manifest, "complete": False}, indent=1)
                 + "\n", "--records manifest")
    for k, record in enumerate(result.records):
        if record is not None:
            record.save(folder / record_name(k))
    return manifest


def write_replays(result: TournamentResult, folder: Path, manifest: dict,
                  progress=None) -> None:
    """The slow half of :func:`write_records`: each game's HTML replay, `index.html`, and
    last the manifest as `manifest` says (finished when the tournament is): a folder whose
    manifest says finished holds every file."""
    from .web import index_html, write_replay

    written = [(k, record) for k, record in enumerate(result.records) if record is not None]
    for done, (k, record) in enumerate(written, start=1):
        write_replay(record, folder / replay_name(k), f"game {k}")
        if progress:
            progress(done, len(written))
    write_output(folder / INDEX, index_html(manifest), "--records index")
    write_output(folder / MANIFEST, json.dumps(manifest, indent=1) + "\n", "--records manifest")


class _CtrlC:
    """Ctrl-C in the main thread while the block runs: a KeyboardInterrupt at once until
    `hold()`, then held and raised as the block ends, so that no finished game is lost between
    the last game and its file (an ignored Ctrl-C stays ignored)."""

    def __init__(self, held: bool = False):
        self.held, self.caught, self.installed = held, False, False
        self.previous = None

    def hold(self) -> None:
        self.held = True

    def _on_sigint(self, signum, frame) -> None:
        if self.held:
            self.caught = True
        elif callable(self.previous):
            self.previous(signum, frame)
        else:
            raise KeyboardInterrupt

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
            self.installed = True
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self.previous)
        if self.caught and kind is None:
            raise KeyboardInterrupt


def evaluate(specs: list[str], games: int, seed: int, workers: int, out: Path | None,
             records: Path | None, max_moves: int, ray: str | None = None) -> TournamentResult:
    """`satellites evaluate`; `ray` None: this machine's processes, "" a local Ray, else the
    address of a Ray cluster (the games run in `workers` actors, with the same results).

    Ctrl-C keeps every finished game: `out` gets the results so far (`"complete": false`)
    and `records` their records, manifest and index; the same command run again continues
    the tournament (from the records folder when `records` is given, each record replayed,
    else from `out`, whose summaries are checked for form and schedule only: they hold no
    moves to replay), playing only the games missing."""
    if out:
        check_output_file(out, "--out", "results.json")
    settings = {"agents": list(specs), "games_per_pairing": games, "seed": seed,
                "max_moves": max_moves}
    finished: dict = {}
    if records:
        finished = check_records_folder(records, settings)
        source = records
    elif out:
        finished = _finished_results(out, settings)
        source = out
    total = len(schedule(specs, games, seed)) if len(specs) >= 2 else 0
    if finished:
        say(f"continuing the unfinished tournament in {source}: {len(finished)} of {total} "
            f"games finished, {total - len(finished)} to play")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    title = f"{games} games per pairing, seed {seed}"
    ctrl_c = _CtrlC()
    try:
        with ctrl_c:
            try:
                with Progress(*columns, console=console, transient=True) as progress:
                    task = progress.add_task("games", total=None)

                    def shown(done: int, total: int) -> None:
                        progress.update(task, completed=done, total=total)
                        if done == total:  # from the last game on, Ctrl-C waits for the files
                            ctrl_c.hold()

                    result = run_tournament(specs, games, seed, workers, max_moves,
                                            progress=shown, ray=ray is not None,
                                            ray_address=ray or None, finished=finished)
            except TournamentInterrupted as stop:
                _keep_interrupted(stop.result, out, records, title)
                raise KeyboardInterrupt from None
            ctrl_c.hold()
            console.print(results_table(result, title))
            console.print(elo_table(result))
            problems, manifest = _save_results(result, out, records)
    except KeyboardInterrupt:
        if ctrl_c.caught:
            say("interrupted after the last game; every result is saved" + (
                f", and the same command writes the replay pages in {records}/" if records
                else ""))
        raise
    problems += _write_pages(result, records, manifest)
    if problems:
        raise CliError("; ".join(problems))
    return result


def _save_results(result: TournamentResult, out: Path | None,
                  records: Path | None) -> tuple[list[str], dict | None]:
    """Write `out` and the records folder's records (each falling back to a fresh place):
    the problems, and the manifest when the replay pages are still to be written."""
    problems, manifest = [], None
    if out:
        try:
            write_or_fallback(lambda path: write_output(
                path, json.dumps(result.as_dict(), indent=1) + "\n", "--out"), out, "--out")
            say(f"wrote {out}" + ("" if result.complete else " (marked incomplete)"))
        except CliError as error:
            problems.append(str(error))
    if records:
        try:
            manifest = save_records(result, records)
        except OSError as error:
            problems.append(_records_fallback(result, records, error))
    return problems, manifest


def _write_pages(result: TournamentResult, records: Path | None,
                 manifest: dict | None) -> list[str]:
    """The replay pages, the index and the finished manifest of a saved records folder (Ctrl-C
    here loses nothing: the same command writes them); the problems."""
    if records is None or manifest is None:
        return []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    written = sum(record is not None for record in result.records)
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("replays", total=written)
            write_replays(result, records, manifest, lambda done, total: progress.update(
                task, completed=done))
    except KeyboardInterrupt:
        say(f"interrupted while writing the replay pages: the records are saved in {records}/, "
            f"and the same command writes the pages")
        raise
    except OSError as error:
        return [_records_fallback(result, records, error)]
    say(f"wrote {written} game records with their replays, {MANIFEST} and {INDEX} to "
        f"{records}/")
    return []


def _keep_interrupted(result: TournamentResult, out: Path | None, records: Path | None,
                      title: str) -> None:
    """Ctrl-C: show and write the games finished, and say how to continue."""
    played, total = len(result.finished), len(result.records)
    with _CtrlC(held=True):  # a second Ctrl-C must not lose what the first one kept
        if played:
            console.print(results_table(result, f"{title}: interrupted, {played} of {total} "
                                                f"games"))
        if not (out or records):
            say(f"interrupted after {played} of {total} games; nothing kept (give --out or "
                f"--records to keep the finished games and continue later)")
            return
        problems, manifest = _save_results(result, out, records)
    problems += _write_pages(result, records, manifest)
    for problem in problems:
        errors.print(f"[red]error:[/red] {escape(problem)}")
    say(f"interrupted after {played} of {total} games: the same command continues the "
        f"tournament, playing the {total - played} missing")


def _records_fallback(result: TournamentResult, records: Path, error: OSError) -> str:
    problem = f"could not write --records {_show(records)}: {error.strerror or error}"
    for folder in _fallback_folders():
        try:
            fresh = Path(tempfile.mkdtemp(prefix=f"satellites-records-{_stamp()}-", dir=folder))
            write_records(result, fresh)
        except OSError:
            continue
        return f"{problem}; saved the records to {_show(fresh)} instead"
    return f"{problem}; the current and temp folders cannot be written either"


# --------------------------------------------------------------------------- play


def _stdin_line(read: Callable[[str], str]) -> Callable[[str], str]:
    """`read` (input) with a closed standard input taken as its end: EOFError, as at the end
    of a file, where Python would say "lost sys.stdin" (`<&-`) or fail to read (EBADF)."""

    def line(prompt: str) -> str:
        if sys.stdin is None or getattr(sys.stdin, "closed", False):
            raise EOFError
        try:
            return read(prompt)
        except OSError as error:
            if error.errno in (errno.EBADF, errno.EIO):
                raise EOFError from None
            raise

    return line


def play(opponent: str, color: str, seed: int, render: str, max_moves: int,
         save: Path | None, input_fn: Callable[[str], str] | None = None) -> GameRecord:
    """Play a game against `opponent` in the terminal, moves typed in notation.

    An illegal or malformed move changes nothing. However the game stops (its end, 'quit',
    end of input, Ctrl-C, an error), the record is saved to `save` when given."""
    from .render import HumanWindow, render_rgb, render_rich

    if save:
        check_output_file(save, "--save", "game.json")
    input_fn = input_fn or _stdin_line(input)  # looked up now: a patched input is used
    agent = make_agent(opponent, seed=seed)
    game = Game.new(seed=seed, max_moves=max_moves)
    start = game.to_spn()
    you = 0 if color == "red" else 1
    window = HumanWindow() if render == "human" else None
    players = {"red": "human" if you == 0 else opponent, "blue": "human" if you == 1 else opponent}
    say(f"You are {color}. Type moves like c10-c7, c10-f7>f9 (displacement) or "
                  f"pass; 'moves' lists your legal moves, 'quit' resigns.")

    def show() -> None:
        last = game.history[-1] if game.history else None
        console.print(render_rich(game, last_move=last))
        if window:
            window.show(render_rgb(game, last_move=last))

    resigned = None
    try:
        if window:
            try:
                show()
            except Exception as error:  # no display, no video driver...
                raise CliError(f"--render human cannot open a window: {error}") from None
        else:
            show()
        while not game.is_over:
            if game.to_move != you:
                before = len(game.history)
                while game.to_move != you and not game.is_over and len(game.history) == before:
                    game.play(agent.act(game))
                say(f"{opponent} plays {game.history[-1]}")
                show()
                continue
            try:
                text = input_fn(f"move {game.moves + 1} ({color})> ").strip()
            except EOFError:
                say("input closed: game abandoned")
                break
            if text in ("quit", "exit", "resign"):
                say("you resigned")
                resigned = color
                break
            if text in ("moves", "help", "?"):
                say(", ".join(game.legal_moves()))
                continue
            try:
                game.play_move(text)
            except (NotationError, IllegalActionError) as error:
                console.print(f"[red]not played:[/red] {escape(str(error))}", highlight=False)
                continue
            show()
    finally:  # the game so far is saved whatever stopped it
        # history holds whole moves only, even if an agent was stopped mid-displacement
        record = GameRecord.of(start, game, players, resigned=resigned)
        if window:
            window.close()
        if save:
            write_or_fallback(record.save, save, "--save")
            say(f"saved the game to {save}")
    result = record.result
    if result["end"] != "ongoing":
        say(f"result: {result['winner'] or 'draw'} — {result['reason']}")
    return record


# --------------------------------------------------------------------------- replay


def replay(path: Path, gif: Path | None, boards: bool, frame_size: int, fps: float,
           html: Path | None = None, read_key: Callable[[], str] | None = None) -> None:
    """Show a saved game: an HTML replay (`html`), a GIF (`gif`), and/or the boards in the
    terminal. Without `html` or `gif` (or with `boards`), a terminal steps through the game
    one key press at a time (`read_key`, default the terminal's); when standard input or
    output is not a terminal, every board is printed one after the other."""
    from .render import render_rgb, render_rich, save_gif

    if gif:
        check_output_file(gif, "--gif", "game.gif")
    if html:
        check_output_file(html, "--html", "game.html")
    record = GameRecord.load(path)
    if gif:
        from .render.files import check_gif_budget

        check_gif_budget(len(record.moves) + 1, frame_size, "--frame-size")
    source = f"game record {str(path)!r}"
    positions = record.replay(source)  # each with its history: the last move is highlighted
    if html:
        from .web import write_replay

        write_or_fallback(lambda target: write_replay(record, target, source), html, "--html")
        say(f"wrote the replay page {html} ({len(record.moves)} moves); open it in a browser")
    if gif:
        save_gif((render_rgb(game, size=frame_size) for game in positions), gif, fps=fps)
        say(f"wrote {len(positions)} frames to {gif}")
    if boards or not (gif or html):
        from .terminal import interactive
        from .terminal import read_key as terminal_key

        if read_key is None and (boards or not interactive()):
            for game in positions:
                console.print(render_rich(game))
        else:
            step_through(positions, record, read_key or terminal_key)


STEP_KEYS = "→ / space / Enter: next   ← / b: back   Home / End: first / last   q: quit"


def step_through(positions: list[Game], record: GameRecord,
                 read_key: Callable[[], str]) -> None:
    """Show one position at a time; keys move through the game (STEP_KEYS)."""
    from .render import render_rich

    last = len(positions) - 1
    step = 0
    players = record.players
    while True:
        if console.is_terminal:
            console.clear()
        game = positions[step]
        console.print(render_rich(game))
        move = f"move {step} of {last}: {game.history[-1]}" if step else f"start (0 of {last})"
        say(f"{players.get('red', '?')} (red) vs {players.get('blue', '?')} (blue) · {move}")
        say(STEP_KEYS)
        key = read_key()
        if key in ("q", "escape", "eof"):
            return
        if key in ("right", "space", "enter", "n", "down", "pagedown"):
            if step == last and key == "enter":
                return  # Enter at the end closes, as a pager does
            step = min(last, step + 1)
        elif key in ("left", "b", "p", "up", "pageup", "backspace"):
            step = max(0, step - 1)
        elif key in ("home", "g"):
            step = 0
        elif key in ("end", "G"):
            step = last


# --------------------------------------------------------------------------- serve


def serve(opponent: str, host: str, port: int, max_moves: int, open_browser: bool) -> None:
    """`satellites serve`: the play page on http://HOST:PORT/ until Ctrl-C."""
    try:
        from .web.server import serve as run_server
    except ImportError as error:
        raise CliError("`satellites serve` needs the 'web' extra (Starlette and uvicorn): "
                       f"pip install 'satellites[web]'; import failed: {error}") from None

    def announce(url: str) -> None:
        say(f"playing against {opponent} at {url}  (each browser tab plays its own game; "
            f"Ctrl-C stops)")
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    run_server(opponent, host, port, max_moves, announce=announce)


# --------------------------------------------------------------------------- train


def trainer_command(name: str) -> Callable:
    """The trainer's command `name` (an entry point of the `train` extra: satellites_env
    imports no trainer code itself)."""
    points = entry_points(group="satellites.commands", name=name)
    try:
        return next(iter(points)).load()
    except (StopIteration, ImportError) as error:
        raise ValueError(f"`satellites {name}` needs the trainer: install the 'train' extra "
                         f"(pip install 'satellites[train]'); {error or 'not installed'}") from None


def train(config: str, out: Path | None, resume: bool, ray: str | None = None) -> None:
    """`satellites train`: the learner named by the config (needs the `train` extra); `ray`
    (a cluster address, or "" for a local Ray) runs self-play on Ray whatever the config says."""
    trainer_command("train")(config, out, resume, console, ray=ray)


def exploit(target: str, minutes: float, out: Path | None, config: str | None,
            seed: int | None, games: int, resume: bool, ray: str | None = None,
            init: str | None = None) -> None:
    """`satellites exploit`: train an exploiter of the agent `target` for `minutes`, from a
    random network or from `init` (the `train` extra; training/exploit.py)."""
    trainer_command("exploit")(target, minutes, out, config, seed, games, resume, console,
                               ray=ray, init=init)


# --------------------------------------------------------------------------- demo


def demo(seed: int, max_moves: int, gif: Path | None, frame_size: int,
         red: str = "greedy", blue: str = "random") -> None:
    """Play one game between two agents through the wrapped PettingZoo env and render it."""
    from . import satellites_v0
    from .render import render_rgb, render_rich, save_gif
    from .render.files import check_gif_budget

    if gif:
        check_output_file(gif, "--gif", "game.gif")
    env = satellites_v0.env(render_mode="ansi", max_moves=max_moves)
    env.reset(seed=seed)
    game = env.unwrapped.game
    agents = {"player_0": make_agent(red, seed=seed), "player_1": make_agent(blue, seed=seed + 1)}
    # the frames are drawn once the game is over and their number is known: the game is
    # played again from its start, one frame after each whole move
    start, frames = game.clone(), 1
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("playing", total=max_moves)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            action = agents[agent].act(game)
            assert obs["action_mask"][action], "agents only play legal actions"
            env.step(action)
            if game.pending_push is None:
                progress.update(task, completed=game.moves)
                frames += 1
    console.print(render_rich(game))
    result = game.score()
    console.print(f"moves: {game.moves}  ended by: "
                  f"{'move cap (truncation)' if game.truncated else 'the rules'}  "
                  f"rewards: red {result.reward(0):+d}, blue {result.reward(1):+d}")
    say(f"red = {red}, blue = {blue}; result: {result.reason}")
    if gif:
        check_gif_budget(frames, frame_size, "--frame-size")

        def drawn():
            yield render_rgb(start, size=frame_size)
            for action in game.actions[len(start.actions):]:
                start.play(action)
                if start.pending_push is None:
                    yield render_rgb(start, size=frame_size, last_move=start.history[-1])

        save_gif(drawn(), gif)
        say(f"saved {frames} frames to {gif}")


# --------------------------------------------------------------------------- main


# --------------------------------------------------------------------------- ladder


def _ladder(path: Path, create: bool, seed: int | None = None, max_moves: int | None = None):
    from .core.board import DEFAULT_MAX_MOVES
    from .ladder import Ladder

    ladder = Ladder(path, create=create, seed=0 if seed is None else seed,
                    max_moves=DEFAULT_MAX_MOVES if max_moves is None else max_moves)
    for option, asked, held in (("--seed", seed, ladder.seed),
                                ("--max-moves", max_moves, ladder.max_moves)):
        if asked is not None and asked != held:
            ladder.close()
            raise CliError(f"the ladder {str(path)!r} was made with {option} {held}; its games "
                           f"are only comparable under one setting")
    return ladder


def _progress_bar(label: str):
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not console.is_terminal)


def ladder_add(db: Path, specs: list[str], name: str | None, seed: int | None = None,
               max_moves: int | None = None) -> None:
    """`satellites ladder add SPEC ...`: agents join the ladder (created if missing, with
    `seed` and `max_moves`)."""
    if name is not None and len(specs) != 1:
        raise CliError("--name names one agent: give one SPEC with it")
    with _ladder(db, True, seed, max_moves) as ladder:
        for spec in specs:
            entry = ladder.add(spec, name=name)
            held = "" if name is None or entry.name == name else \
                f" already, by this name (--name {name} left unused)"
            say(f"{entry.name}: on the ladder{held}, identity {entry.key[:60]}")


def ladder_run(db: Path, games: int, workers: int, ray: str | None) -> None:
    """`satellites ladder run`: play every game the ladder's pairs still lack."""
    with _ladder(db, create=False) as ladder, _progress_bar("games") as progress:
        task = progress.add_task("games", total=None)
        stored = ladder.run(games, workers, ray,
                            lambda done, total: progress.update(task, completed=done,
                                                                total=total))
    say(f"{stored} games played and stored in {db}")
    ladder_show(db, None, False, False)


def ladder_rate(db: Path, spec: str, games: int, workers: int, ray: str | None,
                name: str | None) -> None:
    """`satellites ladder rate SPEC`: one agent's rating against the ladder's fixed ratings."""
    with _ladder(db, create=False) as ladder, _progress_bar("games") as progress:
        task = progress.add_task("games", total=None)
        result = ladder.rate(spec, games, workers, ray,
                             lambda done, total: progress.update(task, completed=done),
                             name=name)
    table = Table(title=Text(f"{result.name}: Elo {result.elo:+.0f} "
                             f"[{result.low:+.0f}, {result.high:+.0f}] (95%), against the "
                             f"ladder's fixed ratings"))
    table.add_column("opponent")
    table.add_column("games", justify="right")
    for opponent, count in result.games.items():
        table.add_row(Text(opponent), str(count))
    console.print(table)


def ladder_show(db: Path, html: Path | None, as_json: bool, as_csv: bool) -> None:
    """`satellites ladder show`: the ratings, intervals and games (a table, JSON, CSV, or an
    HTML leaderboard)."""
    from .web.leaderboard import standings, write_leaderboard

    if html is not None:
        if html.exists() and not html.is_dir():
            raise CliError(f"--html {_show(html)} is {_kind_of(html)}; give a folder for the "
                           f"leaderboard page")
        check_output_file(html / "index.html", "--html", "index.html")
    with _ladder(db, create=False) as ladder:
        table = standings(ladder)
        if html is not None:
            index = write_leaderboard(ladder, html)
            say(f"leaderboard: {index}")
    if as_json:
        print(json.dumps(table, indent=1))
        return
    if as_csv:
        columns = ("rank", "name", "spec", "elo", "low", "high", "games", "score", "los_next")
        print(",".join(columns))
        for row in table["agents"]:
            print(",".join(json.dumps(row[c]) if isinstance(row[c], str) else
                           ("" if row[c] is None else str(row[c])) for c in columns))
        return
    out = Table(title=Text(f"Ladder {db}: {table['games']} games, Elo {table['anchor']} = 0, "
                           f"95% intervals"))
    for column in ("#", "agent", "Elo", "95% interval", "games", "score", "LOS next"):
        out.add_column(column, justify="left" if column == "agent" else "right")
    for row in table["agents"]:
        out.add_row(str(row["rank"]), Text(row["name"]), f"{row['elo']:+.0f}",
                    f"[{row['low']:+.0f}, {row['high']:+.0f}]", str(row["games"]),
                    "" if row["score"] is None else f"{100 * row['score']:.1f}%",
                    "" if row["los_next"] is None else f"{100 * row['los_next']:.1f}%")
    console.print(out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="satellites", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    tr = sub.add_parser("train", help="train a policy by self-play (the learner the config "
                        "names: PPO or AlphaZero)")
    tr.add_argument("--config", required=True, help="a shipped config's name (az_quick, "
                    "az_standard, quick, standard) or a YAML file")
    tr.add_argument("--out", type=Path, help="run folder (default runs/<config name>)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out")
    add_ray_option(tr, "self-play in Ray actors (distributed.backend: ray): alone, a local Ray "
                   "on this machine; with the address of a cluster started by `ray start "
                   "--head` (or auto), join it")

    ex = sub.add_parser("exploit", help="train an exploiter of a frozen agent (AlphaZero from "
                        "the rules, every self-play game against it) and show what it found")
    ex.add_argument("--target", required=True, help="the agent to exploit: random, greedy, "
                    "mcts:N, checkpoint:PATH, az:PATH[:SIMS], rllib:PATH")
    ex.add_argument("--minutes", type=MINUTES, required=True,
                    help="training time budget in minutes (summed over --resume sessions)")
    ex.add_argument("--out", type=Path, help="run folder (default runs/exploit-<target>)")
    ex.add_argument("--config", help="an AlphaZero config's name or YAML file (default "
                    "exploit)")
    ex.add_argument("--seed", type=SEED, help="the run's seed (default: the config's)")
    ex.add_argument("--games", type=GAMES, default=200, help="final games against the "
                    "target, per player (default 200)")
    ex.add_argument("--init", metavar="NETWORK", help="start from this network (a "
                    "checkpoint file or pretrained) instead of a random one; the model is "
                    "its shape")
    ex.add_argument("--resume", action="store_true", help="continue the run in --out")
    add_ray_option(ex, "self-play in Ray actors, as in train")

    ev = sub.add_parser("evaluate", help="round-robin tournament between agents")
    ev.add_argument("--agents", nargs="+", required=True,
                    help="agent specs: random, greedy, mcts:N, checkpoint:PATH, "
                    "az:PATH[:SIMS], rllib:PATH")
    ev.add_argument("--games", type=GAMES, default=100,
                    help="games per pairing, 1-1000000 (colors balanced; default 100)")
    ev.add_argument("--seed", type=SEED, default=0, help="seed of the set-ups and agents, "
                    "0-4294967295 (default 0)")
    ev.add_argument("--workers", type=WORKERS, default=1,
                    help="processes (Ray actors with --ray), 1-256, each on one thread (2 uses "
                    "both cores here)")
    ev.add_argument("--max-moves", type=MAX_MOVES, default=DEFAULT_MAX_MOVES,
                    help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})")
    add_ray_option(ev, "play the games in --workers Ray actors: alone, a local Ray; with an "
                   "address, that cluster (the same results as without)")
    ev.add_argument("--out", type=Path, help="write the results as JSON to this file (checked "
                    "before the first game; winners are \"red\", \"blue\" or null). Ctrl-C "
                    "writes the games finished, marked \"complete\": false, and the same "
                    "command continues the tournament")
    ev.add_argument("--records", type=Path,
                    help="save every game record and its HTML replay in this folder, which "
                    f"must be new or empty (a non-empty one is refused, except the folder of "
                    f"this command stopped by Ctrl-C, which it continues), with {MANIFEST} "
                    f"(the results, and which record is which game) and {INDEX} (every game, "
                    "linked to its replay)")

    pl = sub.add_parser("play", help="play a game in the terminal against an agent")
    pl.add_argument("--opponent", default="mcts:200", help="agent spec (default mcts:200)")
    pl.add_argument("--color", "--colour", dest="color", choices=("red", "blue"), default="red")
    pl.add_argument("--seed", type=SEED, default=0, help="0-4294967295 (default 0)")
    pl.add_argument("--render", choices=("ansi", "human"), default="ansi")
    pl.add_argument("--max-moves", type=MAX_MOVES, default=DEFAULT_MAX_MOVES,
                    help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})")
    pl.add_argument("--save", type=Path, help="save the game record (JSON) to this file, "
                    "however the game stops (checked before the game)")

    sv = sub.add_parser("serve", help="play against an agent in the browser (a local page)")
    sv.add_argument("--opponent", default="mcts:200", help="agent spec (default mcts:200)")
    sv.add_argument("--port", type=PORT, default=8000,
                    help="port, 0-65535; 0 picks a free one (default 8000)")
    sv.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only; "
                    "0.0.0.0 or :: for every address; an empty one is refused)")
    sv.add_argument("--max-moves", type=MAX_MOVES, default=DEFAULT_MAX_MOVES,
                    help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})")
    sv.add_argument("--open", action="store_true", help="open the page in the web browser")

    rp = sub.add_parser("replay", help="show a saved game: HTML page, GIF or boards")
    rp.add_argument("record", type=Path, help="a game record (.json)")
    rp.add_argument("--html", type=Path, help="write a self-contained HTML replay page")
    rp.add_argument("--gif", type=Path, help="write an animated GIF")
    rp.add_argument("--boards", action="store_true",
                    help="print every board at once (without --gif or --html, a terminal "
                    "steps through the game on key presses instead)")
    rp.add_argument("--frame-size", type=FRAME_SIZE, default=480,
                    help="GIF frame size in pixels, 64-4096 (default 480)")
    rp.add_argument("--fps", type=FPS, default=2.0,
                    help="GIF frames per second, 0.1 to 50 (default 2); a frame lasts a whole "
                    "number of hundredths of a second, so rates are rounded to 100/n")

    dm = sub.add_parser("demo", help="play and render one game between two agents")
    dm.add_argument("--seed", type=SEED, default=0, help="seed of the set-up and the agents")
    dm.add_argument("--max-moves", type=MAX_MOVES, default=DEFAULT_MAX_MOVES,
                    help="move cap (R20)")
    dm.add_argument("--gif", type=Path, default=None, help="save the game as an animated GIF")
    dm.add_argument("--frame-size", type=FRAME_SIZE, default=400,
                    help="GIF frame size in pixels, 64-4096")
    dm.add_argument("--red", default="greedy", help="agent spec playing red")
    dm.add_argument("--blue", default="random", help="agent spec playing blue")

    ld = sub.add_parser("ladder", help="a rating ladder: every game in a database, ratings "
                        "with 95%% intervals")
    steps = ld.add_subparsers(dest="ladder", required=True)
    db_help = "the ladder's database (default ladder.db)"
    la = steps.add_parser("add", help="add agents to the ladder (it is created if missing)")
    la.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs")
    la.add_argument("--name", help="the agent's name on the ladder (one SPEC; default: SPEC)")
    la.add_argument("--seed", type=SEED, help="a new ladder's seed: every game's set-up "
                    "follows from it and the pair (default 0)")
    la.add_argument("--max-moves", type=MAX_MOVES, help="a new ladder's "
                    "move cap per game (default 400, R20)")
    lr = steps.add_parser("run", help="play the games each pair of agents still lacks")
    lr.add_argument("--games-per-pair", type=int_in(1, 100_000), default=20,
                    help="games per pair of agents, colours balanced (default 20)")
    lq = steps.add_parser("rate", help="rate one agent against the ladder's fixed ratings")
    lq.add_argument("spec", metavar="SPEC", help="the agent spec to rate")
    lq.add_argument("--games", type=int_in(2, 100_000), default=200,
                    help="games to play (default 200)")
    lq.add_argument("--name", help="its name in the database (default: SPEC)")
    for command in (lr, lq):
        command.add_argument("--workers", type=WORKERS, default=1,
                             help="games in parallel (processes, or Ray actors with --ray)")
        add_ray_option(command, "play the games in Ray actors (a local Ray, or the cluster "
                       "at ADDRESS)")
    ls = steps.add_parser("show", help="the ratings, intervals, games and head-to-head matrix")
    ls.add_argument("--html", type=Path, help="write the leaderboard page (and every game's "
                    "replay) into this folder")
    ls.add_argument("--json", action="store_true", help="print the table as JSON")
    ls.add_argument("--csv", action="store_true", help="print the ratings as CSV")
    for command in (la, lr, lq, ls):
        command.add_argument("--db", type=Path, default=Path("ladder.db"), help=db_help)
    return parser


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename!r}" if error.filename else ""
        return f"{error.strerror}{where}"
    return str(error) or type(error).__name__


def run_command(args: argparse.Namespace) -> None:
    if args.command == "train":
        train(args.config, args.out, args.resume, args.ray)
    elif args.command == "exploit":
        exploit(args.target, args.minutes, args.out, args.config, args.seed, args.games,
                args.resume, args.ray, args.init)
    elif args.command == "evaluate":
        evaluate(args.agents, args.games, args.seed, args.workers, args.out, args.records,
                 args.max_moves, args.ray)
    elif args.command == "play":
        play(args.opponent, args.color, args.seed, args.render, args.max_moves, args.save)
    elif args.command == "serve":
        serve(args.opponent, args.host, args.port, args.max_moves, args.open)
    elif args.command == "replay":
        replay(args.record, args.gif, args.boards, args.frame_size, args.fps, args.html)
    elif args.command == "demo":
        demo(args.seed, args.max_moves, args.gif, args.frame_size, args.red, args.blue)
    elif args.command == "ladder":
        if args.ladder == "add":
            ladder_add(args.db, args.specs, args.name, args.seed, args.max_moves)
        elif args.ladder == "run":
            ladder_run(args.db, args.games_per_pair, args.workers, args.ray)
        elif args.ladder == "rate":
            ladder_rate(args.db, args.spec, args.games, args.workers, args.ray, args.name)
        else:
            if args.json and args.csv:
                raise CliError("--json and --csv: choose one")
            ladder_show(args.db, args.html, args.json, args.csv)


def main(argv: list[str] | None = None) -> int:
    """Run the command; the exit status: 0 done, 2 a user error (one `error: ...` line),
    130 interrupted, 1 an internal error (a bug: set SATELLITES_TRACEBACK=1 to see it)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit:  # --help, or argparse's usage error (it printed why)
        return exit.code if isinstance(exit.code, int) else EXIT_ERROR if exit.code else 0
    try:
        run_command(args)
    except KeyboardInterrupt:
        errors.print("interrupted")
        return EXIT_INTERRUPTED
    except (ValueError, OSError) as error:  # user errors: spec, record, SPN, config, paths...
        errors.print(f"[red]error:[/red] {escape(_describe(error))}")
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - a bug: still one line, unless asked
        if os.environ.get("SATELLITES_TRACEBACK"):
            raise
        errors.print(f"[red]internal error:[/red] {type(error).__name__}: "
                     f"{escape(str(error))} (please report it; SATELLITES_TRACEBACK=1 shows "
                     f"the traceback)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
