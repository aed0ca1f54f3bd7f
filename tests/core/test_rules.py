"""Hand-built rule tests: every rule R1-R24 of RULES.md on positions built by hand.

Each test names its rule. Expected legal sets are derived from RULES.md by hand (the
reasoning is in the docstrings and comments), not from the engine's output. Positions are
pictures (north = rank 10 first, see tests/positions.py); satellites that do not matter are
completed by `positions.spn` as unconnected fillers away from the test satellites.

Directions (section 8): 0 N, 1 NE, 2 E, 3 SE, 4 S, 5 SW, 6 W, 7 NW; N = row - 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from positions import (
    ANYWHERE,
    DISPLACE_PICTURE,
    DISPLACE_REGION,
    cell,
    cols,
    either,
    moves_from,
    rows,
    show,
    spn,
    square,
)

from satellites_env.core import (
    N_ACTIONS,
    PASS_ACTION,
    PUSH_BASE,
    Game,
    IllegalActionError,
    NotationError,
    parse_spn,
    score,
)
from satellites_env.core.board import RAY, cell_of, move_action, push_action

N, NE, E, SE, S, SW, W, NW = range(8)
RED, BLUE = 0, 1


def make(picture=None, max_moves: int = 400, **kwargs) -> Game:
    return Game.from_spn(spn(picture, **kwargs), max_moves=max_moves)


def tail(game: Game) -> list[str]:
    """The SPN fields after the board: [to_move, grace, passes, moves]."""
    return game.to_spn().split()[1:]


def board_rows(game: Game) -> list[str]:
    return game.to_spn().split()[0].split("/")


def act(where: str, direction: int, k: int) -> int:
    return move_action(cell(where), direction, k)


def is_legal(game: Game, action: int) -> bool:
    return bool(game.legal_mask()[action])


def sources(game: Game) -> set[int]:
    """Cells of every satellite that has a legal move action."""
    return {int(a) // 32 for a in game.legal_actions() if a < PUSH_BASE}


def quiet_move(game: Game) -> str:
    """Some legal move that is not a displacement (or 'pass')."""
    return next(m for m in game.legal_moves() if ">" not in m)


def connected_cells(game: Game) -> set[str]:
    """Squares of every connected satellite (members of groups, R10)."""
    return {square(c) for g in game.score().groups for c in g.cells}


# =============================================================================== R1, R2


def test_r1_board_is_10x10_and_cell_index_is_row_times_10_plus_col():
    """R1: 10 x 10, row 0 north, col 0 west, cell = row * 10 + col; section 8 sizes."""
    assert cell_of(0, 0) == 0 and cell_of(0, 9) == 9 and cell_of(9, 0) == 90
    assert cell_of(3, 7) == 37 and cell_of(9, 9) == 99
    assert N_ACTIONS == 3217 and PUSH_BASE == 3200 and PASS_ACTION == 3216
    game = Game.new(seed=0)
    assert game.board.shape == (100,)
    # action = ((from * 8) + direction) * 4 + (k - 1)
    assert move_action(37, SW, 3) == (37 * 8 + 5) * 4 + 2
    assert push_action(W, 2) == 3200 + 6 * 2 + 1


# R6 position: red C on i3 (row 7, col 8) near the east and south edges. Red A on i4 and
# red B on g3 block single cells of its lines, red A on g1 blocks SW 2, blue b on g5 lies on
# its NW line. No blue is orthogonally next to any cell the C can reach, so no move connects.
R6_PICTURE = """
    .......... 10
    .......... 9
    .......... 8
    .......... 7
    .......... 6
    ......b... 5
    ........A. 4
    ......B.C. 3
    .......... 2
    ......A... 1
