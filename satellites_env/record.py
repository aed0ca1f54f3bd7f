"""Game records: the start position (SPN) and the moves in notation, saved as JSON.

Every game played by the tools can be saved and replayed into boards or a GIF. A record file
is one JSON object:

- `start_spn` (string, required): the start position in SPN (RULES.md section 7);
- `moves` (list of strings, required): the whole moves in notation (`c10-c7`, `c10-f7>f9`,
  `pass`);
- `max_moves` (integer >= 1, default 400): the move cap (R20);
- `players` (object): `{"red": spec, "blue": spec}`;
- `result` (object): `winner` (`"red"`, `"blue"` or `null` for a draw or no result),
  `reason` (text), `end` (`"terminated"`, `"truncated"`, `"resigned"` or `"ongoing"` for a
  game stopped before its end) and `final_spn` (the last position).

`GameRecord.load` / `from_dict` check every field and raise
[`RecordError`][satellites_env.record.RecordError] naming the field and what was expected (`load`
reads a regular file of at most `MAX_RECORD_BYTES`, 64 MiB, refuses a FIFO or a device without
opening it, and refuses a key given twice in one JSON object: JSON does not say which one counts).
`replay()` raises it when a move does not apply or the stated result is not the one the moves give,
naming the field:

- a game the moves finish: `end` must be how it ended (`"terminated"` by the rules,
  `"truncated"` at the move cap), `winner` the engine's winner (null for a draw) and `reason`
  the engine's words for it (as [`GameRecord.of`][satellites_env.record.GameRecord.of] writes them);
- a game the moves do not finish: `end` must be `"resigned"` (then `winner` is a color, not
  null, and `reason` is `"<the other color> resigned"`) or `"ongoing"` (no winner, the reason
  `ONGOING_REASON`); a record without `end` is read as `"ongoing"`;
- `final_spn` must be the position after the moves.

A field left out of `result` is not checked (older records have none); which color resigned
cannot be checked against the moves.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NoReturn

from .core.board import COLOR_NAMES, DEFAULT_MAX_MOVES, MAX_MOVES_LIMIT
from .core.checks import quoted, quoted_path
from .core.game import Game
from .core.notation import NotationError, parse_move_text, parse_spn
from .files import FileKindError, read_input, write_output

COLORS = COLOR_NAMES  # ("red", "blue")
WINNERS = ("red", "blue", None)  # None: a draw, or no result (a game stopped before its end)
ENDS = ("terminated", "truncated", "resigned", "ongoing")
#: the largest record file read: 64 MiB, four times a record of a game of 1,000,000 moves
#: (the command line's largest --max-moves)
MAX_RECORD_BYTES = 64 * 1024 * 1024
ONGOING_REASON = "stopped before the end: no result"  # the reason of an unfinished game
KEYS = ("start_spn", "moves", "max_moves", "players", "result")
RESULT_KEYS = ("winner", "reason", "end", "final_spn")


class RecordError(ValueError):
    """A game record file that is missing, malformed or does not replay."""


class _DuplicateKey(Exception):
    """A key given twice in one JSON object (raised while parsing, turned into RecordError)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object's dict, refusing a key that comes twice (json keeps the last silently)."""
    data = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


