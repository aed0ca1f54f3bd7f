"""Build legal SPN positions by hand for the rule tests (RULES.md section 7).

Every SPN must hold exactly 12 red satellites (three each of ``A B C D``) and 12 blue ones
(three each of ``a b c d``). A rule test usually cares about a handful of them, so
`spn` takes only the satellites that matter, as a *picture* and/or a dict, and parks
the missing ones ("fillers") where they cannot interfere.

The picture is 10 rows of 10 characters, north (rank 10, row 0) first, west (file a, col 0)
left, ``.`` for an empty cell; spaces inside a row are ignored, so rows can be grouped:

    spn('''
        .......... 10
        ..........  9
        ...
    ''')

A trailing rank label (digits after the 10 cells) is allowed and ignored; blank lines are
skipped. ``pieces={'c10': 'A', 'e5': 'b'}`` places satellites by square name instead of (or on
top of) the picture.

How fillers are placed (`place_fillers`):

* only on cells of ``region`` (default `INTERIOR`: rows 1-8 and cols 1-8), so by
  default a filler never stands on an edge and *which edges are free (R9) is decided by the
  picture alone*. Tests that need an edge occupied draw a satellite on it; tests that need
  the fillers somewhere specific pass ``region`` (a predicate ``(row, col) -> bool``, or a
  collection of square names / cell indices; `rows`, `cols` and `either`
  build predicates);
* at Chebyshev distance >= ``margin`` (default 2) from every picture satellite, so a filler is
  never one of the 8 neighbours of a test satellite (it is never a displacement target next
  to a connected test satellite, never blocks a first step, never touches one);
* never orthogonally next to a satellite of the other color (picture or filler), so
  *fillers are never connected and connect nothing*: the connection graph of the position
  is exactly the one of the picture;
* red fillers take region cells in reading order (north-west first), blue fillers in reverse
  order (south-east first), so the two colors stay apart.

Fillers are ordinary unconnected satellites: they can move. Tests that look at legal moves
filter them by source square (`moves_from`) or draw the whole board by hand
(``fill=False``). `show` prints a position as a labelled picture for failure messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

SIZE = 10
FILES = "abcdefghij"
RED_LETTERS = "ABCD"
BLUE_LETTERS = "abcd"
LETTERS = RED_LETTERS + BLUE_LETTERS
COPIES = 3

Region = Callable[[int, int], bool]


# ----------------------------------------------------------------------------- squares


def cell(square: str) -> int:
    """Cell index (row * 10 + col) of a square name: ``cell('c10') == 2``, ``cell('a1') == 90``."""
    file, rank = square[0], int(square[1:])
    if file not in FILES or not 1 <= rank <= SIZE:
        raise ValueError(f"bad square {square!r}")
    return (SIZE - rank) * SIZE + FILES.index(file)


def square(index: int) -> str:
    """Square name of a cell index: ``square(2) == 'c10'``."""
    row, col = divmod(index, SIZE)
    return f"{FILES[col]}{SIZE - row}"


def row_col(where: str | int) -> tuple[int, int]:
    """(row, col) of a square name or a cell index."""
    return divmod(cell(where) if isinstance(where, str) else where, SIZE)


# ----------------------------------------------------------------------------- regions


def INTERIOR(row: int, col: int) -> bool:
    """Cells on no edge (rows 1-8, cols 1-8): the default filler region."""
    return 0 < row < SIZE - 1 and 0 < col < SIZE - 1


def ANYWHERE(row: int, col: int) -> bool:
    """Every cell, edges included (use when R9 does not matter)."""
    return True


def rows(lo: int, hi: int) -> Region:
    """Predicate: row in lo..hi (inclusive), any column, edges included."""
    return lambda r, c: lo <= r <= hi


def cols(lo: int, hi: int) -> Region:
    """Predicate: col in lo..hi (inclusive), any row, edges included."""
    return lambda r, c: lo <= c <= hi


def either(*regions: Region) -> Region:
    """Predicate: the cell is in at least one of the regions."""
    return lambda r, c: any(region(r, c) for region in regions)


def _region_predicate(region) -> Region:
    if region is None:
        return INTERIOR
    if callable(region):
        return region
    cells = {cell(x) if isinstance(x, str) else int(x) for x in region}
    return lambda r, c: r * SIZE + c in cells


# ----------------------------------------------------------------------------- boards


def parse_picture(picture: str | Iterable[str]) -> list[str]:
    """The 100 cells of a picture (see the module doc) as a flat list of one-char strings."""
    lines = picture.splitlines() if isinstance(picture, str) else list(picture)
    board_rows = []
    for line in lines:
        text = line.replace(" ", "").replace("\t", "")
        if not text:
            continue
        cells, label = text[:SIZE], text[SIZE:]
        if len(cells) != SIZE or (label and not label.isdigit()):
            raise ValueError(
                f"picture row {line!r} must hold exactly {SIZE} cells "
                f"(an optional rank label may follow)"
            )
        board_rows.append(cells)
    if len(board_rows) != SIZE:
        raise ValueError(f"a picture needs {SIZE} rows, got {len(board_rows)}")
    board = [ch for row in board_rows for ch in row]
    for i, ch in enumerate(board):
        if ch != "." and ch not in LETTERS:
            raise ValueError(f"unknown piece {ch!r} on {square(i)} in the picture")
    return board


def _orth(index: int) -> Iterable[int]:
    row, col = divmod(index, SIZE)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        r, c = row + dr, col + dc
        if 0 <= r < SIZE and 0 <= c < SIZE:
            yield r * SIZE + c


def _chebyshev(a: int, b: int) -> int:
    (ra, ca), (rb, cb) = divmod(a, SIZE), divmod(b, SIZE)
    return max(abs(ra - rb), abs(ca - cb))


def missing_pieces(board: list[str]) -> list[str]:
    """The letters still needed for 3 of each (raises if a letter is there more than 3 times)."""
    missing = []
    for letter in LETTERS:
        count = board.count(letter)
        if count > COPIES:
            raise ValueError(f"{count} satellites {letter!r} in the picture; at most {COPIES}")
        missing.extend(letter * (COPIES - count))
    return missing


def place_fillers(board: list[str], region=None, margin: int = 2) -> list[str]:
    """Complete `board` (flat list of 100 cells) with fillers; see the module doc for where."""
    inside = _region_predicate(region)
    board = list(board)
    pictured = [i for i, ch in enumerate(board) if ch != "."]
    candidates = [
        i
        for i in range(SIZE * SIZE)
        if board[i] == "."
        and inside(*divmod(i, SIZE))
        and all(_chebyshev(i, p) >= margin for p in pictured)
    ]
    missing = missing_pieces(board)
    # Bigger values first: the order does not matter for the rules, only for reproducibility.
    reds = [ch for ch in reversed(missing) if ch in RED_LETTERS]
    blues = [ch for ch in reversed(missing) if ch in BLUE_LETTERS]
    for letters, order, enemy in (
        (reds, candidates, BLUE_LETTERS),
        (blues, list(reversed(candidates)), RED_LETTERS),
    ):
        for i in order:
            if not letters:
                break
            if board[i] != "." or any(board[n] in enemy for n in _orth(i)):
                continue
            board[i] = letters.pop(0)
        if letters:
            raise ValueError(
                f"no room for fillers {''.join(letters)!r}: widen `region` or "
                f"lower `margin`\n{show_board(board)}"
            )
    return board


def spn(
    picture: str | Iterable[str] | None = None,
    *,
    pieces: Mapping[str, str] | None = None,
    to_move: str = "r",
    grace: str | int = "-",
    passes: int = 0,
    moves: int | None = None,
    fill: bool = True,
    region=None,
    margin: int = 2,
) -> str:
    """An SPN string from a picture and/or `pieces`, completed with fillers when `fill`.

    With ``fill=False`` the picture must already hold all 24 satellites (the engine's
    parser checks the counts). The result is not validated here: ``Game.from_spn`` does that.
    `moves` defaults to the fewest completed moves the parser accepts for this board and these
    counters (``notation.fewest_moves``: the connections, the grace moves, the passes and
    whose turn it is bound it from below).
    """
    board = parse_picture(picture) if picture is not None else ["."] * (SIZE * SIZE)
    for name, letter in (pieces or {}).items():
        if letter not in LETTERS:
            raise ValueError(f"unknown piece {letter!r} for {name}")
        board[cell(name)] = letter
    if fill:
        board = place_fillers(board, region, margin)
    rows_text = "/".join("".join(board[r * SIZE : (r + 1) * SIZE]) for r in range(SIZE))
    if moves is None:
        moves = fewest_moves_of(board, to_move, grace, passes)
    return f"{rows_text} {to_move} {grace} {passes} {moves}"


def fewest_moves_of(board: list[str], to_move: str, grace: str | int, passes: int) -> int:
    """The fewest completed moves the engine's SPN parser accepts for this position."""
    from satellites_env.core.notation import PIECE_LETTERS, fewest_moves
    from satellites_env.core.state import GRACE, PASSES, TO_MOVE, empty_state

    state = empty_state()
    for index, letter in enumerate(board):
        state[index] = PIECE_LETTERS.get(letter, 0)
    state[TO_MOVE] = "rb".index(to_move) if to_move in ("r", "b") else 0
    state[GRACE] = -1 if grace == "-" else int(grace)
    state[PASSES] = int(passes)
    return fewest_moves(state)