"""
R6_REGION = either(rows(0, 2), cols(0, 3))


def test_r1_r2_r6_moves_stop_at_the_board_edge():
    """R1/R2/R6: lines end at the board edge; off-board actions are never legal."""
    game = make(R6_PICTURE, region=R6_REGION)
    mask = game.legal_mask()
    i3 = cell("i3")  # row 7, col 8: one cell from the east edge, two from the south edge
    for direction in (NE, E, SE):
        assert mask[move_action(i3, direction, 1)] == 1
        for k in (2, 3, 4):
            assert mask[move_action(i3, direction, k)] == 0, (direction, k)
    for direction in (S, SW):
        assert mask[move_action(i3, direction, 3)] == 0
        assert mask[move_action(i3, direction, 4)] == 0
    assert game.describe(move_action(i3, E, 2)) == "i3-(off board)"


def test_r2_edges_include_corners():
    """R2: corners belong to two edges. Two satellites on opposite corners (a10 and j1)
    occupy all four edges, so no edge is free and (R9) the first connection is illegal;
    moving the j1 one off the corner frees the south and east edges."""
    picture = """
        A......... 10
        .......... 9
        .......... 8
        .......... 7
        .......... 6
        ...B..c... 5
        .......... 4
        .......... 3
        .......... 2
        .........a 1
    """
    game = make(picture)
    assert not is_legal(game, act("d5", E, 2))  # d5-f5 would connect to g5: no free edge
    assert is_legal(game, act("d5", E, 1))  # d5-e5 connects nothing
    freed = make(
        picture.replace(".........a 1", ".......... 1").replace(".......... 2", "........a. 2")
    )
    assert is_legal(freed, act("d5", E, 2))


# =============================================================================== R3, R4, R5


@pytest.mark.parametrize("seed", range(40))
def test_r3_r4_setup(seed):
    """R3/R4: 12 satellites each (three of each value), red on the north/south edges and blue
    on the west/east edges, cols/rows 2..7, values 1 and 2 one cell inward, one satellite per
    edge cell, no orthogonal contact between colors (so nothing is connected)."""
    game = Game.new(seed=seed)
    board = game.board.reshape(10, 10)
    for sign in (1, -1):
        values = sorted(int(v) * sign for v in board.flat if v * sign > 0)
        assert values == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    for i in range(2, 8):
        # red: north edge column i is row 0 (value 3/4) or row 1 (value 1/2); south mirrored
        for edge_row, inner_row in ((0, 1), (9, 8)):
            outer, inner = int(board[edge_row, i]), int(board[inner_row, i])
            assert (outer, inner) in ((3, 0), (4, 0), (0, 1), (0, 2)), (edge_row, i)
        for edge_col, inner_col in ((0, 1), (9, 8)):
            outer, inner = int(board[i, edge_col]), int(board[i, inner_col])
            assert (outer, inner) in ((-3, 0), (-4, 0), (0, -1), (0, -2)), (edge_col, i)
    occupied = {(r, c) for r in range(10) for c in range(10) if board[r, c]}
    expected_cells = {(r, c) for r in (0, 1, 8, 9) for c in range(2, 8)} | {
        (r, c) for c in (0, 1, 8, 9) for r in range(2, 8)
    }
    assert occupied <= expected_cells and len(occupied) == 24
    for r in range(10):
        for c in range(10):
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr < 10 and c + dc < 10:
                    assert board[r, c] * board[r + dr, c + dc] >= 0, (r, c)
    assert game.connected_counts == (0, 0)
    assert tail(game) == ["r", "-", "0", "0"]


def test_r4_setup_is_seeded_and_random():
    """R4: the same seed gives the same set-up; different seeds shuffle; rng= works too;
    over many seeds every red and blue slot sees every value; diagonal contact happens."""
    assert Game.new(seed=7).to_spn() == Game.new(seed=7).to_spn()
    assert Game.new(rng=np.random.default_rng(7)).to_spn() == Game.new(seed=7).to_spn()
    spns = {Game.new(seed=s).to_spn() for s in range(30)}
    assert len(spns) == 30
    seen: dict[tuple[str, int], set[int]] = {}
    diagonal_contact = False
    for s in range(300):
        board = Game.new(seed=s).board.reshape(10, 10)
        for i in range(2, 8):
            for key, value in (
                (("N", i), board[0, i] + board[1, i]),
                (("S", i), board[9, i] + board[8, i]),
                (("W", i), -(board[i, 0] + board[i, 1])),
                (("E", i), -(board[i, 9] + board[i, 8])),
            ):
                seen.setdefault(key, set()).add(int(value))
        if board[1, 2] > 0 and board[2, 1] < 0:  # red c9 and blue b8 touch diagonally
            diagonal_contact = True
    assert all(values == {1, 2, 3, 4} for values in seen.values())
    assert diagonal_contact


def test_r5_red_moves_first_then_turns_alternate():
    """R5: red (player 0) moves first; then blue; then red again."""
    game = Game.new(seed=3)
    assert game.to_move == RED
    assert all(game.board[c] > 0 for c in sources(game))
    game.play_move(quiet_move(game))
    assert game.to_move == BLUE and tail(game) == ["b", "-", "0", "1"]
    assert all(game.board[c] < 0 for c in sources(game))
    game.play_move(quiet_move(game))
    assert game.to_move == RED and tail(game) == ["r", "-", "0", "2"]


# =============================================================================== R6


def test_r6_move_in_8_directions_by_1_to_value_jumping_but_not_landing_on_pieces():
    """R6: the C (value 3) on i3 moves 1..3 cells in 8 directions, passing over satellites
    of both colors (i4 red, g3 red, g5 blue), never landing on one (i4, g3, g1, g5: g5 holds
    an unconnected blue but red has no connected satellite, so it is no displacement), never
    off the board."""
    game = make(R6_PICTURE, region=R6_REGION)
    assert moves_from(game, "i3") == {
        "i3-i5",
        "i3-i6",  # N: i4 is own, jumped
        "i3-j4",  # NE: then off the board
        "i3-j3",  # E
        "i3-j2",  # SE
        "i3-i2",
        "i3-i1",  # S
        "i3-h2",  # SW: g1 is occupied, then off the board
        "i3-h3",
        "i3-f3",  # W: g3 is own, jumped
        "i3-h4",
        "i3-f6",  # NW: g5 is blue, jumped
    }, show(game)
    for target in ("i4", "g3", "g1", "g5"):
        assert f"i3-{target}" not in game.legal_moves()


def test_r6_only_own_satellites_move():
    """R6: only the player to move moves, and only their own satellites."""
    game = make(R6_PICTURE, region=R6_REGION)
    assert game.to_move == RED
    assert sources(game) and all(game.board[c] > 0 for c in sources(game))
    blue = make(R6_PICTURE, region=R6_REGION, to_move="b")
    assert sources(blue) and all(blue.board[c] < 0 for c in sources(blue))
    assert cell("g5") in sources(blue)
    with pytest.raises(IllegalActionError, match=r"red moves only its own satellites \(R6\)"):
        game.play(act("g5", S, 1))  # red may not move the blue b


# =============================================================================== R7

# Red C on c3 (row 7, col 2); blue b on e2 (row 8, col 4) and f4 (row 6, col 5). Fillers in
# rows 0-2 and cols 7-9 (far from everything the C reaches) but off the west and south
# edges, which stay free (R9).
R7_PICTURE = """
    .......... 10
    .......... 9
    .......... 8
    .......... 7
    .......... 6
    .......... 5
    .....b.... 4
    ..C....... 3
    ....b..... 2
    .......... 1
