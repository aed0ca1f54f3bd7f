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
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from satellites_env import satellites_v0
from satellites_env.core import Game, IllegalActionError, NotationError
from satellites_env.core.board import N_ACTIONS
from satellites_env.env import ResetNeededError
from satellites_env.gym_env import GameOverError, SatellitesGymEnv

FUZZ = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@st.composite
def numpy_integer(draw, low: int = -(2**63), high: int = 2**64 - 1):
    dtype = draw(st.sampled_from(INT_DTYPES))
    info = np.iinfo(dtype)
    return dtype(draw(st.integers(max(low, int(info.min)), min(high, int(info.max)))))


ANY_VALUE = st.one_of(
    st.integers(0, N_ACTIONS - 1),                       # in range, mostly illegal
    st.integers(-(2**70), 2**70),                        # mostly out of range
    st.sampled_from([-1, N_ACTIONS, N_ACTIONS + 1]),
    numpy_integer(),
    st.booleans(), st.sampled_from([np.True_, np.False_]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 5.0, np.float32(3)]),
    st.complex_numbers(max_magnitude=10),
    st.none(),
    st.text(max_size=8), st.binary(max_size=4),
    st.lists(st.integers(0, N_ACTIONS - 1), max_size=2), st.tuples(st.integers(0, 10)),
    hnp.arrays(st.sampled_from([np.int64, np.int8, np.uint16, np.float64, np.bool_]),
               hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
               elements=st.integers(0, 1)),
    hnp.arrays(st.sampled_from([np.int64, np.int32]), st.sampled_from([(), (1,)]),
               elements=st.integers(-5, N_ACTIONS + 5)),
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
        return data.draw(st.composite(lambda draw: legal_as_any_type(draw, mask))(),
                         label="legal action")
    return data.draw(ANY_VALUE, label="any value")


def as_space_action(value) -> int | None:
    """The spec: the integer an input stands for, or None when it is not one integer."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.ndim <= 1 \
            and np.issubdtype(value.dtype, np.integer):
        return int(value.reshape(()))
    return None


def aec_snapshot(raw) -> tuple:
    game = raw.game
    spn = game.to_spn() if game.pending_push is None else None
    return (spn, game.state.tobytes(), tuple(game.history), raw.agent_selection,
            tuple(raw.agents), repr(raw.terminations), repr(raw.truncations), repr(raw.rewards),
            repr(raw._cumulative_rewards), repr(raw.infos))


def gym_snapshot(env: SatellitesGymEnv) -> tuple:
    game = env.game
    spn = game.to_spn() if game.pending_push is None else None
    return spn, game.state.tobytes(), tuple(game.history), env.player, env._done


# --------------------------------------------------------------------------- AEC step


def run_aec(data, wrapped: bool) -> None:
    env = satellites_v0.env(max_moves=data.draw(st.integers(1, 8), label="max_moves")) \
        if wrapped else satellites_v0.raw_env(max_moves=data.draw(st.integers(1, 8)))
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
                assert value is None or not 0 <= value < N_ACTIONS or \
                    (not wrapped and not mask[value])
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
    env = SatellitesGymEnv(agent_color=data.draw(st.sampled_from(["red", "blue"])),
                           max_moves=data.draw(st.integers(1, 10)), illegal_action=mode)
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
            assert value is None or not 0 <= value < N_ACTIONS or \
                (mode == "raise" and not mask[value])
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
        piece = draw(st.one_of(st.sampled_from(list(SPN_ALPHABET)),
                               st.sampled_from(["\x00", "é", "１", "9" * 12, "-1"])))
        if kind == "replace" and at < len(text):
            text[at] = piece
        elif kind == "insert":
            text.insert(at, piece)
        elif text and at < len(text):
            del text[at]
    return "".join(text)


SPN_INPUTS = st.one_of(mutated_spn(), st.text(max_size=120),
                       st.text(alphabet=SPN_ALPHABET, max_size=120),
                       st.integers(), st.binary(max_size=8), st.lists(st.text(max_size=3)))


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
        if not isinstance(error, GameOverError):  # a GameOverError from the opponent's moves
            assert after == before                # comes after the new game began
        return
    event("accepted")
    game = env.unwrapped.game
    if kind != "gym":  # the gym env may have played the opponent's first actions
        assert game.to_spn() == " ".join(spn.split())
