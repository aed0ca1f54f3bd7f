"""The `satellites` command line: train, evaluate, play, replay, demo.

`train` and `checkpoint:` agents load the trainer (PyTorch) lazily; everything else is torch-free.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TextColumn
from rich.table import Table

from .agents import make_agent
from .core.board import DEFAULT_MAX_MOVES
from .core.game import Game
from .core.notation import NotationError
from .core.rules import IllegalActionError
from .record import GameRecord

from .arena import TournamentResult, rate_with_interval, run_tournament

# Long messages stay on one line (greppable); tables keep their columns when piped to a file.
console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)


# --------------------------------------------------------------------------- evaluate


def results_table(result: TournamentResult, title: str) -> Table:
    table = Table(title=title)
    for column in ("a", "b", "games", "a wins", "draws", "b wins", "a win rate (95% CI)",
                   "b win rate (95% CI)"):
        table.add_column(column, justify="left" if column in ("a", "b") else "right")
    for pair in result.pairs:
        table.add_row(pair.a, pair.b, str(pair.games), str(pair.a_wins), str(pair.draws),
                      str(pair.b_wins), rate_with_interval(pair.a_wins, pair.games),
                      rate_with_interval(pair.b_wins, pair.games))
    return table


def elo_table(result: TournamentResult) -> Table:
    table = Table(title="Elo, random = 0")
    table.add_column("agent")
    table.add_column("Elo", justify="right")
    for agent, elo in sorted(result.elo.items(), key=lambda item: -item[1]):
        table.add_row(agent, f"{elo:+.0f}")
    return table


def evaluate(specs: list[str], games: int, seed: int, workers: int, out: Path | None,
             records: Path | None, max_moves: int) -> TournamentResult:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("games", total=None)
        result = run_tournament(specs, games, seed, workers, max_moves,
                                progress=lambda done, total: progress.update(
                                    task, completed=done, total=total))
    console.print(results_table(result, f"{games} games per pairing, seed {seed}"))
    console.print(elo_table(result))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result.as_dict(), indent=1) + "\n")
        console.print(f"wrote {out}")
    if records:
        records.mkdir(parents=True, exist_ok=True)
        for k, record in enumerate(result.records):
            record.save(records / f"game_{k:04d}.json")
        console.print(f"wrote {len(result.records)} game records to {records}/")
    return result


# --------------------------------------------------------------------------- play


def play(opponent: str, colour: str, seed: int, render: str, max_moves: int,
         save: Path | None, input_fn=input) -> GameRecord:
    """Play a game against `opponent` in the terminal, moves typed in notation."""
    from .render import HumanWindow, render_rgb, render_text

    agent = make_agent(opponent, seed=seed)
    game = Game.new(seed=seed, max_moves=max_moves)
    start = game.to_spn()
    you = 0 if colour == "red" else 1
    window = HumanWindow() if render == "human" else None
    console.print(f"You are {colour}. Type moves like c10-c7, c10-f7>f9 (displacement) or "
                  f"pass; 'moves' lists your legal moves, 'quit' resigns.")

    def show() -> None:
        last = game.history[-1] if game.history else None
        console.print(render_text(game, last_move=last), markup=False, highlight=False)
        if window:
            window.show(render_rgb(game, last_move=last))

    show()
    while not game.is_over:
        if game.to_move != you:
            before = len(game.history)
            while game.to_move != you and not game.is_over and len(game.history) == before:
                game.play(agent.act(game))
            console.print(f"{opponent} plays {game.history[-1]}")
            show()
            continue
        try:
            text = input_fn(f"move {game.moves + 1} ({colour})> ").strip()
        except EOFError:
            console.print("input closed: game abandoned")
            break
        if text in ("quit", "exit", "resign"):
            console.print("you resigned")
            break
        if text in ("moves", "help", "?"):
            console.print(", ".join(game.legal_moves()))
            continue
        try:
            game.play_move(text)
        except (NotationError, IllegalActionError) as error:
            console.print(f"[red]not played:[/red] {error}")
            continue
        show()
    record = GameRecord.of(start, game, {"red": "human" if you == 0 else opponent,
                                         "blue": "human" if you == 1 else opponent})
    if game.is_over:
        console.print(f"result: {record.result['winner']} — {record.result['reason']}")
    if save:
        record.save(save)
        console.print(f"saved the game to {save}")
    if window:
        window.close()
    return record


# --------------------------------------------------------------------------- replay


def replay(path: Path, gif: Path | None, boards: bool, frame_size: int, fps: float) -> None:
    from .render import render_rgb, render_text, save_gif

    record = GameRecord.load(path)
    positions = record.replay()
    lasts = [None] + record.moves
    if boards or not gif:
        for game, last in zip(positions, lasts):
            console.print(render_text(game, last_move=last), markup=False, highlight=False)
    if gif:
        frames = [render_rgb(game, size=frame_size, last_move=last)
                  for game, last in zip(positions, lasts)]
        save_gif(frames, gif, fps=fps)
        console.print(f"wrote {len(frames)} frames to {gif}")


# --------------------------------------------------------------------------- train


def train(config_path: Path, out: Path | None, resume: bool) -> None:
    """`satellites train`: the learner named by the config (needs the `train` extra)."""
    try:
        from training.train import train as run_training
    except ImportError as error:
        raise ValueError("`satellites train` needs the trainer: install the 'train' extra "
                         f"(pip install 'satellites[train]'); import failed: {error}") from error
    run_training(config_path, out, resume, console)


# --------------------------------------------------------------------------- demo


def demo(seed: int, max_moves: int, gif: Path | None, frame_size: int,
         red: str = "greedy", blue: str = "random") -> None:
    """Play one game between two agents through the wrapped PettingZoo env and render it."""
    from . import satellites_v0
    from .render import render_rgb, render_text, save_gif

    env = satellites_v0.env(render_mode="ansi", max_moves=max_moves)
    env.reset(seed=seed)
    game = env.unwrapped.game
    agents = {"player_0": make_agent(red, seed=seed), "player_1": make_agent(blue, seed=seed + 1)}
    frames = [render_rgb(game, size=frame_size)] if gif else []
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
                if gif:
                    frames.append(render_rgb(game, size=frame_size, last_move=game.history[-1]))
    console.print(render_text(game), markup=False, highlight=False)
    result = game.score()
    console.print(f"moves: {game.moves}  ended by: "
                  f"{'move cap (truncation)' if game.truncated else 'the rules'}  "
                  f"rewards: red {result.reward(0):+d}, blue {result.reward(1):+d}")
    console.print(f"red = {red}, blue = {blue}; result: {result.reason}")
    if gif:
        save_gif(frames, gif)
        console.print(f"saved {len(frames)} frames to {gif}")


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="satellites", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    tr = sub.add_parser("train", help="train a policy by self-play (PPO)")
    tr.add_argument("--config", type=Path, required=True, help="YAML run config, e.g. "
                    "configs/quick.yaml")
    tr.add_argument("--out", type=Path, help="run folder (default runs/<config name>)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out")

    ev = sub.add_parser("evaluate", help="round-robin tournament between agents")
    ev.add_argument("--agents", nargs="+", required=True,
                    help="agent specs: random, greedy, mcts:N, checkpoint:PATH")
    ev.add_argument("--games", type=int, default=100, help="games per pairing (colours balanced)")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--workers", type=int, default=1, help="processes (2 uses both cores here)")
    ev.add_argument("--max-moves", type=int, default=DEFAULT_MAX_MOVES)
    ev.add_argument("--out", type=Path, help="write the results as JSON")
    ev.add_argument("--records", type=Path, help="folder to save every game record in")

    pl = sub.add_parser("play", help="play a game in the terminal against an agent")
    pl.add_argument("--opponent", default="mcts:200")
    pl.add_argument("--color", "--colour", dest="colour", choices=("red", "blue"), default="red")
    pl.add_argument("--seed", type=int, default=0)
    pl.add_argument("--render", choices=("ansi", "human"), default="ansi")
    pl.add_argument("--max-moves", type=int, default=DEFAULT_MAX_MOVES)
    pl.add_argument("--save", type=Path, help="save the game record (JSON)")

    rp = sub.add_parser("replay", help="show a saved game as boards or a GIF")
    rp.add_argument("record", type=Path)
    rp.add_argument("--gif", type=Path, help="write an animated GIF")
    rp.add_argument("--boards", action="store_true", help="print every board (default without --gif)")
    rp.add_argument("--frame-size", type=int, default=480)
    rp.add_argument("--fps", type=float, default=2.0)

    dm = sub.add_parser("demo", help="play and render one game between two agents")
    dm.add_argument("--seed", type=int, default=0, help="seed of the set-up and the agents")
    dm.add_argument("--max-moves", type=int, default=DEFAULT_MAX_MOVES, help="move cap (R20)")
    dm.add_argument("--gif", type=Path, default=None, help="save the game as an animated GIF")
    dm.add_argument("--frame-size", type=int, default=400, help="GIF frame size in pixels")
    dm.add_argument("--red", default="greedy", help="agent spec playing red")
    dm.add_argument("--blue", default="random", help="agent spec playing blue")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "train":
            train(args.config, args.out, args.resume)
        elif args.command == "evaluate":
            evaluate(args.agents, args.games, args.seed, args.workers, args.out, args.records,
                     args.max_moves)
        elif args.command == "play":
            play(args.opponent, args.colour, args.seed, args.render, args.max_moves, args.save)
        elif args.command == "replay":
            replay(args.record, args.gif, args.boards, args.frame_size, args.fps)
        elif args.command == "demo":
            demo(args.seed, args.max_moves, args.gif, args.frame_size, args.red, args.blue)
    except (ValueError, FileExistsError) as error:  # user errors: bad spec, record, config...
        console.print(f"[red]error:[/red] {error}", highlight=False)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