"""


def R7_REGION(r: int, c: int) -> bool:
    return (r <= 2 or c >= 7) and c > 0 and r < 9


def test_r7_connection_only_at_exact_distance():
    """R7: a connecting move must use k = value (3): c3-f3 (next to f4) is legal, c3-e3
    (k=2, next to e2), c3-d2 (k=1, next to e2) and c3-e1 (k=2, next to e2) are not. Moves that
    connect nothing are legal at every k."""
    game = make(R7_PICTURE, region=R7_REGION)
    assert moves_from(game, "c3") == {
        "c3-c4",
        "c3-c5",
        "c3-c6",  # N
        "c3-d4",
        "c3-e5",
        "c3-f6",  # NE
        "c3-d3",
        "c3-f3",  # E: e3 (k=2) would touch e2
        "c3-c2",
        "c3-c1",  # S
        "c3-b2",
        "c3-a1",  # SW
        "c3-b3",
        "c3-a3",  # W
        "c3-b4",
        "c3-a5",  # NW
    }, show(game)  # SE: d2 (k=1) and e1 (k=2) would touch e2
    game.play_move("c3-f3")
    assert connected_cells(game) == {"f3", "f4"}


# =============================================================================== R8


def test_r8_connected_satellites_are_locked():
    """R8: orthogonal contact connects (diagonal does not); connected satellites never move,
    for either player; a connection made by a move is permanent."""
    picture = """
        .......... 10
        .......... 9
        .......... 8
        .......... 7
        .......... 6
        ....Cb.... 5
        ......B... 4
        .......... 3
        .......... 2
        .......... 1
    """
    game = make(picture)
    assert connected_cells(game) == {"e5", "f5"}  # g4 is only diagonal to f5
    assert moves_from(game, "e5") == set()
    assert moves_from(game, "g4")  # the diagonal neighbour is free
    blue = make(picture, to_move="b")
    assert moves_from(blue, "f5") == set()
    # A connection once made stays: after c3-f3 in the R7 position neither f3 nor f4 moves.
    game = make(R7_PICTURE, region=R7_REGION)
    game.play_move("c3-f3")
    assert moves_from(game, "f4") == set()
    game.play_move(quiet_move(game))
    assert moves_from(game, "f3") == set()
    assert {"f3", "f4"} <= connected_cells(game)


# =============================================================================== R9

# All four edges hold a satellite (e10 north, e1 south, a8 west, j8 east) and nothing is
# connected. Red B on d5 could connect to blue c on g5 with d5-f5 (k = 2 = value).
R9_NO_FREE_EDGE = """
    ....A..... 10
    .......... 9
    a........a 8
    .......... 7
    .......... 6
    ...B..c... 5
    .......... 4
    .......... 3
    .......... 2
    ....A..... 1
"""


def test_r9_first_connection_needs_a_free_edge():
    """R9: no free edge and no connection: the connecting d5-f5 is illegal, the
    non-connecting d5-e5 is legal (non-connecting moves are always allowed)."""
    game = make(R9_NO_FREE_EDGE)
    assert game.connected_counts == (0, 0)
    assert not is_legal(game, act("d5", E, 2))
    assert is_legal(game, act("d5", E, 1))
    with pytest.raises(IllegalActionError, match=r"no connection may be made yet.*\(R9\)"):
        game.play_move("d5-f5")


def test_r9_free_edge_allows_the_first_connection():
    """R9: move the north satellite off the edge (e10 -> e9): north is free, d5-f5 is legal."""
    game = make(
        R9_NO_FREE_EDGE.replace("....A..... 10", ".......... 10").replace(
            ".......... 9", "....A..... 9"
        )
    )
    assert is_legal(game, act("d5", E, 2))
    game.play_move("d5-f5")
    assert connected_cells(game) == {"f5", "g5"}


def test_r9_an_existing_connection_allows_connections_without_free_edge():
    """R9: no free edge, but a connection (h3-i3) already exists: d5-f5 is legal."""
    game = make(R9_NO_FREE_EDGE.replace(".......... 3", ".......Dd. 3"))
    assert game.connected_counts == (1, 1)
    assert is_legal(game, act("d5", E, 2))


def test_r9_checks_the_position_before_the_move():
    """R9: the only satellite on the north edge is the mover (f10). Before the move no edge
    is free, so f10-f8 (connecting to e8) is illegal although the north edge is free after it;
    f10-f9 (no connection) is legal."""
    picture = """
        .....B.... 10
        .......... 9
        a...c....a 8
        .......... 7
        .......... 6
        .......... 5
        .......... 4
        .......... 3
        .......... 2
        ....A..... 1
    """
    game = make(picture)
    assert not is_legal(game, act("f10", S, 2))
    assert not is_legal(game, act("f10", SW, 2))  # d8 also touches e8
    assert is_legal(game, act("f10", S, 1))


def test_r9_landing_on_the_free_edge_is_fine():
    """R9: the north edge is free before the move; e8-g10 lands on it and connects to g9:
    legal (the check is on the position before). e8-f9 would connect at k=1: illegal (R7)."""
    picture = """
        .......... 10
        ......b... 9
        a...B....a 8
        .......... 7
        .......... 6
        .......... 5
        .......... 4
        .......... 3
        .......... 2
        ....A..... 1
    """
    game = make(picture)
    assert is_legal(game, act("e8", NE, 2))
    assert not is_legal(game, act("e8", NE, 1))
    game.play_move("e8-g10")
    assert connected_cells(game) == {"g10", "g9"}


# =============================================================================== R10


def test_r10_groups_pairs_and_colonies():
    """R10: groups are components of the orthogonal red-blue contact graph with >= 2
    satellites; 2 = pair (not a colony), >= 3 = colony, 6 = crowned (R11). Same-color
    contact and diagonal contact do not join."""
    picture = """
        .......... 10
        .Aa....B.. 9
        ........b. 8
        .......... 7
        .cCc...... 6
        .......... 5
        .......... 4
        .DdDdDd... 3
        .......... 2
        .......... 1
    """
    game = make(picture, region=ANYWHERE)
    groups = sorted(game.score().groups, key=lambda g: g.size)
    assert [g.size for g in groups] == [2, 3, 6]
    pair, colony, crowned = groups
    assert not pair.is_colony and colony.is_colony and crowned.is_colony
    assert crowned.crowned and not colony.crowned
    assert {cell("b9"), cell("c9")} == set(pair.cells)
    assert {cell("b6"), cell("c6"), cell("d6")} == set(colony.cells)
    assert (colony.red_sum, colony.blue_sum) == (3, 6)
    assert (crowned.red_sum, crowned.blue_sum) == (12, 12)
    assert len(game.score().colonies) == 2
    assert game.connected_counts == (5, 6)  # h9/i8 are diagonal: not connected


# =============================================================================== R11, R12

LINE_OF_5 = """
    .......... 10
    .......... 9
    .......... 8
    .......... 7
    .......... 6
    ..bBbBb... 5
    .......... 4
    .......... 3
    .......C.. 2
    .......... 1
