"""Text formats (RULES.md section 7): squares, SPN positions and move notation.

Errors raise [`NotationError`][satellites_env.core.notation.NotationError] (a ``ValueError``) naming
what is wrong (for an SPN, the field) and what was expected; a message quotes at most about 80
characters of the input.

What [`parse_spn`][satellites_env.core.notation.parse_spn] checks. Each field's syntax: 10 rows of
10 known letters, ``r``/``b``, ``-`` or 0-3, 0-2, and the move counter in ASCII digits without
leading zeros, at most ``MAX_MOVES_LIMIT`` (1,000,000, the highest move cap). The material: 12
satellites a side, three of each value. Then that some game by the rules can reach the position, as
far as a cheap look at the board and the counters can tell (each check is derived from the rules):

* R11: no group of more than 6; R13: no two connected satellites of one color touch.
* R17/R18: grace is a number exactly when the player not to move has all 12 connected, or
  '-' when nobody has, or when R16 ended the game (23 or more connected) at that move; grace
  3 (the completing move was just made) with 23 or more connected is refused: R16 came first.
* R5/SPN: with grace '-' the players have alternated from red, so red is to move after an
  even number of moves and blue after an odd one.
* R19: passes count moves (passes <= moves); passes during grace use grace moves (grace +
  passes <= 3); a pass is made only in a game that goes on (fewer than 23 connected), and only
  by a player with no legal move on this board (the pass does not change it), which is
  checked with the move generator for each pass counted.
* Moves: no two satellites of different colors touch at the R4 set-up, so every connection
  has a satellite that moved or was pushed since, and one move moves at most two (a
  displacement and its push): moves >= half the minimum number of satellites that cover every
  connection (a maximum matching of the red-blue graph, by Koenig's theorem). With grace g,
  moves >= (3 - g) grace moves + 2 (12 connected satellites need 3 touched ones).
  [`fewest_moves`][satellites_env.core.notation.fewest_moves] gives the smallest count these checks
  accept.

Not checked (it would need the game's history): whether the first connection had a free edge
(R9), whether each connection was made at the exact distance (R7) or each push was legal
(R15), whether the set-up's edges and values fit where the satellites stand, and finer bounds
on the move count; the move cap (``max_moves``) is not in an SPN, so a position beyond a
game's cap is accepted and the game is over at once (truncated).
"""

from __future__ import annotations

import re

import numpy as np

from .board import (
    BLUE,
    COLOR_NAMES,
    COPIES_PER_VALUE,
    END_CONNECTED,
    GRACE_MOVES,
    MAX_GROUP,
    MAX_MOVES_LIMIT,
    MAX_VALUE,
    N_ACTIONS,
    N_CELLS,
    ORTHO,
    PASS_ACTION,
    RED,
    SATELLITES_PER_PLAYER,
    SIZE,
    cell_of,
)
from .checks import quoted
from .rules import count_connected, fill_legal_mask, new_scratch
from .scoring import groups_of
from .state import GRACE, MOVES, NO_GRACE, PASSES, TO_MOVE, empty_state, is_pending, state_array

FILES = "abcdefghij"
PIECE_LETTERS = {"A": 1, "B": 2, "C": 3, "D": 4, "a": -1, "b": -2, "c": -3, "d": -4}
LETTER_OF_PIECE = {code: letter for letter, code in PIECE_LETTERS.items()}
SQUARE_NAMES = tuple(f"{FILES[c % SIZE]}{SIZE - c // SIZE}" for c in range(N_CELLS))
_SQUARE_RE = re.compile(r"([a-j])(10|[1-9])")  # used with fullmatch: no trailing newline
_MOVE_RE = re.compile(r"([a-j](?:10|[1-9]))-([a-j](?:10|[1-9]))(?:>([a-j](?:10|[1-9])))?")
_MOVES_RE = re.compile(r"0|[1-9][0-9]*")  # ASCII digits, no leading zero: one way to write it
MAX_SPN_MOVES = MAX_MOVES_LIMIT  # the highest <moves>: no game passes the highest move cap
# Fewest moves that connect all 12 satellites of one side: each satellite of the other color
# touches at most 4 of them, so 3 satellites at least must have moved (two moves).
_FEWEST_TO_COMPLETE = 2


class NotationError(ValueError):
    """Malformed or inconsistent SPN, square or move text."""


