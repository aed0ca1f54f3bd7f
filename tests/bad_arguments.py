"""Hypothesis strategies of argument values, good and bad, shared by the fuzz tests of the
core, the envs and the play server: numbers near and beyond every ceiling of the project, and
values of the wrong type."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from satellites_env.agents import MAX_SIMULATIONS
from satellites_env.core.batch import MAX_NUM_GAMES
from satellites_env.core.board import MAX_MOVES_LIMIT
from satellites_env.core.checks import MAX_SEED

#: every ceiling, and one past it
CEILINGS = [
    0,
    1,
    -1,
    63,
    64,
    400,
    4096,
    4097,
    MAX_MOVES_LIMIT - 1,
    MAX_MOVES_LIMIT,
    MAX_MOVES_LIMIT + 1,
    MAX_NUM_GAMES,
    MAX_NUM_GAMES + 1,
    MAX_SIMULATIONS,
    MAX_SIMULATIONS + 1,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**63 - 1,
    2**63,
    MAX_SEED,
    MAX_SEED + 1,
    10**12,
    10**300,
    10**5000,
    -(10**5000),
]
INT_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64]


@st.composite
def numpy_integers(draw):
    dtype = draw(st.sampled_from(INT_DTYPES))
    info = np.iinfo(dtype)
    return dtype(draw(st.integers(int(info.min), int(info.max))))


#: anything a caller might pass where a number is expected
NUMBERS = st.one_of(
    st.sampled_from(CEILINGS),
    st.integers(-(2**70), 2**70),
    st.integers(-3, 3000),
    numpy_integers(),
    st.booleans(),
    st.sampled_from([np.True_, np.False_]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e6, 1e12, 1e300, 400.0, np.float64(400), np.float32(3)]),
    st.none(),
    st.text(max_size=6),
    st.sampled_from(["400", "z" * 10_000]),
    st.binary(max_size=4),
    st.lists(st.integers(0, 5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from([np.array(5), np.array([5]), np.arange(1000), 1 + 2j, object()]),
)

#: anything a caller might pass where a name (a string) is expected
NAMES = st.one_of(
    st.text(max_size=10), st.sampled_from(["z" * 10_000, "RED", " red", "ansi\n"]), NUMBERS
)


def integer_in(value, low: int, high: int) -> bool:
    """The spec of every integer argument: an int or numpy integer (not a bool) in low..high."""
    return (
        isinstance(value, (int, np.integer))
        and not isinstance(value, bool)
        and low <= int(value) <= high
    )


def is_seed(value) -> bool:
    return value is None or integer_in(value, 0, MAX_SEED)