"""


def test_r11_group_of_six_is_legal_and_crowned():
    """R11: h2-h5 joins the group of 5 (c5..g5) next to g5: 6 is legal, a crowned colony."""
    game = make(LINE_OF_5)
    assert is_legal(game, act("h2", N, 3))
    game.play_move("h2-h5")
    (group,) = game.score().groups
    assert group.size == 6 and group.crowned


def test_r11_group_of_seven_is_illegal():
    """R11: next to the crowned line c5..h5, blue i8-i5 (touching h5) would make 7: illegal;
    i8-i6 touches nothing and stays legal."""
    picture = """
        .......... 10
        .......... 9
        ........c. 8
        .......... 7
        .......... 6
        ..bBbBbB.. 5
        .......... 4
        .......... 3
        .......... 2
        .......... 1
    """
    game = make(picture, to_move="b")
    assert not is_legal(game, act("i8", S, 3))
    assert is_legal(game, act("i8", S, 2))


def test_r11_join_colony_and_pair_counts_all_members():
    """R11/R12: f2-f5 joins the colony c5-d5-e5 (3), the pair g5-h5 (2) and itself: 6, legal.
    With a 4th member (c6 on c5) the same move makes 7: illegal."""
    picture = """
        .......... 10
        .......... 9
        .......... 8
        .......... 7
        .......... 6
        ..bBb.bB.. 5
        .......... 4
        .......... 3
        .....C.... 2
        .......... 1
    """
    game = make(picture)
    assert is_legal(game, act("f2", N, 3))
    game.play_move("f2-f5")
    assert [g.size for g in game.score().groups] == [6]
    bigger = make(picture.replace(".......... 6", "..B....... 6"))
    assert [g.size for g in bigger.score().groups] == [4, 2]
    assert not is_legal(bigger, act("f2", N, 3))


def test_r12_colonies_never_merge_but_pairs_may_join():
    """R12: f2-f5 between the colonies c5-d5-e5 and g5-h5-i5 is illegal (it would also make 7,
    R11); between two pairs (d5-e5, g5-h5) it is legal (a colony of 5)."""
    two_colonies = """
        .......... 10
        .......... 9
        .......... 8
        .......... 7
        .......... 6
        ..bBb.cCd. 5
        .......... 4
        .......... 3
        .....C.... 2
        .......... 1
    """
    game = make(two_colonies)
    assert [g.size for g in game.score().groups] == [3, 3]
    assert not is_legal(game, act("f2", N, 3))
    two_pairs = make(two_colonies.replace("..bBb.cCd. 5", "...Bb.cC.. 5"))
    assert is_legal(two_pairs, act("f2", N, 3))
    two_pairs.play_move("f2-f5")
    assert [g.size for g in two_pairs.score().groups] == [5]


# =============================================================================== R13

# e5/f5: a connected pair. e7 blue c unconnected. Movers: red C e9, red B d3, red D g8,
# blue b a5. f4 is a blue a, unconnected, next to the connected f5.
R13_PICTURE = """
    .......... 10
    ....C..... 9
    ......D... 8
    ....c..... 7
    .......... 6
    b...Bb.... 5
    .....a.... 4
    ...B...... 3
    .......... 2
    .......... 1
