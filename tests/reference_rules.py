"""An independent, slow, pure-Python reference implementation of RULES.md (docs/RULES.md).

Written from RULES.md only (not from the numba engine in ``satellites_env/core``), so that the
test-suite can cross-check the engine against a second reading of the rules.

Design: legality is decided the most direct way. For every candidate action the move is
simulated on a copy of the board and every rule is checked on the *whole* resulting position
(R14): R6/R7 geometry, R8 (only unconnected satellites move), R9 on the position before the move,
R11, R12, R13 on the position after, and R15 conditions 1-5 for displacements.  Nothing is
incremental and nothing is cached across positions; only facts about the position *before* the
move (which satellites are connected, which colony each belongs to, whether R9 is open) are
computed once per position.

Pieces carry an identity (``pid``) so that "newly connected" (R9) and "were in two different
colonies before the move" (R12) can be stated literally.

Readings of points where RULES.md could be read two ways are marked "READING:" below.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

# --------------------------------------------------------------------------------------------
# Board geometry (R1, R2) and action encoding (section 8)
# --------------------------------------------------------------------------------------------

SIZE = 10
N_CELLS = SIZE * SIZE
RED, BLUE = 0, 1
SATELLITES_PER_PLAYER = 12  # R3
MAX_GROUP = 6  # R11
COLONY_MIN = 3  # R10
END_CONNECTED = 23  # R16
GRACE_MOVES = 3  # R18
MAX_PUSH = 2  # R15.4
DEFAULT_MAX_MOVES = 400  # R20

# Directions 0-7 = N, NE, E, SE, S, SW, W, NW; N is row - 1, E is col + 1 (section 8).
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))

N_MOVE_ACTIONS = N_CELLS * 8 * 4  # 0 .. 3199
PUSH_BASE = N_MOVE_ACTIONS  # 3200 .. 3215
PASS_ACTION = PUSH_BASE + 8 * MAX_PUSH  # 3216
N_ACTIONS = PASS_ACTION + 1  # 3217


def cell_of(row: int, col: int) -> int:
    return row * SIZE + col


def row_col(cell: int) -> tuple[int, int]:
    return divmod(cell, SIZE)


def ray(cell: int, direction: int, k: int) -> int | None:
    """The cell `k` steps from `cell` in `direction`, or None when off the board."""
    row, col = row_col(cell)
    dr, dc = DIRECTIONS[direction]
    r, c = row + dr * k, col + dc * k
    if 0 <= r < SIZE and 0 <= c < SIZE:
        return cell_of(r, c)
    return None


# Orthogonal neighbours (R8) and the eight neighbours (R15.1), precomputed for speed only.
ORTHO = [[n for d in (0, 2, 4, 6) if (n := ray(c, d, 1)) is not None] for c in range(N_CELLS)]
KING = [[n for d in range(8) if (n := ray(c, d, 1)) is not None] for c in range(N_CELLS)]

# R2: the four edges.
EDGES = (
    [cell_of(0, c) for c in range(SIZE)],  # north
    [cell_of(SIZE - 1, c) for c in range(SIZE)],  # south
    [cell_of(r, 0) for r in range(SIZE)],  # west
    [cell_of(r, SIZE - 1) for r in range(SIZE)],  # east
)


def move_action(from_cell: int, direction: int, k: int) -> int:
    return (from_cell * 8 + direction) * 4 + (k - 1)


def decode_move_action(action: int) -> tuple[int, int, int]:
    return action // 32, (action // 4) % 8, action % 4 + 1


def push_action(direction: int, distance: int) -> int:
    return PUSH_BASE + direction * 2 + (distance - 1)


def decode_push_action(action: int) -> tuple[int, int]:
    return (action - PUSH_BASE) // 2, (action - PUSH_BASE) % 2 + 1


def square_name(cell: int) -> str:
    """Section 7: file a-j = col 0-9, rank 1-10 = row 9-0."""
    row, col = row_col(cell)
    return "abcdefghij"[col] + str(SIZE - row)


# --------------------------------------------------------------------------------------------
# Pieces and whole-position predicates
# --------------------------------------------------------------------------------------------


class Sat(NamedTuple):
    color: int  # 0 red, 1 blue
    value: int  # 1-4
    pid: int  # identity, stable for the whole game


Board = list  # list of N_CELLS entries, each a Sat or None

LETTERS = {RED: "ABCD", BLUE: "abcd"}


def sat_char(sat: Sat | None) -> str:
    return "." if sat is None else LETTERS[sat.color][sat.value - 1]


def connected_cells(board: Board) -> set[int]:
    """R8: cells whose satellite has an orthogonally adjacent satellite of the other color."""
    out = set()
    for cell in range(N_CELLS):
        sat = board[cell]
        if sat is None:
            continue
        for n in ORTHO[cell]:
            other = board[n]
            if other is not None and other.color != sat.color:
                out.add(cell)
                break
    return out


def groups(board: Board) -> list[list[int]]:
    """R10: connected components (size >= 2) of the connection graph, as lists of cells."""
    seen: set[int] = set()
    out = []
    for start in connected_cells(board):
        if start in seen:
            continue
        seen.add(start)
        comp = [start]
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            for n in ORTHO[cell]:
                if n in seen or board[n] is None:
                    continue
                if board[n].color != board[cell].color:  # an edge of the connection graph
                    seen.add(n)
                    comp.append(n)
                    queue.append(n)
        out.append(comp)
    return out


def some_edge_is_free(board: Board) -> bool:
    """R9: at least one of the four edges holds no satellite of either color."""
    return any(all(board[c] is None for c in edge) for edge in EDGES)


def touching_twins(board: Board, connected: set[int]) -> bool:
    """R13: two orthogonally adjacent satellites of the same color, both connected."""
    for cell in connected:
        for n in ORTHO[cell]:
            if n in connected and board[n].color == board[cell].color:
                return True
    return False


# --------------------------------------------------------------------------------------------
# Scoring R21-R23
# --------------------------------------------------------------------------------------------


class RefScore(NamedTuple):
    controlled: tuple[int, int]
    lowest_total: tuple[int | None, int | None]
    winner: int | None

    def reward(self, player: int) -> int:  # R24
        if self.winner is None:
            return 0
        return 1 if self.winner == player else -1


def score_board(board: Board) -> RefScore:
    controlled_totals: tuple[list[int], list[int]] = ([], [])
    for comp in groups(board):
        if len(comp) < COLONY_MIN:  # pairs take no part
            continue
        sums = [0, 0]
        for cell in comp:
            sums[board[cell].color] += board[cell].value
        total = sums[0] + sums[1]
        if sums[RED] > sums[BLUE]:  # R21 strictly higher
            controlled_totals[RED].append(total)
        elif sums[BLUE] > sums[RED]:
            controlled_totals[BLUE].append(total)
    n_red, n_blue = len(controlled_totals[RED]), len(controlled_totals[BLUE])
    lowest = (min(controlled_totals[RED], default=None), min(controlled_totals[BLUE], default=None))
    if n_red != n_blue:  # R22
        winner = RED if n_red > n_blue else BLUE
    elif n_red == 0:  # R23: neither controls a colony
        winner = None
    elif lowest[RED] < lowest[BLUE]:  # R23: lower lowest total wins
        winner = RED
    elif lowest[BLUE] < lowest[RED]:
        winner = BLUE
    else:
        winner = None
    return RefScore((n_red, n_blue), lowest, winner)


# --------------------------------------------------------------------------------------------
# SPN (section 7)
# --------------------------------------------------------------------------------------------


def parse_spn(spn: str) -> tuple[Board, int, int | None, int, int]:
    """(board, to_move, grace or None, passes, moves). Raises ValueError when malformed."""
    fields = spn.split(" ")
    if len(fields) != 5:
        raise ValueError(f"SPN needs 5 fields: {spn!r}")
    rows_text, to_move_text, grace_text, passes_text, moves_text = fields
    rows = rows_text.split("/")
    if len(rows) != SIZE or any(len(r) != SIZE for r in rows):
        raise ValueError(f"SPN board must be 10 rows of 10 cells: {spn!r}")
    board: Board = [None] * N_CELLS
    pid = 0
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == ".":
                continue
            if ch in "ABCD":
                board[cell_of(r, c)] = Sat(RED, "ABCD".index(ch) + 1, pid)
            elif ch in "abcd":
                board[cell_of(r, c)] = Sat(BLUE, "abcd".index(ch) + 1, pid)
            else:
                raise ValueError(f"bad cell {ch!r} in SPN")
            pid += 1
    if to_move_text not in ("r", "b"):
        raise ValueError(f"bad side to move {to_move_text!r}")
    to_move = RED if to_move_text == "r" else BLUE
    if grace_text == "-":
        grace = None
    elif grace_text in ("0", "1", "2", "3"):
        grace = int(grace_text)
    else:
        raise ValueError(f"bad grace {grace_text!r}")
    if passes_text not in ("0", "1", "2"):
        raise ValueError(f"bad passes {passes_text!r}")
    if not moves_text.isdigit():
        raise ValueError(f"bad move counter {moves_text!r}")
    return board, to_move, grace, int(passes_text), int(moves_text)


def board_to_rows(board: Board) -> str:
    return "/".join(
        "".join(sat_char(board[cell_of(r, c)]) for c in range(SIZE)) for r in range(SIZE)
    )


def setup_problems(spn: str) -> list[str]:
    """R4: what is wrong with a start position (empty list when it is a valid R4 set-up)."""
    board, to_move, grace, passes, moves = parse_spn(spn)
    problems = []
    if (to_move, grace, passes, moves) != (RED, None, 0, 0):
        problems.append("start counters must be 'r - 0 0' (R5)")
    expected_cells = set()
    # (color, edge cells in dealing order, inward step)
    sides = (
        (RED, [cell_of(0, c) for c in range(2, 8)], (1, 0)),
        (RED, [cell_of(9, c) for c in range(2, 8)], (-1, 0)),
        (BLUE, [cell_of(r, 0) for r in range(2, 8)], (0, 1)),
        (BLUE, [cell_of(r, 9) for r in range(2, 8)], (0, -1)),
    )
    values = {RED: [], BLUE: []}
    for color, cells, (dr, dc) in sides:
        for edge_cell in cells:
            r, c = row_col(edge_cell)
            inner = cell_of(r + dr, c + dc)
            on_edge, on_inner = board[edge_cell], board[inner]
            if (on_edge is None) == (on_inner is None):
                problems.append(f"slot {square_name(edge_cell)} must hold exactly one satellite")
                continue
            sat, where = (on_edge, edge_cell) if on_edge is not None else (on_inner, inner)
            expected_cells.add(where)
            if sat.color != color:
                problems.append(f"{square_name(where)} has the wrong color")
            if (sat.value <= 2) != (where == inner):
                problems.append(f"{square_name(where)}: values 1-2 go one cell inward, 3-4 stay")
            values[color].append(sat.value)
    for color in (RED, BLUE):
        if sorted(values[color]) != [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]:
            problems.append(f"color {color} does not have three of each value (R3)")
    if any(board[c] is not None for c in range(N_CELLS) if c not in expected_cells):
        problems.append("satellites outside the set-up cells")
    if connected_cells(board):
        problems.append("satellites of different colors orthogonally adjacent at the start")
    return problems


# --------------------------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------------------------


class _Before(NamedTuple):
    """Facts about the position before the move (computed once per position)."""

    connected: set[int]  # cells of connected satellites
    connected_pids: frozenset  # their identities
    colony_of: dict  # pid -> index of its colony (groups of >= 3) before the move
    r9_open: bool  # R9: a free edge or at least one existing connection


class RefGame:
    """Reference game state; mirrors the engine's `Game` API where tests need it."""

    def __init__(self, spn: str, max_moves: int = DEFAULT_MAX_MOVES):
        self.board, self.to_move, self.grace, self.passes, self.moves = parse_spn(spn)
        self.max_moves = max_moves
        # While a displacement waits for its push: (from_cell, direction, k, target_cell).
        self.pending: tuple[int, int, int, int] | None = None
        self.history: list[str] = []
        self._before_cache: _Before | None = None
        self._legal_cache: dict[int, Board] | None = None

    # ---------------------------------------------------------------- status (section 7)

    def n_connected(self) -> int:
        return len(connected_cells(self.board))

    @property
    def terminated(self) -> bool:
        """Ended by the rules: R16 (>= 23 connected), R18 (grace 0) or R19 (two passes)."""
        return self.pending is None and (
            self.n_connected() >= END_CONNECTED or self.grace == 0 or self.passes >= 2
        )

    @property
    def truncated(self) -> bool:
        """R20: ended only by the move cap."""
        return self.pending is None and not self.terminated and self.moves >= self.max_moves

    @property
    def is_over(self) -> bool:
        return self.terminated or self.truncated

    def score(self) -> RefScore:
        return score_board(self.board)

    def to_spn(self) -> str:
        assert self.pending is None, "SPN is only written between moves"
        grace = "-" if self.grace is None else str(self.grace)
        side = "r" if self.to_move == RED else "b"
        return f"{board_to_rows(self.board)} {side} {grace} {self.passes} {self.moves}"

    def clone(self) -> RefGame:
        other = RefGame.__new__(RefGame)
        other.board = list(self.board)
        other.to_move, other.grace, other.passes, other.moves = (
            self.to_move,
            self.grace,
            self.passes,
            self.moves,
        )
        other.max_moves = self.max_moves
        other.pending = self.pending
        other.history = list(self.history)
        other._before_cache = None
        other._legal_cache = None
        return other

    # ---------------------------------------------------------------- legality

    def _before(self) -> _Before:
        if self._before_cache is None:
            connected = connected_cells(self.board)
            colony_of = {}
            for i, comp in enumerate(groups(self.board)):
                if len(comp) >= COLONY_MIN:
                    for cell in comp:
                        colony_of[self.board[cell].pid] = i
            self._before_cache = _Before(
                connected,
                frozenset(self.board[c].pid for c in connected),
                colony_of,
                some_edge_is_free(self.board) or bool(connected),
            )
        return self._before_cache

    def _result_is_legal(
        self, after: Board, x_cell: int, k: int, value: int, displacement: bool
    ) -> bool:
        """Check every rule on the whole resulting position (R14).

        `after` is the complete board after the move (and the push, for a displacement);
        `x_cell` is where the moved satellite X now stands, `k` the distance it went.
        """
        before = self._before()
        connected_after = connected_cells(after)
        x_connected = x_cell in connected_after

        # R7: a connection move must use exactly k = value.
        if x_connected and k != value:
            return False

        # R8: connections are permanent. Only unconnected satellites move, so every satellite
        # connected before is still connected after; this is a consequence, asserted as a check.
        connected_pids_after = {after[c].pid for c in connected_after}
        assert before.connected_pids <= connected_pids_after

        # R9: a move that leaves any satellite newly connected needs, on the position BEFORE the
        # move, a free edge or an existing connection.
        if connected_pids_after - before.connected_pids and not before.r9_open:
            return False

        comps = groups(after)
        # R11: no group of 7 or more.
        if any(len(comp) > MAX_GROUP for comp in comps):
            return False
        # R12: satellites from two different colonies (before the move) never end up in one group.
        for comp in comps:
            colonies = {
                before.colony_of[after[c].pid] for c in comp if after[c].pid in before.colony_of
            }
            if len(colonies) > 1:
                return False
        # R13: no two orthogonally adjacent connected satellites of the same color.
        if touching_twins(after, connected_after):
            return False

        if displacement:
            # R15.2: X is connected after the whole move (k == value was checked by the caller).
            if not x_connected:
                return False
            # R15.3: X's group has 3 or more satellites.
            x_group = next(comp for comp in comps if x_cell in comp)
            if len(x_group) < COLONY_MIN:
                return False
        return True

    def _move_result(self, from_cell: int, direction: int, k: int) -> Board | None:
        """The board after a legal non-displacement move, or None if the move is not one."""
        sat = self.board[from_cell]
        target = ray(from_cell, direction, k)
        if target is None or self.board[target] is not None:
            return None
        after = list(self.board)
        after[from_cell] = None
        after[target] = sat
        return after if self._result_is_legal(after, target, k, sat.value, False) else None

    def _displacement_preconditions(self, from_cell: int, direction: int, k: int) -> bool:
        """R15 before the push: target holds an unconnected opponent satellite (R15 intro),
        it is one of the 8 neighbours of one of the mover's connected satellites (R15.1),
        and k is exactly X's value (R15.2)."""
        sat = self.board[from_cell]
        target = ray(from_cell, direction, k)
        if target is None:
            return False
        victim = self.board[target]
        if victim is None or victim.color == sat.color:
            return False
        before = self._before()
        if target in before.connected:  # connected satellites can never be displaced (R8)
            return False
        if not any(
            n in before.connected and self.board[n].color == sat.color for n in KING[target]
        ):
            return False
        return k == sat.value

    def _push_results(self, from_cell: int, direction: int, k: int) -> Iterator[tuple[int, Board]]:
        """All (push action, board after) that legally complete the displacement (R15.4-5)."""
        if not self._displacement_preconditions(from_cell, direction, k):
            return
        sat = self.board[from_cell]
        target = ray(from_cell, direction, k)
        victim = self.board[target]
        mid = list(self.board)  # X has moved: the cell it left counts as empty (R15.4)
        mid[from_cell] = None
        mid[target] = sat
        for push_dir in range(8):
            for distance in (1, 2):
                landing = ray(target, push_dir, distance)
                if landing is None or mid[landing] is not None:
                    continue
                after = list(mid)
                after[landing] = victim
                if self._result_is_legal(after, target, k, sat.value, True):
                    yield push_action(push_dir, distance), after

    def legal_results(self) -> dict[int, Board | None]:
        """Every legal action -> the board after it (None for a displacement's first step,
        which completes only with its push, and for pass)."""
        if self._legal_cache is not None:
            return self._legal_cache
        result: dict[int, Board | None] = {}
        if self.is_over:
            pass
        elif self.pending is not None:
            # Between the two steps of a displacement only push actions are legal.
            for action, after in self._push_results(*self.pending[:3]):
                result[action] = after
        else:
            before = self._before()
            for from_cell in range(N_CELLS):
                sat = self.board[from_cell]
                # R6: the player moves one of their own unconnected satellites.
                if sat is None or sat.color != self.to_move or from_cell in before.connected:
                    continue
                for direction in range(8):
                    for k in range(1, sat.value + 1):  # R6: 1 <= k <= value
                        target = ray(from_cell, direction, k)
                        if target is None:
                            continue
                        action = move_action(from_cell, direction, k)
                        if self.board[target] is None:
                            after = self._move_result(from_cell, direction, k)
                            if after is not None:
                                result[action] = after
                        elif next(self._push_results(from_cell, direction, k), None) is not None:
                            # section 8: legal iff at least one push completes it legally
                            result[action] = None
            if not result:
                result[PASS_ACTION] = None  # R19: pass only when nothing else is legal
        self._legal_cache = result
        return result

    def legal_actions(self) -> set[int]:
        return set(self.legal_results())

    # ---------------------------------------------------------------- playing

    def play(self, action: int) -> None:
        results = self.legal_results()
        if action not in results:
            raise ValueError(f"illegal action {action}")
        if self.pending is not None:
            from_cell, _, _, target = self.pending
            direction, distance = decode_push_action(action)
            text = (
                f"{square_name(from_cell)}-{square_name(target)}>"
                f"{square_name(ray(target, direction, distance))}"
            )
            self.pending = None
            self._complete(results[action], False, text)
        elif action == PASS_ACTION:
            self._complete(list(self.board), True, "pass")
        else:
            from_cell, direction, k = decode_move_action(action)
            target = ray(from_cell, direction, k)
            if self.board[target] is None:
                self._complete(
                    results[action], False, f"{square_name(from_cell)}-{square_name(target)}"
                )
            else:
                # First step of a displacement: wait for the push (same player).
                self.pending = (from_cell, direction, k, target)
                self._legal_cache = None

    def _complete(self, after: Board, is_pass: bool, text: str) -> None:
        """Book-keeping after a completed move (section 7, R16-R20)."""
        mover = self.to_move
        self.board = after
        self.history.append(text)
        self._before_cache = None
        self._legal_cache = None
        self.moves += 1
        self.passes = self.passes + 1 if is_pass else 0  # R19: passes in a row
        connected = connected_cells(after)
        if self.grace is not None:
            # R18: the mover is the grace player; grace goes down by one per move (a pass
            # uses one too, R19). READING: the same player stays to move, also after the
            # last grace move (grace then reads 0 "for the player to move", section 7).
            self.grace -= 1
            return
        if len(connected) >= END_CONNECTED:
            # R16 comes first: the game ends at once, no grace moves, nobody "done".
            self.to_move = 1 - mover
            return
        done = [
            color
            for color in (RED, BLUE)
            if sum(1 for c in connected if after[c].color == color) == SATELLITES_PER_PLAYER
        ]
        assert len(done) <= 1  # both done would mean 24 connected: R16
        if done:
            # R17: that player is done; the other one (maybe the mover) starts 3 grace moves.
            self.to_move = 1 - done[0]
            self.grace = GRACE_MOVES
        else:
            self.to_move = 1 - mover  # R5