def square_name(cell: int) -> str:
    """`c10` for row 0, col 2 (file a-j = col 0-9, rank 1-10 = row 9-0)."""
    if (
        isinstance(cell, (bool, np.bool_))
        or not isinstance(cell, (int, np.integer))
        or not 0 <= cell < N_CELLS
    ):
        raise NotationError(
            f"cell {quoted(cell)} is off the board; expected an integer 0..{N_CELLS - 1}"
        )
    return SQUARE_NAMES[cell]


def parse_square(text: str) -> int:
    """Cell index of a square name such as `c10`."""
    if not isinstance(text, str):
        raise NotationError(f"a square must be a string such as 'c10', got {type(text).__name__}")
    match = _SQUARE_RE.fullmatch(text)
    if not match:
        raise NotationError(
            f"bad square {quoted(text)}: expected a file a-j and a rank 1-10, e.g. 'c10'"
        )
    return cell_of(SIZE - int(match.group(2)), FILES.index(match.group(1)))


def parse_move_text(text: str) -> tuple[int, int, int | None] | None:
    """(from, to, push landing or None) of `c10-c7` / `c10-f7>f9`; None for `pass`."""
    if not isinstance(text, str):
        raise NotationError(
            f"a move must be a string such as 'c10-c7', 'c10-f7>f9' or 'pass', "
            f"got {type(text).__name__}"
        )
    text = text.strip()
    if text == "pass":
        return None
    match = _MOVE_RE.fullmatch(text)
    if not match:
        raise NotationError(
            f"bad move {quoted(text)}: expected 'c10-c7', 'c10-f7>f9' (displacement) or 'pass'"
        )
    source, target = parse_square(match.group(1)), parse_square(match.group(2))
    landing = parse_square(match.group(3)) if match.group(3) else None
    return source, target, landing


def move_text(source: int, target: int, landing: int | None = None) -> str:
    """Notation of a move, with the push landing for a displacement."""
    text = f"{SQUARE_NAMES[source]}-{SQUARE_NAMES[target]}"
    return text if landing is None else f"{text}>{SQUARE_NAMES[landing]}"


# --------------------------------------------------------------------------- SPN


def to_spn(state: np.ndarray) -> str:
    """The SPN string of a position (between moves only)."""
    state = state_array(state)
    if is_pending(state):
        raise NotationError(
            "a position is written only between moves, not in the middle "
            "of a displacement; play the push first"
        )
    rows = []
    for row in range(SIZE):
        cells = state[row * SIZE : (row + 1) * SIZE]
        rows.append("".join(LETTER_OF_PIECE.get(int(p), ".") for p in cells))
    grace = "-" if state[GRACE] == NO_GRACE else str(int(state[GRACE]))
    to_move = "rb"[int(state[TO_MOVE])]
    return f"{'/'.join(rows)} {to_move} {grace} {int(state[PASSES])} {int(state[MOVES])}"


def parse_spn(text: str) -> np.ndarray:
    """Parse and validate an SPN string into a state array."""
    if not isinstance(text, str):
        raise NotationError(f"SPN must be a string, got {type(text).__name__}")
    fields = text.split()
    if len(fields) != 5:
        raise NotationError(
            f"SPN needs 5 space-separated fields '<rows> <to_move> <grace> <passes> <moves>', "
            f"got {len(fields)} in {quoted(text)}"
        )
    rows_text, to_move, grace, passes, moves = fields
    state = empty_state()
    _parse_rows(rows_text, state)
    if to_move not in ("r", "b"):
        raise NotationError(f"SPN field 'to_move' is {quoted(to_move)}; expected 'r' or 'b'")
    state[TO_MOVE] = RED if to_move == "r" else BLUE
    if grace not in ("-", "0", "1", "2", "3"):
        raise NotationError(f"SPN field 'grace' is {quoted(grace)}; expected '-' or 0-3")
    state[GRACE] = NO_GRACE if grace == "-" else int(grace)
    if passes not in ("0", "1", "2"):
        raise NotationError(f"SPN field 'passes' is {quoted(passes)}; expected 0, 1 or 2")
    state[PASSES] = int(passes)
    # ASCII digits only: str.isdigit() and int() also take '１２' or '²'. The length is checked
    # before int(), which refuses (with a plain ValueError) more than 4300 digits.
    if (
        len(moves) > len(str(MAX_SPN_MOVES))
        or not _MOVES_RE.fullmatch(moves)
        or int(moves) > MAX_SPN_MOVES
    ):
        raise NotationError(
            f"SPN field 'moves' must be a non-negative integer of ASCII digits "
            f"without leading zeros, up to {MAX_SPN_MOVES}, got {quoted(moves)}"
        )
    state[MOVES] = int(moves)
    _check_consistent(state)
    return state