"""


def test_r13_no_touching_connected_twins():
    """R13: e9-e6 would connect to e7 while touching the connected red e5: illegal.
    g8-g4 would connect the blue f4, which touches the connected blue f5: illegal.
    d3-d5 (no connection) next to the connected e5 is legal."""
    game = make(R13_PICTURE)
    assert game.connected_counts == (1, 1)
    assert not is_legal(game, act("e9", S, 3))
    assert not is_legal(game, act("g8", S, 4))
    assert not is_legal(game, act("g8", S, 3))  # g5 touches f5 at k=3 < 4 (R7)
    assert is_legal(game, act("g8", S, 2))
    assert is_legal(game, act("d3", N, 2))


def test_r13_unconnected_next_to_connected_cannot_be_connected_later():
    """R13: after d3-d5 (unconnected red next to the connected red e5), blue a5-c5 would
    connect d5: illegal. Before d5 was there, a5-c5 connected nothing and was legal."""
    blue_first = make(R13_PICTURE, to_move="b")
    assert is_legal(blue_first, act("a5", E, 2))
    game = make(R13_PICTURE)
    game.play_move("d3-d5")
    assert game.connected_counts == (1, 1)
    assert not is_legal(game, act("a5", E, 2))
    assert is_legal(game, act("a5", E, 1))


# =============================================================================== R14


def test_r14_legality_is_judged_on_the_whole_result():
    """R14: R6/R7 geometry can be fine while the result is not: g8-g4 (k = 4 = D) breaks R13
    through the blue f4 it connects, not through the mover; f2-f5 breaks R11 only because
    it joins a colony of 4 and a pair (4 + 2 + 1 = 7); the same move joining 3 + 2 is fine."""
    game = make(R13_PICTURE)
    assert not is_legal(game, act("g8", S, 4))
    join = """
        .......... 10
        .......... 9
        .......... 8
        .......... 7
        ..B....... 6
        ..bBb.bB.. 5
        .......... 4
        .......... 3
        .....C.... 2
        .......... 1
    """
    assert not is_legal(make(join), act("f2", N, 3))
    assert is_legal(make(join.replace("..B....... 6", ".......... 6")), act("f2", N, 3))


# =============================================================================== R15

# The big displacement position. Colony a8 b, b8 A, c8 c, c7 C, d7 d (5). Blue a on c9 is
# unconnected, diagonal to the connected red b8. Red B on e9 can reach c9 with k = 2. Red A
# on e8 is unconnected.


def test_r15_displacement_exact_push_set():
    """R15: e9-c9 onto the unconnected blue a. X (c9) touches c8: its group is 6 (crowned).
    Push landings for the a from c9, one by one:
      N1 c10, E1 d9, W1 b9: the a touches X -> group 7 (R11): illegal.
      N2, NE2, NW2: off the board.  S1 c8, S2 c7, SW1 b8: occupied.
      SE1 d8, SE2 e7: the a would be connected (to the red e8) while touching the connected
        blue c8 / d7 (R13): illegal.
      NE1 d10, NW1 b10, W2 a9 (over b9), SW2 a7 (over b8): unconnected, legal.
      E2 e9: X's source counts as empty; the a connects to e8 (a pair; R7 does not apply to
        a push, nor does the a's value 1 limit it to 1 cell): legal."""
    game = make(DISPLACE_PICTURE, region=DISPLACE_REGION, moves=10)
    assert [g.size for g in game.score().groups] == [5]
    expected_landings = {"d10", "e9", "a7", "a9", "b10"}
    assert moves_from(game, "e9") & {m for m in game.legal_moves() if ">" in m} == {
        f"e9-c9>{x}" for x in expected_landings
    }, show(game)
    move = act("e9", W, 2)
    assert is_legal(game, move)
    game.play(move)
    assert game.pending_push == cell("c9")
    assert game.to_move == RED and game.moves == 10 and game.history == []
    assert set(game.legal_actions()) == {
        push_action(NE, 1),
        push_action(E, 2),
        push_action(SW, 2),
        push_action(W, 2),
        push_action(NW, 1),
    }
    assert sorted(game.legal_moves()) == sorted(f">{x}" for x in expected_landings)
    with pytest.raises(NotationError, match="only between moves"):
        game.to_spn()
    for bad in (
        push_action(N, 1),
        push_action(E, 1),
        push_action(SE, 1),
        push_action(S, 1),
        push_action(N, 2),
    ):
        with pytest.raises(IllegalActionError):
            game.play(bad)
    with pytest.raises(IllegalActionError, match="only a push is legal now"):
        game.play(act("e8", N, 1))  # only pushes are legal while a push is pending
    game.play(push_action(E, 2))
    assert game.pending_push is None
    assert game.history == ["e9-c9>e9"]
    assert tail(game) == ["b", "-", "0", "11"]
    assert [r[:7] for r in board_rows(game)[:4]] == [".......", "..B.a..", "bAc.A..", "..Cd..."]
    assert sorted(g.size for g in game.score().groups) == [2, 6]


def test_r15_displacement_in_one_notation_move():
    """R15 / section 7: 'e9-c9>a7' plays the move and the push (passing over b8)."""
    game = make(DISPLACE_PICTURE, region=DISPLACE_REGION, moves=10)
    assert game.actions_of("e9-c9>a7") == [act("e9", W, 2), push_action(SW, 2)]
    game.play_move("e9-c9>a7")
    rows_ = board_rows(game)
    assert rows_[1][2] == "B" and rows_[3][0] == "a" and rows_[1][4] == "."
    assert tail(game) == ["b", "-", "0", "11"]


# D2: pair e5 A / f5 b; blue a on d6 diagonal to e5; red B on b6 reaches d6 with k = 2.
D2_PICTURE = """
    .......... 10
    .......... 9
    .......... 8
    .......... 7
    .B.a...... 6
    ....Ab.... 5
    .......... 4
    .......... 3
    .......... 2
    .......... 1
"""
D2_REGION = either(rows(8, 9), cols(8, 9))


def test_r14_r15_x_must_be_connected_in_a_group_of_three_after_the_push():
    """R14/R15.2/R15.3: b6-d6 onto the a. On d6 X touches no blue, so X is connected only if
    the push puts the a orthogonally next to it. N1 d7 and W1 c6 make only the pair X-a:
    illegal (R15.3). E1 e6 and S1 d5 connect the a to X and to e5: group X, a, e5, f5 = 4:
    legal. Every other landing leaves X unconnected (R15.2); SE1 e5 is occupied."""
    game = make(D2_PICTURE, region=D2_REGION)
    assert {m for m in moves_from(game, "b6") if m.startswith("b6-d6")} == {
        "b6-d6>e6",
        "b6-d6>d5",
    }, show(game)
    game.play_move("b6-d6>d5")
    (group,) = game.score().groups
    assert {cell(x) for x in ("d6", "d5", "e5", "f5")} == set(group.cells)


# C1: pair c5 C / d5 b; blue a on e5 (unconnected); red C on e8 reaches e5 with k = 3.
C1_PICTURE = """
    .......... 10
    .......... 9
    ....C..... 8
    .......... 7
    .......... 6
    ..Cba..... 5
    .......... 4
    .......... 3
    .......... 2
    .......... 1
"""


def test_r15_1_target_must_neighbour_an_own_connected_satellite():
    """R15.1: e5 is not one of the 8 neighbours of a connected red (c5 is 2 cells away), so
    e8-e5 is illegal although X would be connected to d5 in a colony c5-d5-X. Adding the
    connected pair f4 D / f3 d (f4 diagonal to e5) makes it legal."""
    game = make(C1_PICTURE, region=either(rows(0, 1), cols(7, 9)))
    assert not is_legal(game, act("e8", S, 3))
    near = make(
        C1_PICTURE.replace(".......... 4", ".....D.... 4").replace(".......... 3", ".....d.... 3"),
        region=either(rows(0, 1), cols(7, 9)),
    )
    assert near.connected_counts == (2, 2)
    assert is_legal(near, act("e8", S, 3))
    assert "e8-e5>e6" in near.legal_moves()  # the a joins X: colony c5, d5, X, a


