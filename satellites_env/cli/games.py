"""The commands that play or show single games: `play`, `demo` and `replay` in the terminal
(`satellites_env.terminal_game`) and `serve`, the play page in a browser (Starlette and
uvicorn, the `web` extra), each with its options and its handler."""

from __future__ import annotations

from ..terminal import CliError, say
from ..terminal_game import demo, play, replay
from .options import (
    FPS,
    FRAME_SIZE,
    PORT,
    Commands,
    add_force,
    add_max_moves,
    add_seed,
    path_arg,
)

# --------------------------------------------------------------------------- play


def add_play(sub: Commands) -> None:
    """`satellites play`."""
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
    add_seed(pl, "the set-up and the agent")
    pl.add_argument(
        "--render",
        choices=("ansi", "human"),
        default="ansi",
        help="ansi: boards in the terminal; human: also a window (default ansi)",
    )
    add_max_moves(pl)
    pl.add_argument(
        "--save",
        type=path_arg,
        help="save the game record (JSON) to this file, "
        "however the game stops (checked before the game)",
    )
    add_force(pl, "--save")
    pl.set_defaults(
        run=lambda args: play(
            args.opponent,
            args.color,
            args.seed,
            args.render,
            args.max_moves,
            args.save,
            force=args.force,
        )
    )


# --------------------------------------------------------------------------- serve


def add_serve(sub: Commands) -> None:
    """`satellites serve`."""
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
    add_max_moves(sv)
    sv.add_argument("--open", action="store_true", help="open the page in the web browser")
    sv.set_defaults(
        run=lambda args: serve(args.opponent, args.host, args.port, args.max_moves, args.open)
    )


def serve(opponent: str, host: str, port: int, max_moves: int, open_browser: bool) -> None:
    """`satellites serve`: the play page on http://HOST:PORT/ until Ctrl-C."""
    try:
        from ..web.server import serve as run_server
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


# --------------------------------------------------------------------------- replay


def add_replay(sub: Commands) -> None:
    """`satellites replay`."""
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
    add_force(rp, "--html and --gif")
    rp.set_defaults(
        run=lambda args: replay(
            args.record,
            args.gif,
            args.boards,
            args.frame_size,
            args.fps,
            args.html,
            force=args.force,
        )
    )


# --------------------------------------------------------------------------- demo


def add_demo(sub: Commands) -> None:
    """`satellites demo`."""
    dm = sub.add_parser("demo", help="play and render one game between two agents")
    add_seed(dm, "the set-up and the agents")
    add_max_moves(dm)
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
    add_force(dm, "--gif")
    dm.set_defaults(
        run=lambda args: demo(
            args.seed,
            args.max_moves,
            args.gif,
            args.frame_size,
            args.red,
            args.blue,
            force=args.force,
        )
    )
