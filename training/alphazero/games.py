"""The batched evaluation games: a network agent against an opponent in many games at
once, each side moving through its seat ([`OpponentSeat`][training.common.seats.OpponentSeat],
as the opponent does in self-play), the games the arena plays one at a time
(`arena.play_pairing_game`)."""

from __future__ import annotations

import numpy as np

from satellites_env.agents import make_agent
from satellites_env.agents.base import Agent
from satellites_env.core.game import Game
from satellites_env.pairing import pairing_game
from satellites_env.record import GameRecord

from ..common.network import PolicyValueNet
from .agent import AZAgent, BatchedPlayer
from .config import AZSearchConfig
from .seats import BatchedSeat, opponent_seat


def play_search_games(
    net: PolicyValueNet,
    opponent: str,
    games: list[int],
    seed: int,
    max_moves: int,
    *,
    simulations: int,
    settings: AZSearchConfig,
) -> list:
    """Games `games` of the pairing (the network's search `az-search:SIMS`, `opponent`), all
    at once ([`play_batched_games`][training.alphazero.games.play_batched_games])."""
    agent = AZAgent(net, simulations, settings=settings)
    agent.spec = f"az-search:{simulations}"
    return play_batched_games(agent, opponent, games, seed, max_moves)


def play_batched_games(
    agent: Agent, opponent: str, games: list[int], seed: int, max_moves: int
) -> list:
    """Games `games` of the pairing (`agent`, `opponent`) as `arena.play_pairing_game` plays
    them (set-ups, colours and opponent seeds from `satellites_env.pairing.pairing_game`; the
    agent is deterministic), all at once. The agent has a batched form
    ([`BatchedPlayer.of`][training.alphazero.agent.BatchedPlayer.of]: a network's search or
    its raw policy's argmax); its moves in every game waiting for one are found together, one
    forward pass per simulation step for all of them, and so are the opponent's where it is a
    network agent. Both sides move through their seats
    ([`OpponentSeat`][training.common.seats.OpponentSeat]), as in self-play.
    [(game index, record)] in the order of `games`."""
    n = len(games)
    if not n:
        return []
    spec = agent.spec
    pairing = [pairing_game(i, seed) for i in games]  # the agent is a, the opponent b
    boards = [Game.new(seed=g.setup_seed, max_moves=max_moves) for g in pairing]
    starts = [game.to_spn() for game in boards]
    ours = [0 if g.a_is_red else 1 for g in pairing]
    first = make_agent(opponent, seed=0)

    def rival(b: int) -> Agent:  # a plain opponent: an agent per game, seeded by the pairing
        player = first if b == 0 else make_agent(opponent, seed=0)
        player.reset(seed=pairing[b].seed_b)
        return player

    ours_player = BatchedPlayer.of(agent, n, max_moves)
    if ours_player is None:
        raise ValueError(f"{spec} has no batched form (a network's search or raw argmax)")
    # the agent's and the opponent's seats, indexed by "the opponent is to move"
    seats = (BatchedSeat(ours_player), opponent_seat(first, n, max_moves, rival))
    waiting = np.zeros(n, bool)  # a seat searches the game's next move
    while True:
        for b, game in enumerate(boards):
            while not waiting[b] and not game.is_over:
                waiting[b] = seats[int(game.to_move != ours[b])].take_turn(b, game)
        if not waiting.any():
            break
        for seat in seats:
            if seat.busy:
                for b in seat.step():
                    boards[b].play(int(seat.action[b]))
                    waiting[b] = False
    return [
        (g.index, GameRecord.of(start, game, g.colors(spec, opponent)))
        for g, start, game in zip(pairing, starts, boards, strict=True)
    ]