# S: pair e5 A / f5 b; blue a on f6 (unconnected, diagonal to e5, above f5). Red C f9 reaches
# f6 with k = 3; red D c6 reaches it with k = 3 (< 4); red C e8 reaches the own e5 with k = 3;
# red D b5 reaches the connected f5 with k = 4.
S_PICTURE = """
    .......... 10
    .....C.... 9
    ....C..... 8
    .......... 7
    ..D..a.... 6
    .D..Ab.... 5
    .......... 4
    .......... 3
    .......... 2
    .......... 1
"""
S_REGION = either(rows(8, 9), cols(8, 9))


def test_r15_2_exact_distance_and_targets():
    """R15.2: f9-f6 (k = 3 = C) displaces the a: X touches f5, colony e5-f5-X. c6-f6 is k = 3
    for a D (4): illegal. Landing on an own satellite (e8-e5) or on a connected opponent
    (b5-f5, k = 4) is never legal."""
    game = make(S_PICTURE, region=S_REGION)
    assert is_legal(game, act("f9", S, 3))
    assert not is_legal(game, act("c6", E, 3))
    assert not is_legal(game, act("e8", S, 3))
    assert not is_legal(game, act("b5", E, 4))
    displacements = {m for m in game.legal_moves() if ">" in m}
    assert not any(m.split("-")[0] in ("c6", "e8", "b5") for m in displacements)
    assert "f9-f6>g7" in moves_from(game, "f9")  # NE1: the a stands alone, X's colony is 3


def test_r15_4_no_legal_push_means_no_displacement():
    """R15.4/section 8: d7-a10 (k = 3, over c8 and b9) onto the corner a: X would touch b10
    (colony b10-b9-c10-X), but the a cannot be pushed anywhere: off the board N/W/NE/NW/SW,
    b10, c10, b9, c8, a8 occupied, a9 touches the connected blue a8 while connected to X
    (R13). So the move is illegal. Without the blue on a8 it is legal with exactly the pushes
    a9 (a joins the colony) and a8 (pair with the red a7)."""
    picture = """
        adB....... 10
        .A........ 9
        c.A....... 8
        B..C...... 7
        .......... 6
        .......... 5
        .......... 4
        .......... 3
        .......... 2
        .......... 1
    """
    region = either(rows(6, 9), cols(6, 9))
    game = make(picture, region=region)
    assert [g.size for g in game.score().groups] == [3, 2]
    assert not is_legal(game, act("d7", NW, 3))
    freed = make(picture.replace("c.A....... 8", "..A....... 8"), region=region)
    assert is_legal(freed, act("d7", NW, 3))
    assert {m for m in freed.legal_moves() if m.startswith("d7-a10")} == {"d7-a10>a9", "d7-a10>a8"}


def test_r15_connected_opponent_cannot_be_displaced_anywhere():
    """R8/R15: no legal move ever lands on a connected satellite or an own one."""
    game = make(DISPLACE_PICTURE, region=DISPLACE_REGION)
    board = game.board
    for action in game.legal_actions():
        if action >= PUSH_BASE:
            continue
        source, direction, k = action // 32, (action // 4) % 8, action % 4 + 1
        target = RAY[source, direction, k - 1]
        if board[target] != 0:
            assert board[target] < 0 and target == cell("c9")


# =============================================================================== R16 - R18

# Three crowned lines (rows 9, 7, 5: 18 connected) and the colony c2 D, d2 d, e2 D, f2 d
# (4): 22 connected, red 11 and blue 11. Red D on g6 can join the bottom colony at g2.
R16_PICTURE = """
    .........d 10
    ..AaAaAa.. 9
    .......... 8
    ..BbBbBb.. 7
    ......D... 6
    ..CcCcCc.. 5
    .......... 4
    .......... 3
    ..DdDd.... 2
    .......... 1
"""


def test_r16_23_connected_ends_at_once_even_when_completing_12():
    """R16: g6-g2 makes 23 connected and completes red's 12: the game ends at once, scored,
    with no grace (grace stays '-', blue would be next). Red controls the only controlled
    colony (D+D+D = 12 > d+d = 8)."""
    game = make(R16_PICTURE, fill=False, moves=30)
    assert game.connected_counts == (11, 11)
    game.play_move("g6-g2")
    assert game.connected_counts == (12, 11)
    assert game.is_over and game.terminated and not game.truncated
    assert tail(game) == ["b", "-", "0", "31"]
    assert board_rows(game)[8] == "..DdDdD..." and board_rows(game)[4] == ".........."
    assert not game.legal_mask().any() and game.legal_moves() == []
    result = game.score()
    assert result.controlled == (1, 0) and result.winner == RED
    assert result.reward(RED) == 1 and result.reward(BLUE) == -1
    # the final SPN is a valid position that is over
    assert Game.from_spn(game.to_spn()).terminated


# Red has 11 connected, blue 10; red D on h3 can join the colony c2 D, d2 d, e2 D at d3.
R17_PICTURE = """
    .........d 10
    ..AaAaAa.. 9
    .......... 8
    ..BbBbBb.. 7
    .......... 6
    ..CcCcCc.. 5
    .......... 4
    .......D.. 3
    ..DdD..... 2
    d......... 1
"""


def test_r17_r18_done_player_and_three_grace_moves():
    """R17/R18: h3-d3 connects red's 12th (22 in all, < 23): red is done, blue makes exactly
    3 grace moves, then the game ends. SPN after each move (section 7)."""
    game = make(R17_PICTURE, fill=False, moves=20)
    assert game.connected_counts == (11, 10)
    game.play_move("h3-d3")
    assert game.connected_counts == (12, 10)
    assert tail(game) == ["b", "3", "0", "21"] and game.grace == 3 and not game.is_over
    expected = [["b", "2", "0", "22"], ["b", "1", "0", "23"], ["b", "0", "0", "24"]]
    for move, fields in zip(("j10-j9", "j9-j8", "j8-j7"), expected, strict=False):
        assert game.to_move == BLUE
        assert all(game.board[c] < 0 for c in sources(game))  # red is done: never moves
        game.play_move(move)
        assert tail(game) == fields
    assert game.is_over and game.terminated and not game.truncated
    assert game.legal_moves() == []
    with pytest.raises(IllegalActionError, match="over"):
        game.play(act("j7", S, 1))


