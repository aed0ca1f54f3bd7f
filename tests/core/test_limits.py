"""The ceilings (one move cap, MAX_MOVES_LIMIT, for Game, the engine, the batched engine and
SPN; seeds 0 .. 2**64 - 1; batch sizes) and the one rule for bad arguments: a ValueError that
names the argument and quotes a bounded prefix of it. Fuzzed with hypothesis near and beyond
every ceiling, and with wrong types."""

from __future__ import annotations

import numpy as np
import pytest
from bad_arguments import NUMBERS, integer_in
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from satellites_env.core import (
    Game,
    IllegalActionError,
    NotationError,
    engine,
    score,
    square_name,
    to_spn,
)
from satellites_env.core.batch import MAX_NUM_GAMES, BatchedEngine, new_batch_scratch
from satellites_env.core.board import MAX_MOVES_LIMIT, N_ACTIONS, N_CELLS, PASS_ACTION, Player
from satellites_env.core.checks import (
    MAX_SEED,
    PATH_QUOTE_LIMIT,
    QUOTE_LIMIT,
    check_int,
    quoted,
    quoted_path,
)
from satellites_env.core.state import MOVES, STATE_LEN, check_state_rows

FUZZ = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def refused(call, name: str) -> ValueError:
    """`call()` raises a ValueError naming `name` with a bounded, one-line message."""
    with pytest.raises(ValueError) as error:
        call()
    message = str(error.value)
    assert message.startswith(f"{name} must be"), message
    assert len(message) < 300 and "\n" not in message, message
    return error.value


# --------------------------------------------------------------------------- the move cap


def test_move_counter_stops_at_the_ceiling():
    """A game capped at MAX_MOVES_LIMIT ends there (truncated): the int32 counter never wraps."""
    start = Game.new(seed=0).to_spn().rsplit(" ", 1)[0]
    game = Game.from_spn(f"{start} {MAX_MOVES_LIMIT - 2}", max_moves=MAX_MOVES_LIMIT)
    for _ in range(2):
        game.play(int(game.legal_actions()[0]))
    assert game.moves == MAX_MOVES_LIMIT and game.truncated
    with pytest.raises(IllegalActionError, match="over"):
        game.play(PASS_ACTION)
    # The engine's Python level stops there too, whatever cap its caller has in mind.
    state = game.state.copy()
    assert not engine.legal_action_mask(state).any()
    with pytest.raises(IllegalActionError):
        engine.step(state, int(Game.new(seed=0).legal_actions()[0]))
    assert engine.status(state, MAX_MOVES_LIMIT) == engine.TRUNCATED
    assert engine.rewards(state, MAX_MOVES_LIMIT).shape == (2,)
    # Stored states beyond it are refused before a kernel reads them.
    beyond = state.copy()[None]
    beyond[0, MOVES] = MAX_MOVES_LIMIT + 1
    with pytest.raises(ValueError, match=f"moves > {MAX_MOVES_LIMIT}"):
        check_state_rows(beyond)


def test_batched_engine_at_the_ceiling():
    rows = Game.new(seed=3).to_spn().split()[0]
    batch = BatchedEngine(2, max_moves=MAX_MOVES_LIMIT, seed=1)
    batch.load(1, Game.from_spn(f"{rows} b - 0 {MAX_MOVES_LIMIT - 1}").state)
    _, terminated, truncated = batch.step(batch.legal_action_mask().argmax(axis=1))
    assert truncated.tolist() == [False, True] and not terminated.any()
    assert batch.final_states[1, MOVES] == MAX_MOVES_LIMIT and batch.states[1, MOVES] == 0
    over = Game.from_spn(f"{rows} r - 0 {MAX_MOVES_LIMIT}").state
    with pytest.raises(ValueError, match="over"):
        batch.load(0, over)
    for bad in (-1, 2, 1.0, "0"):
        refused(lambda bad=bad: batch.load(bad, over), "i")
    garbage = over.copy()
    garbage[0] = 9
    with pytest.raises(ValueError, match="cell codes"):
        batch.load(0, garbage)