def _parse_rows(rows_text: str, state: np.ndarray) -> None:
    rows = rows_text.split("/")
    if len(rows) != SIZE:
        raise NotationError(f"SPN board has {len(rows)} rows; expected {SIZE} joined by '/'")
    counts = {code: 0 for code in PIECE_LETTERS.values()}
    for row, line in enumerate(rows):
        if len(line) != SIZE:
            raise NotationError(
                f"SPN row {row + 1} (rank {SIZE - row}) {quoted(line)} has {len(line)} characters; "
                f"expected {SIZE}"
            )
        for col, letter in enumerate(line):
            if letter == ".":
                continue
            if letter not in PIECE_LETTERS:
                raise NotationError(
                    f"unknown piece letter {letter!r} on {SQUARE_NAMES[cell_of(row, col)]}; "
                    f"expected '.', A-D (red 1-4) or a-d (blue 1-4)"
                )
            code = PIECE_LETTERS[letter]
            state[cell_of(row, col)] = code
            counts[code] += 1
    for player, sign in ((RED, 1), (BLUE, -1)):
        total = sum(counts[sign * v] for v in range(1, MAX_VALUE + 1))
        if total != SATELLITES_PER_PLAYER:
            raise NotationError(
                f"{total} {COLOR_NAMES[player]} satellites; each player has exactly "
                f"{SATELLITES_PER_PLAYER} (three each of values 1-4)"
            )
        for value in range(1, MAX_VALUE + 1):
            if counts[sign * value] != COPIES_PER_VALUE:
                raise NotationError(
                    f"{counts[sign * value]} {COLOR_NAMES[player]} satellites of value {value} "
                    f"('{LETTER_OF_PIECE[sign * value]}'); expected {COPIES_PER_VALUE}"
                )


def _check_consistent(state: np.ndarray) -> None:
    """Reject positions no game can reach (the module docstring lists the checks)."""
    board = state[:N_CELLS]
    groups = groups_of(board)
    for group in groups:
        if group.size > MAX_GROUP:
            raise NotationError(
                f"group {', '.join(SQUARE_NAMES[c] for c in group.cells)} has {group.size} "
                f"satellites; R11 allows at most {MAX_GROUP}"
            )
    connected = {c for group in groups for c in group.cells}
    for cell in sorted(connected):
        for n in ORTHO[cell]:
            if n > cell and n in connected and board[n] * board[cell] > 0:
                raise NotationError(
                    f"connected satellites of one color touch on {SQUARE_NAMES[cell]} and "
                    f"{SQUARE_NAMES[n]}; R13 forbids it"
                )
    red, blue = count_connected(board)
    total = int(red + blue)
    done = [red == SATELLITES_PER_PLAYER, blue == SATELLITES_PER_PLAYER]
    mover = int(state[TO_MOVE])
    grace, passes, moves = int(state[GRACE]), int(state[PASSES]), int(state[MOVES])
    if grace != NO_GRACE and not done[1 - mover]:
        raise NotationError(
            f"grace is {grace} but {COLOR_NAMES[1 - mover]} (not to move) does not "
            f"have all 12 satellites connected; grace must be '-'"
        )
    if grace == NO_GRACE and any(done) and total < END_CONNECTED:
        player = COLOR_NAMES[RED if done[RED] else BLUE]
        raise NotationError(
            f"{player} has all 12 satellites connected, so grace must be a number 0-3 (R17)"
        )
    if grace == GRACE_MOVES and total >= END_CONNECTED:
        raise NotationError(
            f"SPN field 'grace' is {grace} (the move that completed "
            f"{COLOR_NAMES[1 - mover]} was just made) but {total} satellites are connected: "
            f"R16 ended the game at that move, so grace must be '-'"
        )
    if grace != NO_GRACE and grace + passes > GRACE_MOVES:
        raise NotationError(
            f"SPN field 'passes' is {passes} with grace {grace}: a pass during grace uses a "
            f"grace move (R19), so grace + passes is at most {GRACE_MOVES}"
        )
    if passes and total >= END_CONNECTED:
        raise NotationError(
            f"SPN field 'passes' is {passes} but {total} satellites are connected: R16 ended "
            f"the game before that pass"
        )
    if passes > moves:
        raise NotationError(
            f"SPN field 'passes' is {passes} but 'moves' is {moves}: a pass is a move"
        )
    if grace == NO_GRACE and moves % 2 != mover:
        raise NotationError(
            f"SPN field 'to_move' is {'rb'[mover]!r} but with grace '-' the players have "
            f"alternated from red (R5), so after {moves} moves {COLOR_NAMES[moves % 2]} is to "
            f"move"
        )
    least, why = _fewest_moves(state)
    if moves < least:
        raise NotationError(
            f"SPN field 'moves' is {moves} but this position needs at least {least}: {why}"
        )
    for passer in _passers(state):
        if _has_a_move(state, passer):
            raise NotationError(
                f"SPN field 'passes' is {passes} but {COLOR_NAMES[passer]} has a legal move on "
                f"this board: a pass is legal only without one (R19)"
            )