def test_r17_other_players_move_completes_a_player_then_mover_continues():
    """R17: blue h1-h4 connects itself and red's last satellite h3: red has 12 (22 in all),
    so red is done and blue, who just moved, starts the grace moves at once."""
    picture = """
        .........d 10
        ..AaAaAa.. 9
        .......... 8
        ..BbBbBb.. 7
        .......... 6
        ..CcCcC... 5
        .......... 4
        .......D.. 3
        ..DdD..... 2
        d......c.. 1
    """
    game = make(picture, fill=False, to_move="b", moves=51)
    assert game.connected_counts == (11, 9)
    game.play_move("h1-h4")
    assert game.connected_counts == (12, 10)
    assert tail(game) == ["b", "3", "0", "52"] and game.to_move == BLUE
    assert all(game.board[c] < 0 for c in sources(game))
    game.play_move("j10-j9")
    assert tail(game) == ["b", "2", "0", "53"]


def test_r16_applies_during_grace():
    """R16/R18: red done, blue 10 connected, grace 3. Blue h8-h5 connects its 11th: 23 in
    all, the game ends at once with grace 2 left."""
    picture = """
        .........d 10
        ..AaAaAa.. 9
        .......c.. 8
        ..BbBbBb.. 7
        .......... 6
        ..CcCcC... 5
        .......... 4
        .......... 3
        ..DdDdD... 2
        .......... 1
    """
    game = make(picture, fill=False, to_move="b", grace=3, moves=40)
    assert game.connected_counts == (12, 10) and not game.is_over
    game.play_move("h8-h5")
    assert game.connected_counts == (12, 11)
    assert game.terminated and tail(game) == ["b", "2", "0", "41"]


# =============================================================================== R19

# Every unconnected satellite is stuck: blue a on a10, j10, a1 and red A on j1 are walled in
# by own satellites and connected opponents. Colonies: NW (6), NE (6), SW (5), SE (3).
STUCK_PICTURE = """
    adAc..cAda 10
    bD......Db 9
    B........C 8
    .......... 7
    .......... 6
    .......... 5
    .......... 4
    C......... 3
    bD......cC 2
    adB.....BA 1
"""


def test_r19_two_passes_in_a_row_end_the_game():
    """R19: neither player has a legal move: red must pass (only the pass is legal), then
    blue; two passes in a row end the game (SPN passes 2). R21-R23 scoring: red controls SW
    (9 vs 6, total 15) and SE (5 vs 3, total 8), blue NW (9 vs 7, total 16) and NE (9 vs 8,
    total 17): 2-2, red's lowest (8) < blue's (16): red wins."""
    game = make(STUCK_PICTURE, fill=False, moves=60)
    assert game.connected_counts == (11, 9)
    assert list(game.legal_actions()) == [PASS_ACTION] and game.legal_moves() == ["pass"]
    game.play_move("pass")
    assert tail(game) == ["b", "-", "1", "61"] and not game.is_over
    assert list(game.legal_actions()) == [PASS_ACTION]
    game.play(PASS_ACTION)
    assert tail(game) == ["r", "-", "2", "62"]
    assert game.terminated and game.history == ["pass", "pass"]
    result = game.score()
    assert result.controlled == (2, 2) and result.lowest_total == (8, 16)
    assert result.winner == RED and result.reward(RED) == 1 and result.reward(BLUE) == -1


def test_r19_pass_only_without_legal_move_and_a_move_resets_passes():
    """R19: with the red A free on e5, red may not pass; blue (stuck) must; red's next move
    resets the pass counter."""
    game = make(
        STUCK_PICTURE.replace("adB.....BA 1", "adB.....B. 1").replace(
            ".......... 5", "....A..... 5"
        ),
        fill=False,
        moves=10,
    )
    assert game.legal_mask()[PASS_ACTION] == 0
    with pytest.raises(IllegalActionError, match=r"legal only when no other move is \(R19\)"):
        game.play(PASS_ACTION)
    game.play_move("e5-e6")
    assert list(game.legal_actions()) == [PASS_ACTION]
    game.play(PASS_ACTION)
    assert tail(game) == ["r", "-", "1", "12"]
    game.play_move("e6-e5")
    assert tail(game) == ["b", "-", "0", "13"] and not game.is_over


GRACE_STUCK_PICTURE = STUCK_PICTURE.replace("bD......cC 2", "bD.....AcC 2").replace(
    "adB.....BA 1", "adB.....B. 1"
)


def test_r19_pass_during_grace_uses_a_grace_move():
    """R19/R18: red done (the A on h2 joins the SE colony), blue stuck in grace: each pass
    uses one grace move, and two passes in a row end the game."""
    game = make(GRACE_STUCK_PICTURE, fill=False, to_move="b", grace=3, moves=40)
    assert game.connected_counts == (12, 9)
    assert list(game.legal_actions()) == [PASS_ACTION]
    game.play(PASS_ACTION)
    assert tail(game) == ["b", "2", "1", "41"] and not game.is_over
    game.play(PASS_ACTION)
    assert tail(game) == ["b", "1", "2", "42"] and game.terminated


# =============================================================================== R20


