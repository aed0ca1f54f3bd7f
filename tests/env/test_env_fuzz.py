"""Fuzzing the env input surfaces: whatever is passed to `step` or as `reset(options={"spn":})`,
only the documented errors escape, and a rejected input changes nothing.

* `satellites_v0.raw_env`: an action that is not a legal integer raises IllegalActionError;
  using the env before `reset()` or after both agents stepped out raises ResetNeededError.
* `satellites_v0.env()`: the same, except that an integer of the action space that is illegal
  ends the game with -1 for the offender (PettingZoo's classic behaviour).
* `SatellitesGymEnv`: as `raw_env` with `illegal_action="raise"`; as `env()` with the default
  `illegal_action="terminate"`; after the end, `step` raises ResetNeededError.
* `reset(options={"spn": ...})`: NotationError (and for the Gymnasium env GameOverError for a
  position the learner cannot play), with the env unchanged.
* Constructor arguments, `reset`'s seed and options, for all four (and the vector env): a
  ValueError naming the argument, in one short line, and a refused reset changes nothing.
"""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from bad_arguments import NAMES, NUMBERS, integer_in, is_seed
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from satellites_env import satellites_v0
from satellites_env.agents import MAX_SIMULATIONS
from satellites_env.core import Game, IllegalActionError, NotationError
from satellites_env.core.batch import MAX_NUM_GAMES
from satellites_env.core.board import MAX_MOVES_LIMIT, N_ACTIONS
from satellites_env.env import MAX_SCREEN_SIZE, MIN_SCREEN_SIZE, ResetNeededError
from satellites_env.gym_env import GameOverError, SatellitesGymEnv
from satellites_env.vector import SatellitesVectorEnv

FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@st.composite
def numpy_integer(draw, low: int = -(2**63), high: int = 2**64 - 1):
    dtype = draw(st.sampled_from(INT_DTYPES))
    info = np.iinfo(dtype)
    return dtype(draw(st.integers(max(low, int(info.min)), min(high, int(info.max)))))


ANY_VALUE = st.one_of(
    st.integers(0, N_ACTIONS - 1),  # in range, mostly illegal
    st.integers(-(2**70), 2**70),  # mostly out of range
    st.sampled_from([-1, N_ACTIONS, N_ACTIONS + 1, 2**63, 10**5000, -(10**5000)]),
    numpy_integer(),
    st.booleans(),
    st.sampled_from([np.True_, np.False_]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 5.0, np.float32(3)]),
    st.complex_numbers(max_magnitude=10),
    st.none(),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.lists(st.integers(0, N_ACTIONS - 1), max_size=2),
    st.tuples(st.integers(0, 10)),
    hnp.arrays(
        st.sampled_from([np.int64, np.int8, np.uint16, np.float64, np.bool_]),
        hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
        elements=st.integers(0, 1),
    ),
    hnp.arrays(
        st.sampled_from([np.int64, np.int32]),
        st.sampled_from([(), (1,)]),
        elements=st.integers(-5, N_ACTIONS + 5),
    ),
    hnp.arrays(np.uint16, st.sampled_from([(), (1,)]), elements=st.integers(0, N_ACTIONS + 5)),
)


def legal_as_any_type(draw, mask: np.ndarray):
    """One legal action, as an int, a numpy integer, or an integer array of one element."""
    action = int(draw(st.sampled_from(np.flatnonzero(mask).tolist())))
    kind = draw(st.sampled_from(["int", "np", "0d", "1d"]))
    if kind == "np":
        return draw(st.sampled_from([np.int16, np.int32, np.int64, np.uint16, np.uint64]))(action)
    if kind == "0d":
        return np.array(action)
    if kind == "1d":
        return np.array([action], dtype=np.int32)
    return action


def draw_action(data, mask: np.ndarray):
    """Half the time a legal action (so games go on and end), else anything at all."""
    if mask.any() and data.draw(st.booleans(), label="legal?"):
        return data.draw(
            st.composite(lambda draw: legal_as_any_type(draw, mask))(), label="legal action"
        )
    return data.draw(ANY_VALUE, label="any value")