def fewest_moves(state: np.ndarray) -> int:
    """The smallest `<moves>` that [`parse_spn`][satellites_env.core.notation.parse_spn] accepts for
    this board, player to move, grace and passes (the MOVES field of `state` is not read): the
    bounds of the module docstring, and with grace '-' the parity of the player to move."""
    least = _fewest_moves(state)[0]
    if state[GRACE] == NO_GRACE and least % 2 != state[TO_MOVE]:
        least += 1
    return least


def _fewest_moves(state: np.ndarray) -> tuple[int, str]:
    """(a lower bound on the completed moves, why) from the board and the counters."""
    touched = _fewest_touched(state[:N_CELLS])
    least, why = (
        (touched + 1) // 2,
        (
            f"its connections need at least {touched} satellites that moved or were pushed since "
            f"the set-up (R4), and a move moves at most two"
        ),
    )
    grace = int(state[GRACE])
    if grace != NO_GRACE and GRACE_MOVES - grace + _FEWEST_TO_COMPLETE > least:
        least = GRACE_MOVES - grace + _FEWEST_TO_COMPLETE
        why = (
            f"{GRACE_MOVES - grace} grace moves were made, after at least "
            f"{_FEWEST_TO_COMPLETE} moves that connected all 12 satellites of "
            f"{COLOR_NAMES[1 - int(state[TO_MOVE])]}"
        )
    if int(state[PASSES]) > least:
        least, why = int(state[PASSES]), "a pass is a move"
    return least, why


def _fewest_touched(board: np.ndarray) -> int:
    """The fewest satellites that, having moved or been pushed, explain every connection on
    `board`: a minimum vertex cover of the connection graph. The graph is bipartite (red-blue),
    so that is the size of a maximum matching (Koenig), found by augmenting paths."""
    partners = {
        int(c): [int(n) for n in ORTHO[c] if n >= 0 and board[n] < 0]
        for c in np.flatnonzero(board > 0)
    }
    matched: dict[int, int] = {}  # blue cell -> its red partner

    def augment(red: int, seen: set[int]) -> bool:
        for blue in partners[red]:
            if blue not in seen:
                seen.add(blue)
                if blue not in matched or augment(matched[blue], seen):
                    matched[blue] = red
                    return True
        return False

    return sum(augment(red, set()) for red in partners if partners[red])


def _passers(state: np.ndarray) -> list[int]:
    """The players who made the passes counted in `state`: during grace the player to move
    (the other one is done), else the players before, alternating."""
    mover, passes = int(state[TO_MOVE]), int(state[PASSES])
    if state[GRACE] != NO_GRACE:
        return [mover] if passes else []
    return [(mover + 1 + i) % 2 for i in range(passes)]


def _has_a_move(state: np.ndarray, player: int) -> bool:
    """True when `player` has a legal move (not a pass) on the board of `state`."""
    before = state.copy()
    before[TO_MOVE] = player
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    fill_legal_mask(before, mask, new_scratch())
    return not mask[PASS_ACTION]
