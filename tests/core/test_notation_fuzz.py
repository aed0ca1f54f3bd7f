"""Fuzzing the text formats (RULES.md section 7): whatever the input, `parse_spn`,
`parse_square` and `parse_move_text` either answer or raise `NotationError`, never another
exception; what `parse_spn` accepts writes back to the same SPN, its counters are ones a game
can reach, and every position a game reaches is accepted."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env.core import Game, NotationError, parse_spn, to_spn
from satellites_env.core.board import MAX_MOVES_LIMIT
from satellites_env.core.notation import fewest_moves, parse_move_text, parse_square
from satellites_env.core.state import GRACE, MOVES, PASSES, TO_MOVE

FUZZ = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _valid_spns() -> list[str]:
    """Positions between moves from a few random games (set-ups, middles, ends)."""
    rng = np.random.default_rng(5)
    found = []
    for g in range(4):
        game = Game.new(seed=300 + g)
        while not game.is_over:
            if game.pending_push is None and rng.random() < 0.15:
                found.append(game.to_spn())
            game.play(int(rng.choice(game.legal_actions())))
        found.append(game.to_spn())
    return found


VALID = _valid_spns()
SPN_ALPHABET = "ABCDabcd./ rb-0123456789\t\n"
ODD = st.sampled_from(
    ["１", "²", "٣", "\u3000", "\x00", "é", "-", "+", " ", "/", ".", "e", "9" * 30]
)


def check_spn(text) -> None:
    try:
        state = parse_spn(text)
    except NotationError:
        return
    assert to_spn(state) == " ".join(text.split())


@FUZZ
@given(st.text(max_size=200))
def test_random_text_as_spn(text):
    check_spn(text)


@FUZZ
@given(st.text(alphabet=SPN_ALPHABET, max_size=140))
def test_spn_alphabet_soup(text):
    check_spn(text)


@st.composite
def mutated_spn(draw) -> str:
    """A valid SPN with a few characters replaced, inserted or deleted, or a field swapped."""
    text = list(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        at = draw(st.integers(0, len(text)))
        piece = draw(st.one_of(st.sampled_from(list(SPN_ALPHABET)), ODD))
        if kind == "replace" and at < len(text):
            text[at] = piece
        elif kind == "insert":
            text.insert(at, piece)
        elif text and at < len(text):
            del text[at]
    return "".join(text)


@FUZZ
@given(mutated_spn())
def test_mutated_spn(text):
    check_spn(text)


@FUZZ
@given(st.sampled_from(VALID), st.integers(0, 4), st.one_of(st.text(max_size=12), ODD))
def test_spn_with_one_field_replaced(text, field, value):
    fields = text.split()
    fields[field] = value
    check_spn(" ".join(fields))


@FUZZ
@given(
    st.one_of(
        st.none(),
        st.integers(),
        st.floats(),
        st.binary(max_size=20),
        st.lists(st.text(max_size=5), max_size=3),
    )
)
def test_non_strings(value):
    for parse in (parse_spn, parse_square, parse_move_text):
        try:
            parse(value)
        except NotationError:
            pass
        else:
            raise AssertionError(f"{parse.__name__} accepted {value!r}")


MOVE_ALPHABET = "abcdefghijk0123456789->pas ｃ１\n"


@FUZZ
@given(st.one_of(st.text(max_size=30), st.text(alphabet=MOVE_ALPHABET, max_size=12)))
def test_move_text(text):
    try:
        parsed = parse_move_text(text)
    except NotationError:
        return
    if parsed is None:
        assert text.strip() == "pass"
    else:
        source, target, landing = parsed
        assert all(0 <= c < 100 for c in (source, target) + ((landing,) if landing else ()))


@FUZZ
@given(st.text(max_size=6))
def test_square_text(text):
    try:
        cell = parse_square(text)
    except NotationError:
        return
    assert 0 <= cell < 100 and text.isascii()


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.sampled_from(VALID), st.text(alphabet=MOVE_ALPHABET, max_size=12))
def test_play_move_text_in_a_position(text, move):
    """Game.play_move: NotationError or IllegalActionError (both ValueError), and an illegal
    move leaves the position unchanged."""
    game = Game.from_spn(text)
    before = game.to_spn()
    try:
        game.play_move(move)
    except ValueError as error:
        assert type(error).__name__ in ("NotationError", "IllegalActionError")
        assert game.to_spn() == before and not game.history


# --------------------------------------------------------------------------- counters


MOVES_FIELD = st.one_of(
    st.integers(0, 400).map(str),
    st.sampled_from(
        [MAX_MOVES_LIMIT - 1, MAX_MOVES_LIMIT, MAX_MOVES_LIMIT + 1, 2**31 - 1, 2**31, 2**63, 10**12]
    ).map(str),
    st.sampled_from(["9" * 4301, "1" * 10_000, "00", "01", "-0", "1e6", "1_000"]),
    st.text(alphabet="0123456789", max_size=9),
)


@FUZZ
@given(
    st.sampled_from(VALID),
    st.sampled_from(["r", "b"]),
    st.sampled_from(list("-0123")),
    st.sampled_from(["0", "1", "2"]),
    MOVES_FIELD,
)
def test_counters_are_checked_against_the_board(text, to_move, grace, passes, moves):
    """Any counters on a reachable board: accepted only when a game can reach them (the
    checks of satellites_env.core.notation); a refusal names the field, in one short line."""
    spn = " ".join([text.split()[0], to_move, grace, passes, moves])
    try:
        state = parse_spn(spn)
    except NotationError as error:
        message = str(error)
        assert len(message) < 400 and "\n" not in message, message[:400]
        assert "SPN field" in message or "grace" in message, message
        return
    assert to_spn(state) == spn
    moves_made, passes_made = int(state[MOVES]), int(state[PASSES])
    assert passes_made <= moves_made <= MAX_MOVES_LIMIT
    assert moves_made >= fewest_moves(state)
    if state[GRACE] == -1:
        assert moves_made % 2 == state[TO_MOVE]
    else:
        assert int(state[GRACE]) + passes_made <= 3


def _reachable_positions(seed: int, bias: float):
    """Every position between moves of a game played from `seed` (random moves, preferring
    connecting moves with probability `bias`, so that games reach their end by the rules)."""
    rng = np.random.default_rng(seed)
    game = Game.new(seed=seed, max_moves=300)
    while True:
        if game.pending_push is None:
            yield game
        if game.is_over:
            return
        legal = game.legal_actions()
        if rng.random() < bias:
            touching = [a for a in legal if game.is_displacement(a)]
            legal = touching or legal
        game.play(int(rng.choice(legal)))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.5, 0.9]))
def test_every_reachable_position_parses(seed, bias):
    """What the rules reach, the parser accepts: every position of a game, written and read
    back, is the same state (grace and the end included)."""
    for game in _reachable_positions(seed, bias):
        text = game.to_spn()
        assert np.array_equal(parse_spn(text), game.state), text
        assert fewest_moves(game.state) <= game.moves


@FUZZ
@given(
    st.sampled_from(VALID),
    st.integers(0, 4),
    st.sampled_from(["x" * 100_000, "9" * 100_000, "/" * 50_000, " " * 10, "é" * 1000]),
)
def test_huge_fields_are_quoted_not_echoed(text, field, value):
    fields = text.split()
    fields[field] = value
    try:
        parse_spn(" ".join(fields))
    except NotationError as error:
        assert len(str(error)) < 400, str(error)[:400]


HUGE_TEXT = st.sampled_from(
    [
        "c10-c7" * 100_000,
        "c" + "1" * 10**5 + "-c7",
        "pass" + " " * 10**5,
        "a" * 10**6,
        "9" * 5000,
        "c10-c7>" + "f" * 10**5,
        "１" * 10**5,
    ]
)


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.one_of(HUGE_TEXT, st.builds(lambda a, b: a + b, HUGE_TEXT, st.text(max_size=5))),
    st.sampled_from(VALID),
)
def test_huge_moves_and_squares_are_quoted_not_echoed(text, spn):
    """Moves and squares of 100 KB and more: NotationError (or IllegalActionError in a
    position), one line, a bounded prefix of the input."""
    game = Game.from_spn(spn)
    for call in (
        lambda: parse_move_text(text),
        lambda: parse_square(text),
        lambda: game.play_move(text),
        lambda: game.actions_of(text),
    ):
        try:
            call()
        except ValueError as error:
            assert type(error).__name__ in ("NotationError", "IllegalActionError"), error
            message = str(error)
            assert len(message) < 400 and "\n" not in message, message[:400]
        else:
            assert text.strip() == "pass"
