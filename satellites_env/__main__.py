"""`python -m satellites_env demo`: play one game between two agents and render it.

The game goes through the wrapped PettingZoo env like any user's loop; the agents are any
specs of :func:`satellites_env.agents.make_agent` (greedy against random by default).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from . import satellites_v0
from .agents import make_agent
from .render import render_rgb, render_text, save_gif


def play_demo(seed: int, max_moves: int, gif: Path | None, frame_size: int,
              red: str = "greedy", blue: str = "random") -> None:
    console = Console()
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m satellites_env")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and render one game between two agents")
    demo.add_argument("--seed", type=int, default=0, help="seed of the set-up and the agents")
    demo.add_argument("--max-moves", type=int, default=400, help="move cap (R20)")
    demo.add_argument("--gif", type=Path, default=None, help="save the game as an animated GIF")
    demo.add_argument("--frame-size", type=int, default=400, help="GIF frame size in pixels")
    demo.add_argument("--red", default="greedy", help="agent spec playing red")
    demo.add_argument("--blue", default="random", help="agent spec playing blue")
    args = parser.parse_args(argv)
    play_demo(args.seed, args.max_moves, args.gif, args.frame_size, args.red, args.blue)


if __name__ == "__main__":
    main()