def test_r20_cap_is_a_truncation():
    """R20: at max_moves completed moves the game stops as a truncation, not a termination."""
    picture = STUCK_PICTURE.replace("adB.....BA 1", "adB.....B. 1").replace(
        ".......... 5", "....A..... 5"
    )
    game = Game.from_spn(spn(picture, fill=False, moves=10), max_moves=11)
    game.play_move("e5-e6")
    assert tail(game) == ["b", "-", "0", "11"]
    assert game.is_over and game.truncated and not game.terminated
    assert not game.legal_mask().any()
    with pytest.raises(IllegalActionError, match="over"):
        game.play(PASS_ACTION)
    at_cap = Game.from_spn(spn(picture, fill=False, to_move="b", moves=11), max_moves=11)
    assert at_cap.truncated


def test_r20_final_move_by_the_rules_at_the_cap_is_a_termination():
    """R20: the last grace move (R18), the second pass (R19) or a move reaching 23 (R16)
    made as the capped move is a termination."""
    grace = Game.from_spn(
        spn(GRACE_STUCK_PICTURE, fill=False, to_move="b", grace=1, moves=10), max_moves=11
    )
    grace.play(PASS_ACTION)
    assert grace.terminated and not grace.truncated
    passes = Game.from_spn(
        spn(STUCK_PICTURE, fill=False, to_move="b", passes=1, moves=11), max_moves=12
    )
    passes.play(PASS_ACTION)
    assert passes.terminated and not passes.truncated
    end = Game.from_spn(spn(R16_PICTURE, fill=False, moves=10), max_moves=11)
    end.play_move("g6-g2")
    assert end.terminated and not end.truncated


def test_r20_displacement_and_pass_count_as_one_move():
    """R20: a displacement (move + push) is one move; the cap is not reached in between."""
    game = Game.from_spn(spn(DISPLACE_PICTURE, region=DISPLACE_REGION, moves=10), max_moves=11)
    game.play(act("e9", W, 2))
    assert not game.is_over and game.moves == 10
    game.play(push_action(NE, 1))
    assert game.moves == 11 and game.truncated
    stuck = Game.from_spn(spn(STUCK_PICTURE, fill=False, moves=10), max_moves=12)
    stuck.play(PASS_ACTION)
    assert stuck.moves == 11 and not stuck.is_over


# =============================================================================== R21 - R24


def _score(picture: str):
    return score(parse_spn(spn(picture, region=ANYWHERE))[:100])


def test_r21_control_by_strictly_higher_sum_and_r23_tie_break():
    """R21: D a A: red 5 > 1, red controls (total 6). b C b: blue 4 > 3 (total 7). a B a:
    2 = 2, nobody (total 4, ignored). The pair D b is no colony (ignored).
    R23: 1-1, red's lowest controlled total 6 < blue's 7: red wins."""
    result = _score("""
        .......... 10
        .DaA...... 9
        .......... 8
        .bCb...... 7
        .......... 6
        .aBa...... 5
        .......... 4
        .Db....... 3
        .......... 2
        .......... 1
    """)
    controllers = sorted((g.total, g.controller) for g in result.colonies)
    assert controllers == [(4, None), (6, RED), (7, BLUE)]
    assert result.controlled == (1, 1) and result.lowest_total == (6, 7)
    assert result.winner == RED and "R23" in result.reason
    assert result.reward(RED) == 1 and result.reward(BLUE) == -1


def test_r22_more_colonies_wins_regardless_of_totals():
    """R22: red controls D c D (8 vs 3, total 11) and C b C (6 vs 2, total 8); blue controls
    a A a (2 vs 1, total 3). 2 > 1: red wins although blue's colony is lower."""
    result = _score("""
        .......... 10
        .DcD...... 9
        .......... 8
        .CbC...... 7
        .......... 6
        .aAa...... 5
        .......... 4
        .......... 3
        .......... 2
        .......... 1
    """)
    assert result.controlled == (2, 1) and result.lowest_total == (8, 3)
    assert result.winner == RED and "R22" in result.reason


def test_r23_tie_break_favours_blue_with_lower_total():
    """R22/R23 for blue: red controls C a C (6 vs 1, total 7); blue controls b A b (4 vs 1,
    total 5) and d B d (8 vs 2, total 10): 2 > 1, blue wins (R22). Without the d B d colony:
    1-1, blue's lowest 5 < red's 7: blue wins by R23."""
    both = """
        .......... 10
        .CaC...... 9
        .......... 8
        .bAb...... 7
        .......... 6
        .dBd...... 5
        .......... 4
        .......... 3
        .......... 2
        .......... 1
    """
    result = _score(both)
    assert result.controlled == (1, 2) and result.winner == BLUE
    result = _score(both.replace(".dBd...... 5", ".......... 5"))
    assert result.controlled == (1, 1) and result.lowest_total == (7, 5)
    assert result.winner == BLUE
    assert result.reward(RED) == -1 and result.reward(BLUE) == 1


@pytest.mark.parametrize(
    "picture, controlled",
    [
        # only pairs: no colony at all
        (["Da", "Cb", "dA"], (0, 0)),
        # only uncontrolled colonies (2 = 2, 4 = 4)
        (["aBa", "bDb"], (0, 0)),
        # 1-1 with equal lowest totals: A b B (3 vs 2, total 5) and b A b (4 vs 1, total 5)
        (["AbB", "bAb"], (1, 1)),
    ],
)
def test_r23_draws(picture, controlled):
    """R23/R24: nobody controls a colony, or the lowest totals are equal: draw, reward 0."""
    lines = [".........."] * 10
    for i, text in enumerate(picture):
        lines[1 + 2 * i] = "." + text + "." * (9 - len(text))
    result = _score("\n".join(lines))
    assert result.controlled == controlled
    assert result.winner is None and "draw" in result.reason
    assert result.reward(RED) == 0 and result.reward(BLUE) == 0


def test_r24_rewards_only_at_the_end():
    """R24: game.score() of a finished game gives +1/-1 (or 0); the score of a game in
    progress is only informative (the environment pays 0 until the end)."""
    game = make(R16_PICTURE, fill=False)
    assert not game.is_over
    game.play_move("g6-g2")
    assert game.is_over
    assert (game.score().reward(RED), game.score().reward(BLUE)) == (1, -1)