@FUZZ
@given(NUMBERS)
def test_fuzz_max_moves_everywhere(value):
    """Game, the engine's functions and the batched engine take the same max_moves, 1 ..
    MAX_MOVES_LIMIT, and refuse anything else with the same ValueError."""
    state = engine.init(seed=0)
    calls = [
        lambda: Game.new(seed=0, max_moves=value),
        lambda: Game(state.copy(), value),
        lambda: engine.status(state, value),
        lambda: engine.is_terminal(state, value),
        lambda: engine.rewards(state, value),
        lambda: BatchedEngine(1, max_moves=value, seed=0),
    ]
    for call in calls:
        if integer_in(value, 1, MAX_MOVES_LIMIT):
            call()
        else:
            error = refused(call, "max_moves")
            assert f"from 1 to {MAX_MOVES_LIMIT}" in str(error)


@FUZZ
@given(NUMBERS)
def test_fuzz_seeds_everywhere(value):
    calls = [
        lambda: Game.new(seed=value),
        lambda: engine.init(seed=value),
        lambda: BatchedEngine(1, seed=value),
        lambda: BatchedEngine(1).reset(value),
    ]
    for call in calls:
        if value is None or integer_in(value, 0, MAX_SEED):
            call()
        else:
            refused(call, "seed")


@FUZZ
@given(NUMBERS, st.sampled_from(["num_games", "num_chunks"]))
def test_fuzz_batch_sizes(value, name):
    """Sizes: 1 .. MAX_NUM_GAMES (valid ones above 64 are not allocated here)."""
    if integer_in(value, 65, MAX_NUM_GAMES):
        value = 64
    if name == "num_games":

        def call():
            return BatchedEngine(value, seed=0)
    else:

        def call():
            return BatchedEngine(3, seed=0, num_chunks=value)

    if integer_in(value, 1, MAX_NUM_GAMES) or (value is None and name == "num_chunks"):
        assert call().scratch.shape[0] >= 1  # num_chunks=None: the default
    else:
        refused(call, name)
    if value is not None and not integer_in(value, 1, MAX_NUM_GAMES):
        refused(lambda: new_batch_scratch(value), "num_chunks")


def test_batch_actions_of_any_shape_are_an_illegal_action_error():
    batch = BatchedEngine(2, seed=0)
    for bad in ([[1], [1, 2]], [10**30, 1], "ab", None, np.zeros(2), [2**64, 0]):
        with pytest.raises(IllegalActionError, match=r"game|actions must be"):
            batch.step(bad)


# --------------------------------------------------------------------------- quoting


@FUZZ
@given(
    st.one_of(
        NUMBERS,
        st.text(min_size=0, max_size=300),
        st.lists(st.text(max_size=50), max_size=50),
        st.sampled_from(["x" * 10**6, b"y" * 10**6, ["z" * 10**5] * 3, [10**5000]]),
    )
)
def test_quoted_is_bounded_and_one_line(value):
    text = quoted(value)
    assert len(text) <= QUOTE_LIMIT + 40 and "\n" not in text
    if isinstance(value, str) and len(value) <= QUOTE_LIMIT:
        assert text == repr(value)


def test_paths_are_quoted_whole_up_to_the_path_limit():
    path = "/tmp/" + "d/" * 400 + "game.json"  # 814 characters: quoted whole
    assert quoted_path(path) == repr(path)
    huge = "/tmp/" + "x" * 10**6
    assert len(quoted_path(huge)) <= PATH_QUOTE_LIMIT + 10 and quoted_path(huge).endswith("...")


def test_messages_quote_a_prefix_of_huge_inputs():
    huge = "c" * 10**6
    for call in (
        lambda: Game.new(seed=0).actions_of(huge),
        lambda: Player.parse(huge),
        lambda: Game.new(seed=0).play(huge),
        lambda: Game.new(seed=0).play(10**5000),
        lambda: engine.step(engine.init(seed=0), 10**5000),
        lambda: check_int("n", huge, 0, 1),
    ):
        with pytest.raises(ValueError) as error:
            call()
        assert len(str(error.value)) < 300, str(error.value)[:300]


# --------------------------------------------------------------------------- states, boards