def _kind(value: object) -> str:
    """`int 5`, `null`, `list`...: a JSON value's type (and a bounded quote of it) for
    messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"{type(value).__name__} {quoted(value)}"
    if isinstance(value, str):
        return f"string {quoted(value)}"
    names: dict[type, str] = {dict: "object", list: "list"}
    return names.get(type(value), type(value).__name__)


@dataclass
class GameRecord:
    """A whole game: enough to replay it exactly."""

    start_spn: str
    moves: list[str]
    max_moves: int = DEFAULT_MAX_MOVES
    players: dict[str, str] = field(default_factory=dict)  # {"red": spec, "blue": spec}
    result: dict = field(default_factory=dict)  # winner, reason, end, final_spn

    @classmethod
    def of(
        cls,
        start_spn: str,
        game: Game,
        players: dict[str, str] | None = None,
        *,
        resigned: str | None = None,
    ) -> GameRecord:
        """The record of `game`, which started from `start_spn`.

        A finished game gets its winner (`"red"`, `"blue"`, or None for a draw); a game
        stopped before its end has `end` `"resigned"` (`resigned` is the color that gave
        up; the other one wins) or `"ongoing"` (no winner). `players` is None or a dict
        {"red": spec, "blue": spec} (ValueError naming it otherwise)."""
        if players is not None and not (
            isinstance(players, dict)
            and all(color in COLORS and isinstance(spec, str) for color, spec in players.items())
        ):
            raise ValueError(
                f"players must be a dict such as {{'red': 'greedy', 'blue': "
                f"'random'}} or None, got {quoted(players)}"
            )
        final_spn = game.to_spn() if game.pending_push is None else None
        if game.is_over:
            score = game.score()
            return cls(
                start_spn,
                list(game.history),
                game.max_moves,
                dict(players or {}),
                {
                    "winner": score.winner_name,
                    "reason": score.reason,
                    "end": "truncated" if game.truncated else "terminated",
                    "final_spn": final_spn,
                },
            )
        if resigned is not None:
            if resigned not in COLORS:
                raise ValueError(f"resigned must be 'red' or 'blue', got {quoted(resigned)}")
            winner = COLORS[1 - COLORS.index(resigned)]
            result = {
                "winner": winner,
                "reason": f"{resigned} resigned",
                "end": "resigned",
                "final_spn": final_spn,
            }
        else:
            result = {
                "winner": None,
                "reason": ONGOING_REASON,
                "end": "ongoing",
                "final_spn": final_spn,
            }
        return cls(start_spn, list(game.history), game.max_moves, dict(players or {}), result)

    # ------------------------------------------------------------------ checks

    def validate(self, source: str = "game record") -> None:
        """Check every field's type and value; raise RecordError naming the field."""

        def fail(message: str) -> RecordError:
            return RecordError(f"{source}: {message}")

        if not isinstance(self.start_spn, str):
            raise fail(
                f"field 'start_spn' must be a string (an SPN position), got {_kind(self.start_spn)}"
            )
        try:
            parse_spn(self.start_spn)
        except NotationError as error:
            raise fail(f"field 'start_spn' is not a valid SPN position: {error}") from None
        if not isinstance(self.moves, list):
            raise fail(
                f"field 'moves' must be a list of moves in notation such as "
                f'["c10-c7", "pass"], got {_kind(self.moves)}'
            )
        for number, move in enumerate(self.moves, start=1):
            if not isinstance(move, str):
                raise fail(
                    f"field 'moves': move {number} must be a string such as 'c10-c7', "
                    f"'c10-f7>f9' or 'pass', got {_kind(move)}"
                )
            try:
                parse_move_text(move)
            except NotationError as error:
                raise fail(f"field 'moves': move {number}: {error}") from None
        if (
            not isinstance(self.max_moves, int)
            or isinstance(self.max_moves, bool)
            or not 1 <= self.max_moves <= MAX_MOVES_LIMIT
        ):
            raise fail(
                f"field 'max_moves' must be an integer from 1 to {MAX_MOVES_LIMIT}, "
                f"got {_kind(self.max_moves)}"
            )
        if not isinstance(self.players, dict):
            raise fail(
                f"field 'players' must be an object like "
                f'{{"red": "greedy", "blue": "random"}}, got {_kind(self.players)}'
            )
        for color, spec in self.players.items():
            if color not in COLORS:
                raise fail(f"field 'players' has the key {quoted(color)}; expected 'red' or 'blue'")
            if not isinstance(spec, str):
                raise fail(
                    f"field 'players': {color!r} must be a string (an agent spec or "
                    f"'human'), got {_kind(spec)}"
                )
        if not isinstance(self.result, dict):
            raise fail(
                f"field 'result' must be an object with {', '.join(RESULT_KEYS)}, "
                f"got {_kind(self.result)}"
            )
        unknown = sorted(set(self.result) - set(RESULT_KEYS), key=str)
        if unknown:
            raise fail(
                f"field 'result' has unknown keys {quoted(unknown)}; expected some of "
                f"{list(RESULT_KEYS)}"
            )
        if "winner" in self.result and self.result["winner"] not in WINNERS:
            raise fail(
                f"field 'result.winner' must be 'red', 'blue' or null (a draw or no "
                f"result), got {_kind(self.result['winner'])}"
            )
        for key in ("reason", "final_spn"):
            if key in self.result and not isinstance(self.result[key], (str, type(None))):
                raise fail(
                    f"field 'result.{key}' must be a string or null, got {_kind(self.result[key])}"
                )
        if "end" in self.result and self.result["end"] not in ENDS:
            raise fail(
                f"field 'result.end' must be one of {', '.join(ENDS)}, "
                f"got {_kind(self.result['end'])}"
            )

    def replay(self, source: str = "game record") -> list[Game]:
        """The game after each move: [start, after move 1, ...], each with its history (so
        `history[-1]` is the move that led there, and pictures highlight it); raises
        RecordError if a field is malformed, a move does not apply, or the result does not
        match the moves."""
        self.validate(source)
        game = Game.from_spn(self.start_spn, self.max_moves)
        positions = [game.clone()]
        for number, move in enumerate(self.moves, start=1):
            try:
                game.play_move(move)
            except ValueError as error:
                raise RecordError(
                    f"{source}: move {number} {quoted(move)} does not apply: {error}"
                ) from None
            positions.append(game.clone())
        final_spn = self.result.get("final_spn")
        if final_spn is not None and final_spn != game.to_spn():
            raise RecordError(
                f"{source}: field 'result.final_spn' {quoted(final_spn)} is not the "
                f"position after the moves, {game.to_spn()!r}"
            )
        self._check_result(game, source)
        return positions

    def _check_result(self, game: Game, source: str) -> None:
        """Refuse a stated result that the moves do not give (the rules in the module
        docstring), naming the field."""
        result = self.result

        def lie(key: str, truth: str) -> RecordError:
            return RecordError(
                f"{source}: field 'result.{key}' is {_kind(result[key])} but {truth}"
            )

        if game.is_over:
            score = game.score()
            end = "truncated" if game.truncated else "terminated"
            truth = f"the moves end the game: {end}, {score.reason}"
            if "end" in result and result["end"] != end:
                raise lie("end", truth)
            if "winner" in result and result["winner"] != score.winner_name:
                won = f"{score.winner_name} wins" if score.winner_name else "a draw"
                raise lie("winner", f"{truth}: {won}")
            # records written before the engine said `1 colony` say `1 colonies`
            legacy = score.reason.replace("controls 1 colony,", "controls 1 colonies,")
            if result.get("reason") is not None and result["reason"] not in (score.reason, legacy):
                raise lie("reason", truth)
            return
        truth = f"the game is not over after the moves ({len(self.moves)} moves)"
        end = result.get("end", "ongoing")
        if end in ("terminated", "truncated"):
            raise lie("end", truth)
        if end == "resigned":
            winners = [result["winner"]] if "winner" in result else list(COLORS)
            if None in winners:
                raise lie("winner", "a resigned game is won by the color that did not resign")
            reasons = [f"{COLORS[1 - COLORS.index(winner)]} resigned" for winner in winners]
            if result.get("reason") is not None and result["reason"] not in reasons:
                raise lie("reason", f"the game was resigned: {' or '.join(map(repr, reasons))}")
            return
        if result.get("winner") is not None:
            raise lie("winner", f"{truth} and the record does not say that anyone resigned")
        if result.get("reason") is not None and result["reason"] != ONGOING_REASON:
            raise lie("reason", f"{truth} and nobody resigned: {ONGOING_REASON!r}")

    # ------------------------------------------------------------------ files

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object, source: str = "game record") -> GameRecord:
        """A record from its JSON object, every field checked (RecordError otherwise).
        Older records wrote a drawn winner as "draw": read as null."""
        if not isinstance(data, dict):
            raise RecordError(
                f"{source} must be a JSON object with the keys 'start_spn' and "
                f"'moves', got {_kind(data)}"
            )
        missing = [key for key in ("start_spn", "moves") if key not in data]
        if missing:
            raise RecordError(f"{source} needs the keys 'start_spn' and 'moves'; missing {missing}")
        unknown = sorted(set(data) - set(KEYS), key=str)
        if unknown:
            raise RecordError(
                f"{source} has unknown keys {quoted(unknown)}; expected some of {list(KEYS)}"
            )
        data = dict(data)
        if isinstance(data.get("result"), dict) and data["result"].get("winner") == "draw":
            data["result"] = {**data["result"], "winner": None}
        record = cls(**data)
        record.validate(source)
        return record

    def save(self, path: str | Path) -> Path:
        """Write the record as JSON, atomically: a reader never sees half a file, and a
        failed write leaves any previous file at `path` as it was. The folder must exist; a
        path that is a folder, a special file or a symbolic link is refused
        (`satellites_env.files`)."""
        return write_output(path, json.dumps(self.as_dict(), indent=1) + "\n", "game record")

    @classmethod
    def load(cls, path: str | Path) -> GameRecord:
        """The record in the file `path`, every field checked (RecordError otherwise). The
        file must be a regular file (a link to one is followed) of at most MAX_RECORD_BYTES:
        a FIFO or a device is refused before it is opened, and a longer file before more
        than the limit is read."""
        path = Path(path)
        source = f"game record {quoted_path(path)}"
        if path.is_dir():
            raise RecordError(f"{source} is a directory, not a record file (a .json file)")
        if not path.exists():
            raise RecordError(f"{source} does not exist")
        try:
            raw = read_input(path, MAX_RECORD_BYTES, "game record")
        except FileKindError as error:
            raise RecordError(str(error)) from None
        except OSError as error:
            raise RecordError(f"{source} cannot be read: {error.strerror or error}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise RecordError(f"{source} is not UTF-8 text: {error}") from None

        def no_constants(name: str) -> NoReturn:
            raise ValueError(f"{name} is not a JSON number")

        try:
            data = json.loads(text, parse_constant=no_constants, object_pairs_hook=_unique_keys)
        except _DuplicateKey as error:
            raise RecordError(
                f"{source}: the key {quoted(error.args[0])} is given twice in one "
                f"JSON object (which one counts is not defined)"
            ) from None
        except (ValueError, RecursionError) as error:
            detail = "nested too deeply" if isinstance(error, RecursionError) else error
            raise RecordError(f"{source} is not valid JSON: {detail}") from None
        return cls.from_dict(data, source)
