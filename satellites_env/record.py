"""Game records: the start position (SPN) and the moves in notation, saved as JSON.

Every game played by the tools can be saved and replayed into boards or a GIF.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .core.board import DEFAULT_MAX_MOVES
from .core.game import Game


class RecordError(ValueError):
    """A game record file that is missing, malformed or does not replay."""


@dataclass
class GameRecord:
    """A whole game: enough to replay it exactly."""

    start_spn: str
    moves: list[str]
    max_moves: int = DEFAULT_MAX_MOVES
    players: dict[str, str] = field(default_factory=dict)  # {"red": spec, "blue": spec}
    result: dict = field(default_factory=dict)  # winner, reason, final SPN, end

    @classmethod
    def of(cls, start_spn: str, game: Game, players: dict[str, str] | None = None) -> "GameRecord":
        """The record of `game`, which started from `start_spn`."""
        score = game.score()
        winner = {0: "red", 1: "blue", None: "draw"}[score.winner]
        end = "truncated" if game.truncated else "terminated" if game.terminated else "ongoing"
        return cls(start_spn, list(game.history), game.max_moves, dict(players or {}),
                   {"winner": winner, "reason": score.reason, "end": end,
                    "final_spn": game.to_spn() if game.pending_push is None else None})

    def replay(self) -> list[Game]:
        """The game after each move: [start, after move 1, ...]; raises RecordError if a move
        does not apply."""
        game = Game.from_spn(self.start_spn, self.max_moves)
        positions = [game.clone()]
        for number, move in enumerate(self.moves, start=1):
            try:
                game.play_move(move)
            except ValueError as error:
                raise RecordError(f"move {number} {move!r} does not apply: {error}") from error
            positions.append(game.clone())
        return positions

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "GameRecord":
        path = Path(path)
        if not path.is_file():
            raise RecordError(f"game record {str(path)!r} does not exist")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise RecordError(f"game record {str(path)!r} is not valid JSON: {error}") from error
        if not isinstance(data, dict) or not {"start_spn", "moves"} <= set(data):
            raise RecordError(f"game record {str(path)!r} needs the keys 'start_spn' and 'moves'")
        unknown = set(data) - {"start_spn", "moves", "max_moves", "players", "result"}
        if unknown:
            raise RecordError(f"game record {str(path)!r} has unknown keys {sorted(unknown)}")
        return cls(**data)
