"""`copy.deepcopy` and `pickle` of every env keep the whole state, at any point of a game.

For each env kind (the wrapped and the raw AEC env, the Gymnasium env, also through
`gymnasium.make`, and the vector env), hypothesis plays a random number of random legal
actions, copies the env both ways, and checks that:

* the copy's state is the original's (a snapshot: position, history, rewards and flags,
  infos, observations, the random generators);
* stepping a copy to the end of its game and resetting it without a seed leaves the original
  unchanged (no shared arrays, buffers or generators);
* the original and its copies, stepped with the same actions, report the same observations,
  rewards, terminations, truncations and infos at every step, to the end of the game, and
  after a reset without a seed (the copies continue the same random stream).

The copy points include right after `reset`, mid-game, mid-displacement, a game that is over
but not yet stepped out of, and after both agents stepped out (or an illegal action ended it).
"""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from satellites_env import ENV_ID, satellites_v0
from satellites_env.core import Game
from satellites_env.env import AGENTS, ResetNeededError
from satellites_env.gym_env import SatellitesGymEnv
from satellites_env.observation import Observer
from satellites_env.vector import SatellitesVectorEnv
from satellites_env.wrappers import MaskedDictObservation

# No shrinking: a failing game is reported as drawn (shrinking whole games takes minutes).
COPY = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)

Copier = Callable[[Any], Any]
COPIERS: dict[str, Copier] = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda env: pickle.loads(pickle.dumps(env)),
}

#: where a game is copied: a number of steps, or one of these points
OVER, OUT, ILLEGAL = "over", "stepped out", "ended by an illegal action"
COPY_POINTS = st.one_of(
    st.just(0), st.integers(1, 40), st.integers(41, 450), st.sampled_from([OVER, OUT])
)


