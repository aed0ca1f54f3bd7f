"""Games in the terminal: play one against an agent, watch two agents play one, or show a
saved one.

[`play`][satellites_env.terminal_game.play] is `satellites play`: the boards in the
terminal (and a window with `render="human"`), moves typed in notation.
[`demo`][satellites_env.terminal_game.demo] is `satellites demo`: two agents play one game
through the PettingZoo env. [`replay`][satellites_env.terminal_game.replay] is
`satellites replay`: an HTML page, a GIF, or the boards; in a terminal,
[`step_through`][satellites_env.terminal_game.step_through] shows one position at a time,
moved by key presses.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from pathlib import Path

from rich.markup import escape
from rich.progress import Progress

from .agents import make_agent
from .core.engine import IllegalActionError
from .core.game import Game
from .core.notation import NotationError
from .files import check_output_file, write_or_fallback
from .record import GameRecord
from .terminal import CliError, console, interactive, say
from .terminal import read_key as terminal_key


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
            assert obs is not None and obs["action_mask"][action], "agents only play legal actions"
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
