"""Text formats (RULES.md section 7) and action checking: SPN, squares, move notation and
the error messages for bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
from positions import ANYWHERE, DISPLACE_PICTURE, DISPLACE_REGION, cell, spn

from satellites_env.core import (
    N_ACTIONS,
    PASS_ACTION,
    PUSH_BASE,
    Game,
    IllegalActionError,
    NotationError,
    parse_spn,
    parse_square,
    square_name,
    to_spn,
)
from satellites_env.core.board import move_action, push_action

N, NE, E, SE, S, SW, W, NW = range(8)

# Game.new(seed=0)'s set-up, written out (R4); used as the base for broken SPNs.
START = Game.new(seed=0).to_spn()

# A position with a displacement available: red e9-c9 onto the unconnected blue a.
DISPLACE = spn(DISPLACE_PICTURE, region=DISPLACE_REGION, moves=10)

# Red done (12 connected), blue stuck in grace (see test_rules.GRACE_STUCK_PICTURE).
RED_DONE_ROWS = (
    "adAc..cAda/bD......Db/B........C/........../........../........../"
    "........../C........./bD.....AcC/adB.....B."
)

# 22 connected; each side has one unconnected 1 boxed into a corner: both must pass (R19).
BOTH_STUCK_ROWS = (
    "AB......ba/Cc......Dd/........../..AaBbCc../........../..aAbBcC../"
    "........../..DdDd..../........../.........."
)


def random_positions(n_games: int = 12, max_plies: int = 120, seed: int = 1):
    """Games positions between moves, from random legal play (pushes included)."""
    rng = np.random.default_rng(seed)
    for g in range(n_games):
        game = Game.new(seed=1000 + g)
        for _ in range(max_plies):
            if game.is_over:
                break
            if game.pending_push is None:
                yield game
            game.play(int(rng.choice(game.legal_actions())))
        if game.pending_push is None:
            yield game


# =============================================================================== squares


def test_square_names():
    """Section 7: file a-j = col 0-9, rank 1-10 = row 9-0; c10 = row 0 col 2."""
    assert square_name(2) == "c10" and parse_square("c10") == 2
    assert square_name(90) == "a1" and parse_square("a1") == 90
    assert square_name(0) == "a10" and square_name(9) == "j10" and square_name(99) == "j1"
    assert parse_square("e5") == 5 * 10 + 4
    for c in range(100):
        assert parse_square(square_name(c)) == c
    assert len({square_name(c) for c in range(100)}) == 100


@pytest.mark.parametrize("text", ["k1", "a11", "a0", "A1", "", "c", "10c", "a01", " a1"])
def test_bad_square(text):
    with pytest.raises(NotationError, match="bad square"):
        parse_square(text)


@pytest.mark.parametrize("index", [-1, 100])
def test_square_name_off_board(index):
    with pytest.raises(NotationError, match="off the board"):
        square_name(index)


# =============================================================================== SPN


def test_spn_of_the_setup():
    """Section 7: a fresh game is 'rows r - 0 0'; 10 rows of 10 joined by '/'."""
    rows_text, *fields = START.split(" ")
    assert fields == ["r", "-", "0", "0"]
    rows = rows_text.split("/")
    assert len(rows) == 10 and all(len(r) == 10 for r in rows)
    assert sum(ch.isupper() for ch in rows_text) == 12
    assert sum(ch.islower() for ch in rows_text) == 12


@pytest.mark.parametrize(
    "text",
    [
        START,
        DISPLACE,
        f"{BOTH_STUCK_ROWS} b - 1 51",
        f"{BOTH_STUCK_ROWS} r - 2 52",
        f"{RED_DONE_ROWS} b 3 0 40",
        f"{RED_DONE_ROWS} b 2 1 41",
        f"{RED_DONE_ROWS} b 0 2 44",
    ],
)
def test_spn_round_trip_hand_built(text):
    assert to_spn(parse_spn(text)) == text
    assert Game.from_spn(text).to_spn() == text


def test_spn_round_trip_random_games():
    """to_spn(parse_spn(s)) == s for every position of random games, and the parsed position
    has the same legal actions and status as the game it came from."""
    count = 0
    for game in random_positions():
        text = game.to_spn()
        assert to_spn(parse_spn(text)) == text
        copy = Game.from_spn(text, max_moves=game.max_moves)
        assert copy.status == game.status
        assert np.array_equal(copy.legal_mask(), game.legal_mask())
        count += 1
    assert count > 500


def test_history_replays_to_the_same_position():
    """The notation in game.history replays (play_move) to the same SPN."""
    rng = np.random.default_rng(5)
    for g in range(6):
        game = Game.new(seed=g)
        start = game.to_spn()
        while not game.is_over and game.moves < 150:
            game.play(int(rng.choice(game.legal_actions())))
        if game.pending_push is not None:
            game.play(int(game.legal_actions()[0]))
        replay = Game.from_spn(start)
        for text in game.history:
            replay.play_move(text)
        assert replay.to_spn() == game.to_spn()
        assert len(game.history) == game.moves


# =============================================================================== SPN errors


def _rows(text=START):
    return text.split(" ")[0].split("/")


def _with_rows(rows, fields=" r - 0 0"):
    return "/".join(rows) + fields


def test_spn_not_a_string():
    with pytest.raises(NotationError, match="SPN must be a string, got int"):
        parse_spn(123)


@pytest.mark.parametrize(
    "text, count",
    [
        (START + " 7", 6),
        (START.rsplit(" ", 1)[0], 4),
        ("", 0),
    ],
)
def test_spn_bad_field_count(text, count):
    with pytest.raises(NotationError, match=f"SPN needs 5 space-separated fields.*got {count}"):
        parse_spn(text)


def test_spn_bad_row_count():
    with pytest.raises(NotationError, match="SPN board has 9 rows; expected 10"):
        parse_spn(_with_rows(_rows()[:9]))
    with pytest.raises(NotationError, match="SPN board has 11 rows; expected 10"):
        parse_spn(_with_rows([*_rows(), ".........."]))


def test_spn_bad_row_length_names_the_row():
    rows = _rows()
    rows[2] = rows[2][:9]
    with pytest.raises(
        NotationError,
        match=r"SPN row 3 \(rank 8\) .* has 9 characters; "
        r"expected 10",
    ):
        parse_spn(_with_rows(rows))
    rows = _rows()
    rows[9] = rows[9] + "."
    with pytest.raises(NotationError, match=r"SPN row 10 \(rank 1\) .* has 11 characters"):
        parse_spn(_with_rows(rows))


@pytest.mark.parametrize("letter", ["x", "E", "1", "*"])
def test_spn_unknown_piece_letter_is_named(letter):
    rows = _rows()
    rows[5] = letter + rows[5][1:]  # a5 (row 5, col 0)
    with pytest.raises(NotationError, match=re.escape(f"unknown piece letter '{letter}' on a5")):
        parse_spn(_with_rows(rows))


def test_spn_13_red_satellites():
    rows = _rows()
    rows[4] = "....A....."  # e6: row 4 is empty in every set-up (rows 2-7, cols 2-7 empty)
    with pytest.raises(NotationError, match="13 red satellites; each player has exactly 12"):
        parse_spn(_with_rows(rows))


def test_spn_11_blue_satellites():
    text = START
    first_blue = next(i for i, ch in enumerate(text) if ch in "abcd")
    text = text[:first_blue] + "." + text[first_blue + 1 :]
    with pytest.raises(NotationError, match="11 blue satellites"):
        parse_spn(text)


def test_spn_wrong_value_counts():
    text = START
    first_a = text.index("A")
    text = text[:first_a] + "B" + text[first_a + 1 :]  # 2 A and 4 B: still 12 red
    with pytest.raises(NotationError, match=r"2 red satellites of value 1 \('A'\); expected 3"):
        parse_spn(text)
    text = START
    first_d = text.index("d")
    text = text[:first_d] + "c" + text[first_d + 1 :]
    with pytest.raises(NotationError, match=r"4 blue satellites of value 3 \('c'\); expected 3"):
        parse_spn(text)


@pytest.mark.parametrize(
    "fields, match",
    [
        ("x - 0 0", "SPN field 'to_move' is 'x'; expected 'r' or 'b'"),
        ("R - 0 0", "field 'to_move' is 'R'"),
        ("r 4 0 0", "SPN field 'grace' is '4'; expected '-' or 0-3"),
        ("r x 0 0", "field 'grace' is 'x'"),
        ("r -1 0 0", "field 'grace' is '-1'"),
        ("r ３ 0 0", "field 'grace' is '３'"),
        ("r - 3 0", "SPN field 'passes' is '3'; expected 0, 1 or 2"),
        ("r - x 0", "field 'passes' is 'x'"),
        ("r - １ 0", "field 'passes' is '１'"),
        ("r - 0 -1", "SPN field 'moves' must be a non-negative integer .*, got '-1'"),
        ("r - 0 x", "field 'moves' must be a non-negative integer .*, got 'x'"),
        ("r - 0 1.5", "field 'moves' .* got '1.5'"),
        ("r - 0 +1", "field 'moves' .* got '\\+1'"),
        # Only ASCII digits: int() would read these as 12, 2 and 5.
        ("r - 0 １２", "field 'moves' .* got '１２'"),
        ("r - 0 ²", "field 'moves' .* got '²'"),
        ("r - 0 ٥", "field 'moves' .* got '٥'"),
        ("r - 0 99999999999999999999", "field 'moves' .* up to 1000000"),
        ("r - 0 1000001", "field 'moves' .* up to 1000000, got '1000001'"),
        ("r - 0 " + "9" * 5000, r"field 'moves' .* up to 1000000, got '9{80}'\.\.\.$"),
        ("r - 0 00", "field 'moves' .* without leading zeros"),
        ("r - 0 07", "field 'moves' .* without leading zeros"),
    ],
)
def test_spn_bad_fields(fields, match):
    with pytest.raises(NotationError, match=match):
        parse_spn(START.rsplit(" ", 4)[0] + " " + fields)


def test_spn_grace_without_a_done_player():
    """Section 7/R17: grace is a number only when the player not to move has all 12."""
    with pytest.raises(
        NotationError,
        match="grace is 2 but blue \\(not to move\\) does not have all 12 satellites connected",
    ):
        parse_spn(START.replace(" r - 0 0", " r 2 0 0"))
    # red is done: red cannot be the one in grace
    with pytest.raises(NotationError, match="grace is 3 but blue"):
        parse_spn(f"{RED_DONE_ROWS} r 3 0 40")


def test_spn_done_player_needs_grace():
    with pytest.raises(
        NotationError,
        match=r"red has all 12 satellites connected, so grace "
        r"must be a number 0-3 \(R17\)",
    ):
        parse_spn(f"{RED_DONE_ROWS} b - 0 40")


# Red done with three blue satellites (each touching four red ones): 2 moves at least.
STARS_ROWS = (
    "........../..A...A.../.DaB.DbB../..C...C.../........../..A......./.DcB....../"
    "..C......./........../.aabbccddd"
)

# Four crowned colonies (24 connected): 12 satellites at least moved, so 6 moves at least.
ALL_CONNECTED_ROWS = "/".join(
    ["AbC.DaB...", "aBc.bCd...", "..........", "CdA.BcD...", "dAb.aDc..."] + [".........."] * 5
)


@pytest.mark.parametrize(
    "text, match",
    [
        # Two passes at move 0; passes count moves.
        (f"{START.rsplit(' ', 3)[0]} - 2 0", "field 'passes' is 2 but 'moves' is 0"),
        (f"{BOTH_STUCK_ROWS} r - 2 1", "field 'passes' is 2 but 'moves' is 1"),
        # 24 connected at move 0: the connections need moves.
        (
            f"{ALL_CONNECTED_ROWS} r - 0 0",
            "field 'moves' is 0 but this position needs at least 6: "
            "its connections need at least 12 satellites",
        ),
        (f"{ALL_CONNECTED_ROWS} r - 0 4", "field 'moves' is 4 but .* at least 6"),
        # One side fully connected at move 0 (and the grace moves made need moves too).
        (f"{RED_DONE_ROWS} b 3 0 0", "field 'moves' is 0 but this position needs at least"),
        (
            f"{STARS_ROWS} b 0 0 4",
            "field 'moves' is 4 but this position needs at least 5: 3 "
            "grace moves were made, after at least 2 moves that connected all "
            "12 satellites of red",
        ),
        (f"{STARS_ROWS} b 2 0 2", "field 'moves' is 2 but this position needs at least 3"),
        # R5: with no grace the players alternate from red.
        (START.replace(" r - 0 0", " b - 0 0"), "field 'to_move' is 'b' but .* after 0 moves red"),
        (f"{BOTH_STUCK_ROWS} r - 0 51", "field 'to_move' is 'r' .* after 51 moves blue is to move"),
        # R19: a pass only without a legal move, only in a game that goes on, and in grace it
        # uses a grace move.
        (START.replace(" r - 0 0", " b - 1 1"), "field 'passes' is 1 but red has a legal move"),
        (START.replace(" r - 0 0", " r - 2 2"), "field 'passes' is 2 but blue has a legal move"),
        (f"{RED_DONE_ROWS} b 3 1 41", "field 'passes' is 1 with grace 3: .* at most 3"),
        (f"{RED_DONE_ROWS} b 2 2 42", "field 'passes' is 2 with grace 2"),
        (
            f"{ALL_CONNECTED_ROWS} b - 1 7",
            "field 'passes' is 1 but 24 satellites are connected: R16 ended the game",
        ),
    ],
)
def test_spn_unreachable_positions_are_refused(text, match):
    """Counters no game by the rules can reach name the field that is wrong (module docstring
    of satellites_env.core.notation lists the checks)."""
    with pytest.raises(NotationError, match=match):
        parse_spn(text)


def test_spn_grace_3_with_23_connected_is_refused():
    """R16 comes before R17: the move that completes a side and reaches 23 starts no grace."""
    game = Game.from_spn(f"{ALL_CONNECTED_ROWS} r - 0 6")
    assert game.terminated and game.grace is None
    rows = ALL_CONNECTED_ROWS
    with pytest.raises(
        NotationError,
        match=r"field 'grace' is 3 .* R16 ended the game at that "
        "move, so grace must be '-'",
    ):
        parse_spn(f"{rows} b 3 0 8")
    assert parse_spn(f"{rows} b 2 0 8") is not None  # a grace move reached 23: over, grace 2


def test_fewest_moves_is_the_least_accepted():
    """fewest_moves(state) parses, and one or two fewer moves do not, for every position of
    random games (whatever their counters) and the hand-built ones."""
    from satellites_env.core.notation import fewest_moves
    from satellites_env.core.state import MOVES

    texts = [g.to_spn() for g in random_positions(n_games=4)] + [
        f"{BOTH_STUCK_ROWS} b - 1 51",
        f"{BOTH_STUCK_ROWS} r - 2 52",
        f"{RED_DONE_ROWS} b 0 2 44",
        f"{ALL_CONNECTED_ROWS} r - 0 6",
        f"{STARS_ROWS} b 3 0 2",
        f"{STARS_ROWS} b 0 0 5",
        DISPLACE,
    ]
    for text in texts:
        state = parse_spn(text)
        least = fewest_moves(state)
        assert least <= state[MOVES]
        fields = text.split()
        assert to_spn(parse_spn(" ".join([*fields[:4], str(least)]))) is not None
        for fewer in (least - 1, least - 2):
            if fewer >= 0:
                with pytest.raises(NotationError):
                    parse_spn(" ".join([*fields[:4], str(fewer)]))


def test_spn_touching_twins_rejected():
    """R13: e6 A and e5 B are both connected (to f6 b and f5 c) and touch."""
    text = spn(
        """
        .......... 10
        .......... 9
        .......... 8
        .......... 7
        ....Ab.... 6
        ....Bc.... 5
        .......... 4
        .......... 3
        .......... 2
        .......... 1
    """,
        region=ANYWHERE,
    )
    with pytest.raises(
        NotationError, match="connected satellites of one color touch on e6 and e5; R13 forbids it"
    ):
        parse_spn(text)


def test_spn_group_of_seven_rejected():
    text = spn(
        """
        .......... 10
        .......... 9
        .......... 8
        .......... 7
        .......... 6
        .aBbCcDd.. 5
        .......... 4
        .......... 3
        .......... 2
        .......... 1
    """,
        region=ANYWHERE,
    )
    with pytest.raises(
        NotationError,
        match="group b5, c5, d5, e5, f5, g5, h5 has 7 satellites; R11 allows at most 6",
    ):
        parse_spn(text)


# =============================================================================== moves


def test_move_notation_examples():
    """Section 7/8: 'c10-c7' is the move action of c10 S 3; 'e9-c9>d10' a move and a push."""
    game = Game.from_spn(START)
    assert game.actions_of("c10-c7") == [move_action(2, S, 3)]
    assert game.actions_of("  c10-c7 ") == [move_action(2, S, 3)]
    assert game.actions_of("a1-d4") == [move_action(90, NE, 3)]
    assert game.actions_of("pass") == [PASS_ACTION]
    assert game.describe(move_action(2, S, 3)) == "c10-c7"
    assert game.describe(PASS_ACTION) == "pass"
    displace = Game.from_spn(DISPLACE)
    assert displace.actions_of("e9-c9>d10") == [move_action(cell("e9"), W, 2), push_action(NE, 1)]


def _notation_round_trip(game: Game):
    texts = set()
    for action in game.legal_actions():
        action = int(action)
        if action == PASS_ACTION:
            assert game.actions_of("pass") == [PASS_ACTION]
            texts.add("pass")
            continue
        text = game.describe(action)
        child = game.clone()
        child.play(action)
        if child.pending_push is not None:
            for push in child.legal_actions():
                full = text + child.describe(int(push))
                assert game.actions_of(full) == [action, int(push)], full
                texts.add(full)
        else:
            assert game.actions_of(text) == [action], text
            texts.add(text)
    assert texts == set(game.legal_moves())
    assert len(game.legal_moves()) == len(texts)


def test_move_notation_round_trip_random_positions():
    """Every legal action of random positions, described and parsed back, gives itself."""
    for i, game in enumerate(random_positions(n_games=6, max_plies=80, seed=2)):
        if i % 3 == 0:
            _notation_round_trip(game)


def test_move_notation_round_trip_with_displacements():
    game = Game.from_spn(DISPLACE)
    _notation_round_trip(game)
    assert {m for m in game.legal_moves() if m.startswith("e9-c9")} == {
        "e9-c9>d10",
        "e9-c9>e9",
        "e9-c9>a7",
        "e9-c9>a9",
        "e9-c9>b10",
    }


@pytest.mark.parametrize(
    "text",
    [
        "c10c7",
        "c10-",
        "k1-k2",
        "c11-c7",
        "c10-c7>",
        "C10-C7",
        "",
        "c10-c7>d7>e7",
        "c10 - c7",
        "Pass",
    ],
)
def test_malformed_move_text(text):
    game = Game.from_spn(START)
    with pytest.raises(NotationError, match="bad move"):
        game.actions_of(text)
    with pytest.raises(NotationError):
        game.play_move(text)


@pytest.mark.parametrize("text", ["c10-d8", "c10-c5", "c10-c10", "a1-j10"])
def test_move_not_a_straight_line(text):
    game = Game.from_spn(START)
    with pytest.raises(IllegalActionError, match="is not a straight line of 1-4 cells"):
        game.actions_of(text)


def test_displacement_without_push():
    game = Game.from_spn(DISPLACE)
    with pytest.raises(
        IllegalActionError,
        match=r"lands on an opponent satellite: a "
        "displacement needs its push, e.g. "
        "'e9-c9>d10'",
    ):
        game.actions_of("e9-c9")


def test_push_without_opponent():
    game = Game.from_spn(DISPLACE)
    with pytest.raises(
        IllegalActionError,
        match="d9 does not hold an opponent satellite, so there is nothing to push",
    ):
        game.actions_of("e9-d9>d10")


def test_push_not_a_straight_line_of_1_or_2():
    game = Game.from_spn(DISPLACE)
    with pytest.raises(
        IllegalActionError, match="the push c9 to c6 is not a straight line of 1-2 cells"
    ):
        game.actions_of("e9-c9>c6")
    with pytest.raises(IllegalActionError, match="the push c9 to d7 is not a straight line"):
        game.actions_of("e9-c9>d7")


def test_illegal_move_in_the_position():
    """Well-formed moves that the position does not allow raise IllegalActionError (and
    change nothing): onto an own satellite, the opponent's satellite on my turn, further than
    the value."""
    game = Game.from_spn(DISPLACE)
    before = game.to_spn()
    for text in ("e9-e8", "c9-c10", "e9-e6", "e8-e9"):
        with pytest.raises(IllegalActionError, match=r"illegal action \d+ \(" + text):
            game.play_move(text)
    assert game.to_spn() == before and game.history == []


def test_illegal_push_leaves_the_position_unchanged():
    """A whole move in notation is checked before anything is played: a displacement with an
    illegal push (c10: the a would make a group of 7) raises and changes nothing."""
    game = Game.from_spn(DISPLACE)
    before = game.to_spn()
    with pytest.raises(IllegalActionError):
        game.play_move("e9-c9>c10")
    assert game.pending_push is None
    assert game.to_spn() == before and game.history == []


def test_actions_while_a_push_is_pending():
    game = Game.from_spn(DISPLACE)
    game.play(move_action(cell("e9"), W, 2))
    with pytest.raises(IllegalActionError, match="a displacement is waiting for its push from c9"):
        game.actions_of("e8-e7")
    assert game.describe(push_action(NE, 1)) == ">d10"
    with pytest.raises(NotationError, match="only between moves"):
        game.to_spn()


@pytest.mark.parametrize("action", [-1, N_ACTIONS, 10**9])
def test_out_of_range_action(action):
    game = Game.from_spn(START)
    with pytest.raises(IllegalActionError, match=f"action {action} is out of range 0..3216"):
        game.play(action)
    with pytest.raises(IllegalActionError, match="out of range"):
        game.describe(action)


@pytest.mark.parametrize("action", [1.0, "5", None, True, np.float64(3), [1]])
def test_non_integer_action(action):
    game = Game.from_spn(START)
    with pytest.raises(IllegalActionError, match=r"action must be an integer in 0..3216"):
        game.play(action)


def test_numpy_integer_actions_are_accepted():
    game = Game.from_spn(START)
    game.play(np.int64(game.legal_actions()[0]))
    assert game.moves == 1


def test_push_action_without_displacement_is_illegal():
    game = Game.from_spn(START)
    for push in range(PUSH_BASE, PASS_ACTION):
        assert game.legal_mask()[push] == 0
    with pytest.raises(IllegalActionError, match="illegal action 3200"):
        game.play(PUSH_BASE)


# =============================================================================== strictness


@pytest.mark.parametrize("text", ["c10\n", "c1\n", "a1 ", "ｃ10", "c１0", "c٣"])
def test_square_is_exact_ascii(text):
    with pytest.raises(NotationError, match="bad square"):
        parse_square(text)


@pytest.mark.parametrize("value", [None, 12, 1.5, b"c10", ["c10"]])
def test_square_and_move_must_be_strings(value):
    from satellites_env.core.notation import parse_move_text

    with pytest.raises(NotationError, match="must be a string"):
        parse_square(value)
    with pytest.raises(NotationError, match="must be a string"):
        parse_move_text(value)


@pytest.mark.parametrize("text", ["c10-c7\nx", "c10-ｃ7", "c10-c7>", "c10-c7>f9>f8", "PASS"])
def test_move_text_is_exact(text):
    from satellites_env.core.notation import parse_move_text

    with pytest.raises(NotationError, match="bad move"):
        parse_move_text(text)