def show_board(board: list[str]) -> str:
    """A flat board as a picture with file letters and rank numbers."""
    lines = ["    " + " ".join(FILES)]
    for r in range(SIZE):
        lines.append(f"{SIZE - r:>3} " + " ".join(board[r * SIZE : (r + 1) * SIZE]))
    return "\n".join(lines)


def show(position) -> str:
    """A labelled picture of an SPN string or of anything with a ``to_spn()`` method."""
    text = position if isinstance(position, str) else position.to_spn()
    rows_text, *rest = text.split()
    board = [ch for ch in rows_text.replace("/", "")]
    return show_board(board) + "\n" + " ".join(rest)


# ----------------------------------------------------------------------------- queries


def moves_from(game, where: str) -> set[str]:
    """The legal moves (notation, displacements once per push) whose source is `where`."""
    return {m for m in game.legal_moves() if m.split("-")[0] == where}


def legal_sources(game) -> set[str]:
    """Squares of every satellite that has at least one legal move."""
    return {m.split("-")[0] for m in game.legal_moves() if m != "pass"}


# The displacement position of the R15 tests: colony a8 b, b8 A, c8 c, c7 C, d7 d (5); blue a
# on c9 is unconnected, diagonal to the connected red b8; red B on e9 reaches c9 with k = 2.
DISPLACE_PICTURE = """
    .......... 10
    ..a.B..... 9
    bAc.A..... 8
    ..Cd...... 7
    .......... 6
    .......... 5
    .......... 4
    .......... 3
    .......... 2
    .......... 1
"""
DISPLACE_REGION = either(rows(5, 9), cols(7, 9))
