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
exits 130, and the same command continues the tournament (`satellites_env.tournament`).
Outputs are renamed into place and never replace a folder, a special file (FIFO, device,
socket) or a symbolic link (`satellites_env.files`).
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import stat
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import tournament
from .agents import make_agent
from .arena import TournamentResult, rate_with_interval
from .core.batch import configure_threads
from .core.board import DEFAULT_MAX_MOVES
from .core.checks import quoted_path
from .core.engine import IllegalActionError
from .core.game import Game
from .core.notation import NotationError
from .files import check_output_file, kind_of, write_or_fallback
from .record import GameRecord

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


# --------------------------------------------------------------------------- output paths


def _show(path: Path) -> str:
    return quoted_path(path)


def _kind_of(path: Path) -> str:
    """'a file', 'a FIFO (named pipe)', ...: what is at an existing path that is no folder."""
    mode = path.stat().st_mode
    return "a file" if stat.S_ISREG(mode) else kind_of(mode)


# --------------------------------------------------------------------------- evaluate


def results_table(result: TournamentResult, title: str) -> Table:
    table = Table(title=title)
    for column in (
        "a",
        "b",
        "games",
        "a wins",
        "draws",
        "b wins",
        "a win rate (95% CI)",
        "b win rate (95% CI)",
    ):
        table.add_column(column, justify="left" if column in ("a", "b") else "right")
    for pair in result.pairs:
        table.add_row(
            Text(pair.a),
            Text(pair.b),
            str(pair.games),
            str(pair.a_wins),
            str(pair.draws),
            str(pair.b_wins),
            *(
                (
                    rate_with_interval(pair.a_wins, pair.games),
                    rate_with_interval(pair.b_wins, pair.games),
                )
                if pair.games
                else ("-", "-")
            ),
        )  # a pair not reached before Ctrl-C
    return table


def elo_title(result: TournamentResult) -> str:
    """Names the agent whose rating is fixed (the shipped scale's anchor, or the first)."""
    from .rating import anchor_text

    anchor = result.elo_anchor or result.agents[0]
    return f"Elo, {anchor_text(anchor, result.elo.get(anchor, 0.0))}"


def elo_table(result: TournamentResult) -> Table:
    table = Table(title=Text(elo_title(result)))
    table.add_column("agent")
    table.add_column("Elo", justify="right")
    for agent, elo in sorted(result.elo.items(), key=lambda item: -item[1]):
        table.add_row(Text(agent), f"{elo:+.0f}")
    return table


MANIFEST, INDEX = tournament.MANIFEST, tournament.INDEX


class _Shown(tournament.Reporter):
    """`evaluate`'s view of a tournament: a progress bar, tables and one line per notice."""

    def __init__(self, title: str):
        self.title, self.bar = title, None

    def _show(self, name: str, done: int, total: int) -> None:
        if self.bar is None or self.bar.tasks[0].description != name:
            self.close()
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self.bar.add_task(name)
            self.bar.start()
        self.bar.update(self.bar.task_ids[0], completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar, bar = None, self.bar
            bar.stop()

    def games(self, done: int, total: int) -> None:
        self._show("games", done, total)

    def pages(self, done: int, total: int) -> None:
        self._show("replays", done, total)

    def ended(self, result: TournamentResult) -> None:
        self.close()
        played, total = len(result.finished), len(result.records)
        if result.complete:
            console.print(results_table(result, self.title))
            console.print(elo_table(result))
        elif played:
            console.print(
                results_table(result, f"{self.title}: interrupted, {played} of {total} games")
            )

    def message(self, text: str) -> None:
        self.close()
        say(text)

    def problem(self, text: str) -> None:
        errors.print(f"[red]error:[/red] {escape(text)}")


def evaluate(
    specs: list[str],
    games: int,
    seed: int,
    workers: int,
    out: Path | None,
    records: Path | None,
    max_moves: int,
    ray: str | None = None,
) -> TournamentResult:
    """`satellites evaluate` ([`tournament.play`][satellites_env.tournament.play] with
    progress bars and tables); `ray` None: this machine's processes, "" a local Ray, else
    the address of a Ray cluster (the games run in `workers` actors, with the same results).
    Ctrl-C keeps every finished game, and the same command continues the tournament."""
    shown = _Shown(f"{games} games per pairing, seed {seed}")
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
        )
    finally:
        shown.close()


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