def as_space_action(value) -> int | None:
    """The spec: the integer an input stands for, or None when it is not one integer."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if (
        isinstance(value, np.ndarray)
        and value.size == 1
        and value.ndim <= 1
        and np.issubdtype(value.dtype, np.integer)
    ):
        return int(value.reshape(()))
    return None


def aec_snapshot(raw) -> tuple:
    game = raw.game
    spn = game.to_spn() if game.pending_push is None else None
    return (
        spn,
        game.state.tobytes(),
        tuple(game.history),
        raw.agent_selection,
        tuple(raw.agents),
        repr(raw.terminations),
        repr(raw.truncations),
        repr(raw.rewards),
        repr(raw._cumulative_rewards),
        repr(raw.infos),
    )


def gym_snapshot(env: SatellitesGymEnv) -> tuple:
    game = env.game
    spn = game.to_spn() if game.pending_push is None else None
    return spn, game.state.tobytes(), tuple(game.history), env.player, env._done


# --------------------------------------------------------------------------- AEC step


def run_aec(data, wrapped: bool) -> None:
    env = (
        satellites_v0.env(max_moves=data.draw(st.integers(1, 8), label="max_moves"))
        if wrapped
        else satellites_v0.raw_env(max_moves=data.draw(st.integers(1, 8)))
    )
    raw = env.unwrapped
    env.reset(seed=data.draw(st.integers(0, 2**16), label="seed"))
    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        if not raw.agents:  # both stepped out: the raw env says so, the wrapper warns
            event("step after both agents stepped out")
            if wrapped:
                before = aec_snapshot(raw)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    env.step(data.draw(ANY_VALUE))
                assert aec_snapshot(raw) == before
            else:
                with pytest.raises(ResetNeededError):
                    env.step(data.draw(ANY_VALUE))
            return
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        mask = raw.game.legal_mask().copy()
        if done:
            action = data.draw(st.one_of(st.none(), ANY_VALUE), label="action of a done agent")
        else:
            action = draw_action(data, mask)
        before = aec_snapshot(raw)
        try:
            env.step(action)
        except IllegalActionError:
            event("rejected")
            assert aec_snapshot(raw) == before, "a rejected action changed the env"
            value = as_space_action(action)
            if done:
                assert action is not None
            else:
                # rejected: not one integer, out of range, or (raw env only) illegal
                assert (
                    value is None or not 0 <= value < N_ACTIONS or (not wrapped and not mask[value])
                )
            continue
        value = as_space_action(action)
        if done:
            event("a done agent stepped out")
            assert action is None and agent not in raw.agents
        elif mask[value]:
            event("played")
            assert raw.game.moves + (raw.game.pending_push is not None) > 0
            if raw.game.is_over:
                event("game over by the rules or the cap")
        else:  # the wrapped env: an illegal action of the space ends the game
            event("illegal action ended the game")
            assert wrapped and 0 <= value < N_ACTIONS
            assert all(raw.terminations.values())
            assert raw._cumulative_rewards[agent] == -1
            assert raw.infos[agent]["illegal_action"].startswith(f"illegal action {value} ")


@FUZZ
@given(st.data())
def test_fuzz_raw_env_step(data):
    run_aec(data, wrapped=False)


@FUZZ
@given(st.data())
def test_fuzz_wrapped_env_step(data):
    run_aec(data, wrapped=True)


@FUZZ
@given(ANY_VALUE, st.sampled_from([satellites_v0.env, satellites_v0.raw_env]))
def test_fuzz_step_before_reset(action, make):
    with pytest.raises(ResetNeededError):
        make().step(action)


# --------------------------------------------------------------------------- Gymnasium step


def run_gym(data, mode: str) -> None:
    env = SatellitesGymEnv(
        agent_color=data.draw(st.sampled_from(["red", "blue"])),
        max_moves=data.draw(st.integers(1, 10)),
        illegal_action=mode,
    )
    try:
        env.reset(seed=data.draw(st.integers(0, 2**16), label="seed"))
    except GameOverError:  # max_moves=1 and the opponent moves first: nothing left to play
        return
    for _ in range(data.draw(st.integers(1, 20), label="steps")):
        mask = env.action_masks()
        action = draw_action(data, mask)
        before = gym_snapshot(env)
        if env._done:
            event("step after the end")
            with pytest.raises(ResetNeededError):
                env.step(action)
            assert gym_snapshot(env) == before
            return
        value = as_space_action(action)
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except IllegalActionError:
            event("rejected")
            assert gym_snapshot(env) == before, "a rejected action changed the env"
            assert (
                value is None or not 0 <= value < N_ACTIONS or (mode == "raise" and not mask[value])
            )
            continue
        assert env.observation_space.contains(obs)
        event("ended" if terminated or truncated else "played")
        if not mask[value]:
            event("illegal action ended the episode")
            assert mode == "terminate" and terminated and not truncated and reward == -1.0
            assert info["illegal_action"].startswith(f"illegal action {value} ")
            assert info["winner"] == ("red", "blue")[1 - env.player]
        elif terminated or truncated:
            assert info["winner"] in ("red", "blue", None)


@FUZZ
@given(st.data())
def test_fuzz_gym_env_step_terminate_mode(data):
    run_gym(data, "terminate")


@FUZZ
@given(st.data())
def test_fuzz_gym_env_step_raise_mode(data):
    run_gym(data, "raise")


# --------------------------------------------------------------------------- reset(spn)


def _valid_spns() -> list[str]:
    rng = np.random.default_rng(11)
    found = []
    for g in range(3):
        game = Game.new(seed=500 + g)
        while not game.is_over:
            if game.pending_push is None and rng.random() < 0.1:
                found.append(game.to_spn())
            game.play(int(rng.choice(game.legal_actions())))
        found.append(game.to_spn())
    return found


VALID_SPNS = _valid_spns()
SPN_ALPHABET = "ABCDabcd./ rb-0123456789\t\n"


@st.composite
def mutated_spn(draw) -> str:
    text = list(draw(st.sampled_from(VALID_SPNS)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        at = draw(st.integers(0, len(text)))
        piece = draw(
            st.one_of(
                st.sampled_from(list(SPN_ALPHABET)),
                st.sampled_from(["\x00", "é", "１", "9" * 12, "-1"]),
            )
        )
        if kind == "replace" and at < len(text):
            text[at] = piece
        elif kind == "insert":
            text.insert(at, piece)
        elif text and at < len(text):
            del text[at]
    return "".join(text)


SPN_INPUTS = st.one_of(
    mutated_spn(),
    st.text(max_size=120),
    st.text(alphabet=SPN_ALPHABET, max_size=120),
    st.integers(),
    st.binary(max_size=8),
    st.lists(st.text(max_size=3)),
)


@FUZZ
@given(SPN_INPUTS, st.sampled_from(["raw", "wrapped", "gym"]))
def test_fuzz_reset_spn(spn, kind):
    if kind == "gym":
        env = SatellitesGymEnv(agent_color="red")
        env.reset(seed=1)
        before = gym_snapshot(env)
        allowed = (NotationError, GameOverError)
    else:
        env = satellites_v0.env() if kind == "wrapped" else satellites_v0.raw_env()
        env.reset(seed=1)
        before = aec_snapshot(env.unwrapped)
        allowed = (NotationError,)
    try:
        env.reset(options={"spn": spn})
    except allowed as error:
        event(f"rejected: {type(error).__name__}")
        assert isinstance(error, ValueError)
        after = gym_snapshot(env) if kind == "gym" else aec_snapshot(env.unwrapped)
        if "opponent ended" not in str(error):  # the opponent's moves come after the new
            assert after == before  # game began; any other refusal is first
        return
    event("accepted")
    game = env.unwrapped.game
    if kind != "gym":  # the gym env may have played the opponent's first actions
        assert game.to_spn() == " ".join(spn.split())


# --------------------------------------------------------------------------- arguments
# One rule for the three envs (and raw_env / env()): a bad constructor argument, seed or
# options raises a ValueError naming the argument (AgentSpecError, NotationError and
# GameOverError are ValueErrors too), in one short line; nothing else escapes, and a refused
# reset changes nothing.

ENV_KINDS = ["raw", "wrapped", "gym", "vector"]
MAX_MESSAGE = 400


def _render_modes():
    return st.one_of(st.sampled_from([None, "ansi", "rgb_array", "svg", "human"]), NAMES)


def _opponents():
    return st.one_of(
        st.sampled_from(
            [
                "random",
                "greedy",
                f"mcts:{MAX_SIMULATIONS}",
                f"mcts:{MAX_SIMULATIONS + 1}",
                "mcts:0",
                "mcts:" + "9" * 40,
                "minimax",
                "random:1",
            ]
        ),
        NAMES,
    )


ARGUMENTS = {  # name -> (values to try, the spec)
    "max_moves": (
        st.one_of(st.integers(1, 50), NUMBERS),
        lambda v: integer_in(v, 1, MAX_MOVES_LIMIT),
    ),
    "render_mode": (
        _render_modes(),
        lambda v: v is None or (isinstance(v, str) and v in ("ansi", "rgb_array", "svg", "human")),
    ),
    "screen_size": (
        st.one_of(st.sampled_from([64, 160, 4096]), NUMBERS),
        lambda v: integer_in(v, MIN_SCREEN_SIZE, MAX_SCREEN_SIZE),
    ),
    "agent_color": (
        st.one_of(st.sampled_from(["red", "blue", "random", "green"]), NAMES),
        lambda v: isinstance(v, str) and v in ("red", "blue", "random"),
    ),
    "illegal_action": (
        st.one_of(st.sampled_from(["terminate", "raise", "lose", "end"]), NAMES),
        lambda v: isinstance(v, str) and v in ("terminate", "raise", "lose"),
    ),
    "opponent": (
        _opponents(),
        lambda v: (
            isinstance(v, str) and (v in ("random", "greedy") or v == f"mcts:{MAX_SIMULATIONS}")
        ),
    ),
    # valid sizes above 8 are not allocated here (MAX_NUM_GAMES games take 1.7 GB)
    "num_envs": (
        st.one_of(st.integers(1, 4), NUMBERS).map(
            lambda v: 4 if integer_in(v, 9, MAX_NUM_GAMES) else v
        ),
        lambda v: integer_in(v, 1, MAX_NUM_GAMES),
    ),
    "num_chunks": (
        st.one_of(st.none(), st.integers(1, 8), NUMBERS),
        lambda v: v is None or integer_in(v, 1, MAX_NUM_GAMES),
    ),
    "copy": (
        st.one_of(st.sampled_from([True, False, np.True_, 1, 0, "yes"]), NAMES),
        lambda v: isinstance(v, (bool, np.bool_)),
    ),
}
ENV_ARGUMENTS = {
    "raw": ["render_mode", "max_moves", "screen_size"],
    "wrapped": ["render_mode", "max_moves", "screen_size"],
    "gym": ["opponent", "agent_color", "max_moves", "render_mode", "illegal_action", "screen_size"],
    "vector": ["num_envs", "max_moves", "copy", "num_chunks"],
}


def make_env(kind: str, **kwargs):
    if kind == "raw":
        return satellites_v0.raw_env(**kwargs)
    if kind == "wrapped":
        return satellites_v0.env(**kwargs)
    if kind == "gym":
        return SatellitesGymEnv(**kwargs)
    return SatellitesVectorEnv(kwargs.pop("num_envs", 2), **kwargs)


def assert_documented(error: BaseException, names) -> None:
    """Only the documented types, naming one of `names`, in one short line."""
    assert isinstance(error, ValueError), f"{type(error).__name__}: {str(error)[:200]}"
    message = str(error)
    assert len(message) < MAX_MESSAGE and "\n" not in message, message[:MAX_MESSAGE]
    assert any(name in message for name in names), message


@FUZZ
@given(st.data(), st.sampled_from(ENV_KINDS))
def test_fuzz_constructor_arguments(data, kind):
    kwargs = {}
    for name in ENV_ARGUMENTS[kind]:
        if data.draw(st.booleans(), label=f"give {name}?"):
            kwargs[name] = data.draw(ARGUMENTS[name][0], label=name)
    bad = [name for name, value in kwargs.items() if not ARGUMENTS[name][1](value)]
    try:
        env = make_env(kind, **dict(kwargs))
    except Exception as error:
        event(f"{kind}: refused")
        assert bad, f"valid arguments refused: {kwargs!r:.300}: {error}"
        assert_documented(error, bad)
        return
    event(f"{kind}: built")
    assert not bad, f"{bad} accepted"
    env.close()


def _resettable_spns() -> list[str]:
    """Positions the learner (red) can play from at once: not over, red to move."""
    return [spn for spn in VALID_SPNS if " r " in spn and not Game.from_spn(spn).is_over][:6]


def _parses(spn) -> bool:
    try:
        Game.from_spn(spn)
    except NotationError:
        return False
    return True


RESET_SPNS = _resettable_spns()
# SPN inputs the parser refuses: the valid positions reset may take are RESET_SPNS alone, so
# that the spec below knows which resets succeed
BAD_SPNS = st.one_of(
    SPN_INPUTS,
    NUMBERS,
    st.sampled_from(
        [
            "x" * 10**6,
            VALID_SPNS[0].rsplit(" ", 1)[0] + " " + "9" * 5000,
            VALID_SPNS[0].rsplit(" ", 1)[0] + " 1000001",
            "/".join(["." * 10**5] * 10),
        ]
    ),
).filter(lambda spn: not _parses(spn))
SEEDS = st.one_of(st.none(), st.integers(0, 2**64 - 1), NUMBERS)
OPTIONS = st.one_of(
    st.none(),
    st.just({}),
    st.builds(lambda spn: {"spn": spn}, st.sampled_from(RESET_SPNS)),
    st.builds(lambda spn: {"spn": spn}, BAD_SPNS),
    st.dictionaries(
        st.sampled_from(["spn", "seed", "other", 3]), st.one_of(NUMBERS, st.none()), max_size=2
    ),
    NUMBERS,
    st.sampled_from([["spn"], ("spn", "x"), "spn", np.array([1])]),
)


def reset_spec(kind: str, seed, options) -> list[str]:
    """The names the reset must refuse (empty: it must succeed)."""
    bad = [] if is_seed(seed) else ["seed"]
    if options is not None and not isinstance(options, dict):
        return [*bad, "options"]
    spn = (options or {}).get("spn")
    if spn is not None:
        if kind == "vector":
            bad.append("options")
        elif not (isinstance(spn, str) and spn in RESET_SPNS):
            bad.append("SPN")
    return bad


def env_snapshot(kind: str, env) -> tuple:
    if kind == "vector":
        return env.states.tobytes(), env.engine.seed, env.engine.episodes.tobytes()
    if kind == "gym":
        return (*gym_snapshot(env), env.np_random.bit_generator.state["state"]["state"])
    return (*aec_snapshot(env.unwrapped), env.unwrapped._rng.bit_generator.state["state"])


@FUZZ
@given(st.sampled_from(ENV_KINDS), SEEDS, OPTIONS, st.booleans())
def test_fuzz_reset_arguments(kind, seed, options, reset_first):
    """reset(seed=..., options=...) across the envs: accepted exactly when the seed is None or
    0 .. 2**64 - 1 and the options are None or a dict with a usable "spn"; otherwise a
    documented ValueError naming the argument (NotationError for the SPN), with the env as it
    was (or still needing its first reset)."""
    env = make_env(kind)
    if reset_first:
        env.reset(seed=1)
        before = env_snapshot(kind, env)
    bad = reset_spec(kind, seed, options)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown option keys warn
            env.reset(seed=seed, options=options)
    except Exception as error:
        event(f"{kind}: refused")
        assert bad, f"refused: seed={seed!r:.100} options={options!r:.200}: {error}"
        names = [{"SPN": "SPN", "seed": "seed", "options": "options"}[b] for b in bad]
        assert_documented(error, [*names, "square", "satellite", "group", "grace", "move"])
        if reset_first:
            assert env_snapshot(kind, env) == before, "a refused reset changed the env"
        else:
            with pytest.raises(ResetNeededError):
                env.step(np.zeros(2, dtype=np.int64) if kind == "vector" else 0)
        return
    event(f"{kind}: reset")
    assert not bad, f"{bad} accepted: seed={seed!r:.100} options={options!r:.200}"


@pytest.mark.parametrize("kind", ENV_KINDS)
def test_reset_needed_is_a_value_error_everywhere(kind):
    env = make_env(kind)
    with pytest.raises(ResetNeededError) as error:
        env.step(np.zeros(2, dtype=np.int64) if kind == "vector" else 0)
    assert isinstance(error.value, ValueError)
    assert isinstance(error.value, gymnasium.error.ResetNeeded)