def is_state_array(value, length: int = STATE_LEN) -> bool:
    return (
        isinstance(value, np.ndarray)
        and value.shape == (length,)
        and np.issubdtype(value.dtype, np.integer)
    )


def state_problem(value) -> str | None:
    """The spec of a position the kernels can read: the (tested) row checker's verdict."""
    if not is_state_array(value):
        return "shape"
    try:
        check_state_rows(value[None])
    except ValueError as error:
        return str(error)
    return None


@st.composite
def mutated_states(draw):
    """A real position with one to three entries overwritten (most break a check)."""
    state = Game.new(seed=draw(st.integers(0, 50))).state.copy()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, STATE_LEN - 1))
        state[index] = draw(
            st.one_of(
                st.integers(-6, 6),
                st.sampled_from(
                    [MAX_MOVES_LIMIT, MAX_MOVES_LIMIT + 1, 2**31 - 1, -(2**31), 1 << 20]
                ),
            )
        )
    return state.astype(draw(st.sampled_from([np.int32, np.int64, np.int16])))


NOT_STATES = st.one_of(
    NUMBERS,
    hnp.arrays(
        st.sampled_from([np.int32, np.float64, np.bool_, np.uint8]),
        st.sampled_from([(STATE_LEN,), (STATE_LEN - 1,), (N_CELLS,), (1, STATE_LEN), (0,), ()]),
        elements=st.integers(0, 1),
    ),
    st.just(list(range(STATE_LEN))),
    st.just(np.zeros(STATE_LEN, dtype=object)),
)


def refused_naming(call, name: str, error_type=ValueError) -> None:
    with pytest.raises(error_type) as error:
        call()
    message = str(error.value)
    assert message.startswith(name), message
    assert len(message) < 300 and "\n" not in message, message


@FUZZ
@given(st.one_of(NOT_STATES, mutated_states()))
def test_fuzz_states_everywhere(value):
    """Game(state) takes exactly the positions check_state_rows accepts (any integer dtype,
    kept as int32); the engine's Python functions and to_spn refuse anything that is not an
    integer array of shape (STATE_LEN,), naming the state, before a kernel sees it."""
    problem = state_problem(value)
    if problem is None:
        game = Game(value)
        assert game.state.dtype == np.int32 and np.array_equal(game.state, value)
    else:
        refused_naming(lambda: Game(value), "state")
    if not is_state_array(value):
        for call in (
            engine.legal_action_mask,
            lambda v: engine.step(v, 0),
            engine.status,
            engine.current_player,
            engine.rewards,
            engine.is_terminal,
            to_spn,
        ):
            refused_naming(lambda call=call: call(value), "state must be an integer array")


@FUZZ
@given(
    st.one_of(
        NUMBERS,
        hnp.arrays(
            st.sampled_from([np.int8, np.float32]),
            st.sampled_from([(N_CELLS,), (N_CELLS + 1,), (STATE_LEN,)]),
            elements=st.integers(-4, 4),
        ),
    )
)
def test_fuzz_boards_everywhere(value):
    calls = (engine.winner, engine.links, engine.groups, score)
    if is_state_array(value, N_CELLS):
        for call in calls:
            call(value)  # values -4..4: any board of them is scored
    else:
        for call in calls:
            refused_naming(lambda call=call: call(value), "board must be an integer array")


@FUZZ
@given(NUMBERS)
def test_fuzz_cells_actions_and_generators(value):
    """square_name, Game.describe / is_displacement and the set-up's rng: the documented
    error naming the argument, for any value that is not one."""
    game = Game.new(seed=0)
    if integer_in(value, 0, N_CELLS - 1):
        assert len(square_name(value)) in (2, 3)
    else:
        refused_naming(lambda: square_name(value), "cell", NotationError)
    if integer_in(value, 0, N_ACTIONS - 1):
        game.describe(value)
        game.is_displacement(value)
    else:
        for call in (game.describe, game.is_displacement):
            refused_naming(lambda call=call: call(value), "action", IllegalActionError)
    for call in (lambda: Game.new(rng=value), lambda: engine.init(rng=value)):
        if value is None:
            call()
        else:
            refused_naming(call, "rng must be a numpy Generator")