def play(
    opponent: str,
    color: str,
    seed: int,
    render: str,
    max_moves: int,
    save: Path | None,
    input_fn: Callable[[str], str] | None = None,
) -> GameRecord:
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
    say(
        f"You are {color}. Type moves like c10-c7, c10-f7>f9 (displacement) or "
        f"pass; 'moves' lists your legal moves, 'quit' resigns."
    )

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


def replay(
    path: Path,
    gif: Path | None,
    boards: bool,
    frame_size: int,
    fps: float,
    html: Path | None = None,
    read_key: Callable[[], str] | None = None,
) -> None:
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


def step_through(positions: list[Game], record: GameRecord, read_key: Callable[[], str]) -> None:
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


# --------------------------------------------------------------------------- train


def trainer_command(name: str) -> Callable:
    """The trainer's command `name` (an entry point of the `train` extra: satellites_env
    imports no trainer code itself)."""
    points = entry_points(group="satellites.commands", name=name)
    try:
        return next(iter(points)).load()
    except (StopIteration, ImportError) as error:
        raise ValueError(
            f"`satellites {name}` needs the trainer: install the 'train' extra "
            f"(pip install 'satellites-env[train]'); "
            f"{error or 'not installed'}"
        ) from None


def train(config: str, out: Path | None, resume: bool, ray: str | None = None) -> None:
    """`satellites train`: the learner named by the config (needs the `train` extra); `ray`
    (a cluster address, or "" for a local Ray) runs self-play on Ray whatever the config says."""
    command = trainer_command("train")  # imports torch before the engine's thread settings
    configure_threads()
    command(config, out, resume, console, ray=ray)


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
) -> None:
    """`satellites exploit`: train an exploiter of the agent `target` for `minutes`, from a
    random network or from `init`, its search modelling the target by the target's network
    with `victim_play` (the `train` extra; training/exploit.py)."""
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
    )


# --------------------------------------------------------------------------- demo


def demo(
    seed: int,
    max_moves: int,
    gif: Path | None,
    frame_size: int,
    red: str = "greedy",
    blue: str = "random",
) -> None:
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
    console.print(
        f"moves: {game.moves}  ended by: "
        f"{'move cap (truncation)' if game.truncated else 'the rules'}  "
        f"rewards: red {result.reward(0):+d}, blue {result.reward(1):+d}"
    )
    say(f"red = {red}, blue = {blue}; result: {result.reason}")
    if gif:
        check_gif_budget(frames, frame_size, "--frame-size")

        def drawn():
            yield render_rgb(start, size=frame_size)
            for action in game.actions[len(start.actions) :]:
                start.play(action)
                if start.pending_push is None:
                    yield render_rgb(start, size=frame_size, last_move=start.history[-1])

        save_gif(drawn(), gif)
        say(f"saved {frames} frames to {gif}")


# --------------------------------------------------------------------------- main


# --------------------------------------------------------------------------- ladder


def _ladder(
    path: Path,
    create: bool,
    seed: int | None = None,
    max_moves: int | None = None,
    readonly: bool = False,
    allow_pickle: bool = False,
):
    from .core.board import DEFAULT_MAX_MOVES
    from .ladder import Ladder

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


def _progress_bar(label: str):
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )


def ladder_add(
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
    with _ladder(db, True, seed, max_moves) as ladder:
        for spec in specs:
            entry = ladder.add(spec, name=name)
            held = (
                ""
                if name is None or entry.name == name
                else f" already, by this name (--name {name} left unused)"
            )
            say(f"{entry.name}: on the ladder{held}, identity {entry.key[:60]}")


def ladder_run(
    db: Path, games: int, workers: int, ray: str | None, allow_pickle: bool = False
) -> None:
    """`satellites ladder run`: play every game the ladder's pairs still lack."""
    with (
        _ladder(db, create=False, allow_pickle=allow_pickle) as ladder,
        _progress_bar("games") as progress,
    ):
        task = progress.add_task("games", total=None)
        stored = ladder.run(
            games,
            workers,
            ray,
            lambda done, total: progress.update(task, completed=done, total=total),
        )
    say(f"{stored} games played and stored in {db}")
    ladder_show(db, None, False, False)


def ladder_rate(
    db: Path,
    spec: str,
    games: int,
    workers: int,
    ray: str | None,
    name: str | None,
    allow_pickle: bool = False,
) -> None:
    """`satellites ladder rate SPEC`: one agent's rating against the ladder's fixed ratings."""
    with (
        _ladder(db, create=False, allow_pickle=allow_pickle) as ladder,
        _progress_bar("games") as progress,
    ):
        task = progress.add_task("games", total=None)
        result = ladder.rate(
            spec,
            games,
            workers,
            ray,
            lambda done, total: progress.update(task, completed=done),
            name=name,
        )
    table = Table(
        title=Text(
            f"{result.name}: Elo {result.elo:+.0f} "
            f"[{result.low:+.0f}, {result.high:+.0f}] (95%), against the "
            f"ladder's fixed ratings"
        )
    )
    table.add_column("opponent")
    table.add_column("games", justify="right")
    for opponent, count in result.games.items():
        table.add_row(Text(opponent), str(count))
    console.print(table)


def ladder_show(db: Path, html: Path | None, as_json: bool, as_csv: bool) -> None:
    """`satellites ladder show`: the ratings, intervals, games and head-to-head matrix (a
    table, JSON, CSV of the ratings, or an HTML leaderboard). The database is opened for
    reading only."""
    import csv

    from .rating import anchor_text
    from .web.leaderboard import standings, write_leaderboard

    if html is not None:
        if html.exists() and not html.is_dir():
            raise CliError(
                f"--html {_show(html)} is {_kind_of(html)}; give a folder for the leaderboard page"
            )
        check_output_file(html / "index.html", "--html", "index.html")
    with _ladder(db, create=False, readonly=True) as ladder:
        table = standings(ladder)
        if html is not None:
            index = write_leaderboard(ladder, html)
            say(f"leaderboard: {index}")
    if as_json:
        print(json.dumps(table, indent=1, allow_nan=False))
        return
    if as_csv:
        columns = ("rank", "name", "spec", "elo", "low", "high", "games", "score", "los_next")
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(
            [("" if row[c] is None else row[c]) for c in columns] for row in table["agents"]
        )
        return
    out = Table(
        title=Text(
            f"Ladder {db}: {table['games']} games, Elo "
            f"{anchor_text(table['anchor'], table['anchor_elo'])}, "
            f"95% intervals"
        )
    )
    for column in ("#", "agent", "Elo", "95% interval", "games", "score", "LOS next"):
        out.add_column(column, justify="left" if column == "agent" else "right")
    for row in table["agents"]:
        out.add_row(
            str(row["rank"]),
            Text(row["name"]),
            f"{row['elo']:+.0f}",
            f"[{row['low']:+.0f}, {row['high']:+.0f}]",
            str(row["games"]),
            "" if row["score"] is None else f"{100 * row['score']:.1f}%",
            "" if row["los_next"] is None else f"{100 * row['los_next']:.1f}%",
        )
    console.print(out)
    names = [row["name"] for row in table["agents"]]
    if len(names) > 1:
        matrix = Table(
            title=Text("Head to head: the row's score against the column (by rank), in %")
        )
        matrix.add_column("agent")
        for rank in range(1, len(names) + 1):
            matrix.add_column(str(rank), justify="right")
        for rank, a in enumerate(names, start=1):
            cells = [table["matrix"].get(a, {}).get(b) for b in names]
            matrix.add_row(
                Text(f"{rank} {a}"),
                *(
                    "" if cell is None else f"{100 * cell['score'] / cell['games']:.0f}"
                    for cell in cells
                ),
            )
        console.print(matrix)


DESCRIPTION = """\
Satellites, a two-player board game: its agents, tournaments, rating ladder, replays, a play
page, and (with the train extra) self-play training.

A bad argument, agent spec, record, config or output path ends with one `error: ...` line
and exit status 2; Ctrl-C ends with status 130. Output paths are checked before any game is
played, and a finished game or tournament is never lost: if writing it fails at the end, it
goes to a fresh file in the current folder (or the temporary folder) and the message says
where."""

COMPILE_NOTE = (
    "The search kernels are compiled on first use (about 45 s), then cached for later runs."
)
AGENT_SPECS = "random, greedy, mcts:N, checkpoint:PATH, az:PATH[:SIMS], rllib:PATH"


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
        "az_quick, the main job, takes about 11 minutes on 2 cores. " + COMPILE_NOTE,
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
        help="training time budget in minutes (summed over --resume sessions)",
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
        "agents is compiled on first use (about 45 s), then cached for later "
        "runs.",
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
    ev.add_argument(
        "--seed",
        type=SEED,
        default=0,
        help="seed of the set-ups and agents, 0-4294967295 (default 0)",
    )
    ev.add_argument(
        "--workers",
        type=WORKERS,
        default=1,
        help="games in parallel, 1-256: processes (Ray actors with --ray), one "
        "CPU thread each; at most one per core pays off (default 1)",
    )
    ev.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=DEFAULT_MAX_MOVES,
        help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})",
    )
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
    pl.add_argument(
        "--seed",
        type=SEED,
        default=0,
        help="seed of the set-up and the agent, 0-4294967295 (default 0)",
    )
    pl.add_argument(
        "--render",
        choices=("ansi", "human"),
        default="ansi",
        help="ansi: boards in the terminal; human: also a window (default ansi)",
    )
    pl.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=DEFAULT_MAX_MOVES,
        help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})",
    )
    pl.add_argument(
        "--save",
        type=path_arg,
        help="save the game record (JSON) to this file, "
        "however the game stops (checked before the game)",
    )

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
    sv.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=DEFAULT_MAX_MOVES,
        help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})",
    )
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

    dm = sub.add_parser("demo", help="play and render one game between two agents")
    dm.add_argument(
        "--seed",
        type=SEED,
        default=0,
        help="seed of the set-up and the agents, 0-4294967295 (default 0)",
    )
    dm.add_argument(
        "--max-moves",
        type=MAX_MOVES,
        default=DEFAULT_MAX_MOVES,
        help=f"move cap (R20), 1-1000000 (default {DEFAULT_MAX_MOVES})",
    )
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
    for command in (la, lr, lq, ls):
        command.add_argument("--db", type=path_arg, default=Path("ladder.db"), help=db_help)
    return parser


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename!r}" if error.filename else ""
        return f"{error.strerror}{where}"
    return str(error) or type(error).__name__


def run_command(args: argparse.Namespace) -> None:
    if args.command not in ("train", "exploit"):  # those set it once torch is imported
        configure_threads()
    if args.command == "train":
        train(args.config, args.out, args.resume, args.ray)
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
        )
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
            ladder_run(args.db, args.games_per_pair, args.workers, args.ray, args.allow_pickle)
        elif args.ladder == "rate":
            ladder_rate(
                args.db, args.spec, args.games, args.workers, args.ray, args.name, args.allow_pickle
            )
        else:
            if args.json and args.csv:
                raise CliError("--json and --csv: choose one")
            ladder_show(args.db, args.html, args.json, args.csv)


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
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, as Unix tools do
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, OSError) as error:  # user errors: spec, record, SPN, config, paths...
        errors.print(f"[red]error:[/red] {escape(_describe(error))}")
        return EXIT_ERROR
    except Exception as error:
        if os.environ.get("SATELLITES_TRACEBACK"):
            raise
        errors.print(
            f"[red]internal error:[/red] {type(error).__name__}: "
            f"{escape(str(error))} (please report it; SATELLITES_TRACEBACK=1 shows "
            f"the traceback)"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