def plain(value):
    """`value` with arrays as (dtype, shape, bytes), comparable with == at any depth."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if all(isinstance(item, (int, str)) for item in value):  # histories: the bulk
            return tuple(value)
        return tuple(plain(item) for item in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def assert_same(a, b, where: str = "") -> None:
    assert plain(a) == plain(b), where


# ---------------------------------------------------------------------------- AEC envs


def aec_snapshot(env) -> dict:
    """Everything an AEC env reports and keeps, as plain values."""
    raw = env.unwrapped
    snap: dict[str, Any] = {
        "rng": raw._rng.bit_generator.state,
        "wrapper": {k: v for k, v in vars(env).items() if k.startswith("_has")},
    }
    if raw.game is None:
        return snap
    snap.update(
        state=raw.game.state,
        history=raw.history,
        actions=raw.game.actions,
        agents=raw.agents,
        agent_selection=raw.agent_selection,
        rewards=raw.rewards,
        cumulative=raw._cumulative_rewards,
        terminations=raw.terminations,
        truncations=raw.truncations,
        infos=raw.infos,
        observations={agent: env.observe(agent) for agent in AGENTS},
    )
    if raw.agents:  # once both agents stepped out there is nobody for last() to report on
        snap["last"] = env.last()
    return plain(snap)


def aec_action(env, rng: np.random.Generator) -> int | None:
    """A random legal action for the agent to act, or None when it is done."""
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        return None
    return int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))


def play_aec(env, rng: np.random.Generator, point) -> None:
    """Play random legal actions from a fresh reset to the copy point `point`."""
    if point == ILLEGAL:
        illegal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PettingZoo warns of the illegal move
            env.step(int(rng.choice(illegal)))
        return
    steps = 0
    while (
        env.agents
        and not (point == OVER and env.unwrapped.game.is_over)
        and (isinstance(point, str) or steps < point)
    ):
        env.step(aec_action(env, rng))
        steps += 1


def play_out_aec(envs: list, rng: np.random.Generator) -> None:
    """Step `envs` with the same random actions to the end of the game, then reset them
    without a seed and play a few more steps, comparing them at every step."""

    def compare(where):
        if len(envs) == 1:
            return
        first = aec_snapshot(envs[0])
        for other in envs[1:]:
            assert aec_snapshot(other) == first, where

    compare("at the copy")
    step = 0
    while envs[0].agents:
        action = aec_action(envs[0], rng)
        for env in envs:
            env.step(action)
        step += 1
        compare(f"step {step}")
    for env in envs:
        env.reset()  # no seed: each env's own generator draws the set-up
    compare("after a reset without a seed")
    for step in range(5):
        action = aec_action(envs[0], rng)
        for env in envs:
            env.step(action)
        compare(f"step {step} of the next game")


AEC_KINDS = {
    "env": satellites_v0.env,
    "raw_env": satellites_v0.raw_env,
    "MaskedDictObservation": lambda **kw: MaskedDictObservation(satellites_v0.env(**kw)),
}


@pytest.mark.parametrize("kind", AEC_KINDS)
@COPY
@given(seed=st.integers(0, 2**32), point=COPY_POINTS, max_moves=st.sampled_from([400, 30]))
def test_aec_copies_keep_the_whole_state(kind, seed, point, max_moves):
    rng = np.random.default_rng(seed)
    env = AEC_KINDS[kind](max_moves=max_moves)
    env.reset(seed=seed)
    play_aec(env, rng, point)
    before = aec_snapshot(env)
    for name, copier in COPIERS.items():
        other = copier(env)
        assert aec_snapshot(other) == before, name
        play_out_aec([other], np.random.default_rng(seed + 1))
        assert aec_snapshot(env) == before, f"stepping the {name} copy changed the original"
    play_out_aec([env, copy.deepcopy(env), COPIERS["pickle"](env)], rng)


@COPY
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 30))
def test_aec_copies_after_an_illegal_action_ended_the_game(seed, steps):
    rng = np.random.default_rng(seed)
    env = satellites_v0.env()
    env.reset(seed=seed)
    play_aec(env, rng, steps)
    play_aec(env, rng, ILLEGAL)
    assert "illegal_action" in env.infos["player_0"]
    before = aec_snapshot(env)
    for copier in COPIERS.values():
        assert aec_snapshot(copier(env)) == before
    play_out_aec([env, copy.deepcopy(env), COPIERS["pickle"](env)], rng)


@pytest.mark.parametrize("kind", AEC_KINDS)
@pytest.mark.parametrize("copier", COPIERS)
def test_an_aec_env_copied_before_reset_behaves_as_new(kind, copier):
    env = AEC_KINDS[kind]()
    other = COPIERS[copier](env)
    assert aec_snapshot(other) == aec_snapshot(env)
    if kind != "raw_env":
        with pytest.raises(ResetNeededError):
            other.step(0)
    env.reset()  # no seed: the copied generator draws the same set-up
    other.reset()
    assert aec_snapshot(other) == aec_snapshot(env)


@pytest.mark.parametrize("kind", ["env", "SatellitesGymEnv"])
def test_the_copy_of_a_human_env_opens_its_own_window(kind, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    make = satellites_v0.env if kind == "env" else SatellitesGymEnv
    env = make(render_mode="human", screen_size=128)
    env.reset(seed=0)  # a human env draws on reset
    window = env.unwrapped._renderer._window
    assert window.is_open
    copies = [copier(env) for copier in COPIERS.values()]
    for other in copies:
        assert other.unwrapped._renderer._window is None and other.render_mode == "human"
        assert other.render() is None and other.unwrapped._renderer._window.is_open
        other.close()  # pygame has one display: closing it here must not break the original
    assert env.render() is None and env.unwrapped._renderer._window is window
    env.close()


@pytest.mark.parametrize("copier", COPIERS)
def test_a_copied_observer_writes_into_its_own_buffers(copier):
    game = Game.new(seed=0)
    observer = Observer()
    first = plain(observer.observe(game, 0, to_act=True))
    other = COPIERS[copier](observer)
    view = other.observe(game, 1, to_act=False, copy=False)
    assert view["observation"] is other.planes and view["action_mask"] is other.mask
    assert plain(view) == plain(other.observe(game, 1, to_act=False))
    assert plain(observer.observe(game, 0, to_act=True, copy=False)) == first
    assert not np.shares_memory(observer.planes, other.planes)


# ---------------------------------------------------------------------------- Gymnasium env


def gym_snapshot(env) -> dict:
    raw = env.unwrapped
    snap: dict[str, Any] = {
        "np_random": raw.np_random.bit_generator.state,
        "done": raw._done,
        "player": raw.player,
        "masks": raw.action_masks(),
    }
    agent = raw._opponent_agent
    if agent is not None:
        snap["opponent_rng"] = agent.rng.bit_generator.state
    if raw.game is not None:
        snap.update(
            state=raw.game.state,
            history=raw.game.history,
            actions=raw.game.actions,
            observation=raw._observation(),
        )
    return plain(snap)


def gym_action(env, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))


def play_out_gym(envs: list, rng: np.random.Generator) -> None:
    """Step `envs` alike to the end, then reset them without a seed and play a few steps,
    comparing what they return and keep at every step."""

    def compare(results, where):
        for env, result in zip(envs[1:], results[1:], strict=False):
            assert_same(result, results[0], where)
            assert gym_snapshot(env) == gym_snapshot(envs[0]), where

    compare([None] * len(envs), "at the copy")
    step = 0
    while not envs[0].unwrapped._done:
        action = gym_action(envs[0], rng)
        compare([env.step(action) for env in envs], f"step {step}")
        step += 1
    for env in envs:
        with pytest.raises(ResetNeededError):
            env.unwrapped.step(0)
    compare([env.reset() for env in envs], "after a reset without a seed")
    for step in range(5):
        if envs[0].unwrapped._done:
            break
        action = gym_action(envs[0], rng)
        compare([env.step(action) for env in envs], f"step {step} of the next game")


GYM_KINDS = {
    "SatellitesGymEnv": SatellitesGymEnv,
    "gymnasium.make": lambda **kw: gymnasium.make(ENV_ID, **kw),
}


@pytest.mark.parametrize("kind", GYM_KINDS)
@COPY
@given(
    seed=st.integers(0, 2**32),
    point=st.one_of(st.just(0), st.integers(1, 300), st.sampled_from([OVER, ILLEGAL])),
    opponent=st.sampled_from([("random", 400), ("greedy", 400), ("random", 30), ("mcts:8", 30)]),
)
def test_gym_copies_keep_the_whole_state(kind, seed, point, opponent):
    opponent, max_moves = opponent  # mcts plays short games only: it is the slow one
    event(f"opponent {opponent}")
    rng = np.random.default_rng(seed)
    env = GYM_KINDS[kind](opponent=opponent, agent_color="random", max_moves=max_moves)
    env.reset(seed=seed)
    if point == ILLEGAL:
        illegal = np.flatnonzero(~env.unwrapped.action_masks())
        assert env.step(int(rng.choice(illegal)))[1] == -1.0
    else:
        steps = 0
        while not env.unwrapped._done and (point == OVER or steps < point):
            env.step(gym_action(env, rng))
            steps += 1
    before = gym_snapshot(env)
    for name, copier in COPIERS.items():
        other = copier(env)
        assert gym_snapshot(other) == before, name
        play_out_gym([other], np.random.default_rng(seed + 1))
        assert gym_snapshot(env) == before, f"stepping the {name} copy changed the original"
    play_out_gym([env, copy.deepcopy(env), COPIERS["pickle"](env)], rng)


# ---------------------------------------------------------------------------- vector env


def vector_snapshot(env) -> dict:
    engine = env.engine
    return plain(
        {
            name: getattr(engine, name)
            for name in ("states", "final_states", "episodes", "masks", "counts", "seed")
        }
        | {"observations": env._observations()}
    )


def vector_actions(env, rng: np.random.Generator) -> np.ndarray:
    keys = rng.random(env.engine.masks.shape) + env.engine.masks
    return keys.argmax(axis=1)


@COPY
@given(
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 120),
    copy_arrays=st.booleans(),
    num_envs=st.integers(1, 4),
)
def test_vector_copies_keep_the_whole_state(seed, steps, copy_arrays, num_envs):
    rng = np.random.default_rng(seed)
    env = SatellitesVectorEnv(num_envs, max_moves=30, copy=copy_arrays)
    env.reset(seed=seed)
    for _ in range(steps):  # max_moves=30: most slots finish and restart on the way
        env.step(vector_actions(env, rng))
    before = vector_snapshot(env)
    for name, copier in COPIERS.items():
        other = copier(env)
        assert vector_snapshot(other) == before, name
        assert not np.shares_memory(other.engine.states, env.engine.states)
        other_rng = np.random.default_rng(seed + 1)
        for _ in range(40):
            other.step(vector_actions(other, other_rng))
        assert vector_snapshot(env) == before, f"stepping the {name} copy changed the original"
    envs = [env, copy.deepcopy(env), COPIERS["pickle"](env)]
    for step in range(80):
        actions = vector_actions(env, rng)
        results = [plain(other.step(actions)) for other in envs]
        assert results[1] == results[0] and results[2] == results[0], f"step {step}"
