"""The single-agent Gymnasium env `SatellitesGymEnv` ("satellites/Satellites-v0")."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from play_helpers import find_game, purposeful_action

import satellites_env
from satellites_env import satellites_v0
from satellites_env.agents import AgentSpecError, RandomAgent
from satellites_env.core import Game, IllegalActionError
from satellites_env.core.board import COLOR_NAMES, N_ACTIONS, N_MOVE_ACTIONS, PASS_ACTION, PUSH_BASE
from satellites_env.env import ResetNeededError
from satellites_env.gym_env import GameOverError, SatellitesGymEnv
from satellites_env.observation import PLANE_INDEX

IS_RED = PLANE_INDEX["is_red"]
PUSHED = PLANE_INDEX["pushed"]


def random_action(env: SatellitesGymEnv, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def play_out(env: SatellitesGymEnv, rng: np.random.Generator, policy=None, limit: int = 10_000):
    """Play the learner until the episode ends; return the list of step results."""
    steps = []
    for _ in range(limit):
        action = policy(env.game) if policy else random_action(env, rng)
        result = env.step(action)
        steps.append(result)
        if result[2] or result[3]:
            return steps
    raise AssertionError("episode did not end")


# --------------------------------------------------------------------------- API conformance


def test_check_env_passes():
    # check_env steps with unmasked random actions: by default they end the episode (-1).
    check_env(SatellitesGymEnv(), skip_render_check=True)
    check_env(SatellitesGymEnv(opponent="greedy", agent_color="blue"), skip_render_check=True)


def test_check_env_on_the_default_made_env(monkeypatch):
    """The ecosystem's default: gymnasium.make with no arguments, checked unwrapped and as
    made (with Gymnasium's own wrappers)."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    check_env(gymnasium.make(satellites_env.ENV_ID).unwrapped)
    with pytest.warns(UserWarning, match="different from the unwrapped"):
        check_env(gymnasium.make(satellites_env.ENV_ID))


@pytest.mark.filterwarnings("ignore:.*not having a spec")  # the next test covers gymnasium.make
@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_check_env_with_render_mode(render_mode):
    check_env(SatellitesGymEnv(render_mode=render_mode, screen_size=160))


def test_check_env_through_gymnasium_make_all_render_modes(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    env = gymnasium.make(
        satellites_env.ENV_ID, opponent="random", agent_color="random", screen_size=160
    )
    check_env(env.unwrapped)  # with a spec: also makes one env per render mode, human included


def test_registered_with_gymnasium():
    assert satellites_env.ENV_ID == "satellites/Satellites-v0"
    assert satellites_env.ENV_ID in gymnasium.registry
    env = gymnasium.make("satellites/Satellites-v0", opponent="random", agent_color="red")
    assert isinstance(env.unwrapped, SatellitesGymEnv)
    obs, _info = env.reset(seed=0)
    assert obs["observation"].shape == (10, 10, 22) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].shape == (N_ACTIONS,) and obs["action_mask"].dtype == np.int8
    assert env.observation_space.contains(obs)
    assert env.action_space == gymnasium.spaces.Discrete(N_ACTIONS)
    masks = env.unwrapped.action_masks()
    assert masks.dtype == bool and masks.shape == (N_ACTIONS,)
    assert np.array_equal(masks, obs["action_mask"].astype(bool))
    env.step(int(np.flatnonzero(masks)[0]))
    env.close()


def test_observation_matches_satellites_v0():
    aec = satellites_v0.raw_env()
    aec.reset(seed=5)
    gym_env = SatellitesGymEnv(agent_color="red")
    obs, _ = gym_env.reset(seed=5)
    # same seed, same set-up
    assert gym_env.game.to_spn() == aec.to_spn()
    expected = aec.observe("player_0")
    assert np.array_equal(obs["observation"], expected["observation"])
    assert np.array_equal(obs["action_mask"], expected["action_mask"])


def test_bad_arguments_are_clear_errors():
    with pytest.raises(AgentSpecError, match="unknown agent spec 'nobody'"):
        SatellitesGymEnv(opponent="nobody")
    with pytest.raises(AgentSpecError, match="mcts"):
        SatellitesGymEnv(opponent="mcts:zero")
    with pytest.raises(AgentSpecError, match="callable"):
        SatellitesGymEnv(opponent=42)
    with pytest.raises(ValueError, match="agent_color"):
        SatellitesGymEnv(agent_color="green")
    for bad in (0, -3, True, np.True_, 2.0, "400", None):
        with pytest.raises(ValueError, match="max_moves"):
            SatellitesGymEnv(max_moves=bad)
    with pytest.raises(ValueError, match="render_mode"):
        SatellitesGymEnv(render_mode="video")
    with pytest.raises(ValueError, match="illegal_action"):
        SatellitesGymEnv(illegal_action="ignore")
    with pytest.raises(AgentSpecError, match="unknown agent spec"):
        gymnasium.make(satellites_env.ENV_ID, opponent="stockfish")
    env = SatellitesGymEnv()
    with pytest.raises(ResetNeededError, match=r"reset\(\)"):
        env.step(0)
    assert issubclass(ResetNeededError, gymnasium.error.ResetNeeded)


# --------------------------------------------------------------------------- opponents, colors


@pytest.mark.parametrize("spec", ["random", "greedy", "mcts:2"])
def test_opponent_specs_play_whole_games(spec):
    env = SatellitesGymEnv(opponent=spec, agent_color="blue", max_moves=30)
    env.reset(seed=1)
    assert env.opponent.spec.split(":")[0] == spec.split(":")[0]
    steps = play_out(env, np.random.default_rng(0))
    assert steps[-1][2] or steps[-1][3]
    assert env.game.is_over


def test_callable_and_agent_opponents():
    seen = []

    def first_legal(game):
        assert isinstance(game, Game)
        assert game.to_move == 1  # the learner is red
        seen.append(game.moves)
        return int(np.flatnonzero(game.legal_mask())[0])

    env = SatellitesGymEnv(opponent=first_legal, agent_color="red", max_moves=20)
    env.reset(seed=0)
    assert not seen  # red moves first: the opponent waits
    _, _, _, _, info = env.step(random_action(env, np.random.default_rng(0)))
    assert seen and info["opponent_actions"]
    play_out(env, np.random.default_rng(0))

    agent = RandomAgent(seed=3)
    env = SatellitesGymEnv(opponent=agent, agent_color="blue", max_moves=20)
    assert env.opponent is agent
    _, info = env.reset(seed=0)
    assert len(info["opponent_actions"]) == 1


def test_opponent_illegal_action_is_reported():
    env = SatellitesGymEnv(opponent=lambda game: PASS_ACTION, agent_color="blue")
    with pytest.raises(IllegalActionError, match="opponent"):
        env.reset(seed=0)


def test_agent_color_red():
    env = SatellitesGymEnv(agent_color="red")
    obs, info = env.reset(seed=3)
    assert env.player == 0 and info["learner_color"] == "red"
    assert env.game.moves == 0 and env.game.to_move == 0 and not info["opponent_actions"]
    assert obs["observation"][..., IS_RED].min() == 1.0


def test_agent_color_blue_sees_the_opponents_first_move():
    env = SatellitesGymEnv(agent_color="blue")
    obs, info = env.reset(seed=3)
    assert env.player == 1 and info["learner_color"] == "blue"
    assert env.game.to_move == 1 and env.game.moves == 1 and len(env.game.history) == 1
    assert len(info["opponent_actions"]) == 1
    assert obs["observation"][..., IS_RED].max() == 0.0
    assert obs["action_mask"].any()
    # The board seen is the set-up plus red's move.
    setup = Game.new(seed=3)
    setup.play(info["opponent_actions"][0])
    assert env.game.to_spn() == setup.to_spn()


def test_agent_color_random_draws_both_colors_deterministically():
    env = SatellitesGymEnv(agent_color="random")
    colors = [env.reset(seed=seed)[1]["learner_color"] for seed in range(20)]
    assert set(colors) == {"red", "blue"}
    again = [env.reset(seed=seed)[1]["learner_color"] for seed in range(20)]
    assert colors == again


# --------------------------------------------------------------------------- inside step


def test_opponent_displacements_happen_inside_step():
    """A displacement-loving opponent: its move and push come back together in one step; the
    learner is always the one to move when it gets an observation, and a pending push in an
    observation is always the learner's own."""
    pushes = learner_pushes = 0
    for seed in range(30):
        opp_rng, rng = np.random.default_rng(seed), np.random.default_rng(100 + seed)
        env = SatellitesGymEnv(
            opponent=lambda game, opp_rng=opp_rng: purposeful_action(game, opp_rng),
            agent_color="random",
        )
        obs, info = env.reset(seed=seed)
        while True:
            if not env.game.is_over:
                assert env.game.to_move == env.player
            opp = info["opponent_actions"]
            if opp:
                assert not PUSH_BASE <= opp[-1] < PASS_ACTION or len(opp) >= 2
                for i, action in enumerate(opp):
                    if PUSH_BASE <= action < PASS_ACTION:
                        pushes += 1
                        assert opp[i - 1] < N_MOVE_ACTIONS  # the move that started it
            pending = env.game.pending_push is not None
            # A pending push in an observation is always the learner's own.
            assert (obs["observation"][..., PUSHED].max() > 0) == pending
            if pending:
                legal = np.flatnonzero(obs["action_mask"])
                assert legal.min() >= PUSH_BASE and legal.max() < PASS_ACTION
            action = purposeful_action(env.game, rng)
            moves_before = env.game.moves
            obs, _reward, terminated, truncated, info = env.step(action)
            if env.game.pending_push is not None:
                # first step of the learner's own displacement: no opponent move yet
                assert info["opponent_actions"] == [] and env.game.moves == moves_before
                learner_pushes += 1
            if terminated or truncated:
                break
        if pushes and learner_pushes and seed >= 3:
            break
    assert pushes > 0, "no opponent displacement seen"
    assert learner_pushes > 0, "no learner displacement seen"


def test_opponent_grace_moves_happen_inside_step():
    """The learner's move completes its 12: the opponent's 3 grace moves in a row are all played
    inside that one step, which ends the episode."""
    found = {}

    def gives_opponent_grace(g: Game) -> bool:
        if g.pending_push is not None or g.grace is not None or g.is_over:
            return False
        if g.connected_counts[g.to_move] < 11:
            return False
        for action in map(int, g.legal_actions()):
            if action >= N_MOVE_ACTIONS or g.is_displacement(action):
                continue
            child = g.clone()
            child.play(action)
            if child.grace is not None and child.to_move != g.to_move and not child.is_over:
                found["action"] = action
                return True
        return False

    game = find_game(gives_opponent_grace)
    env = SatellitesGymEnv(opponent="random", agent_color=("red", "blue")[game.to_move])
    _, info = env.reset(seed=0, options={"spn": game.to_spn()})
    assert info["opponent_actions"] == []
    _, reward, terminated, truncated, info = env.step(found["action"])
    moves = [a for a in info["opponent_actions"] if not PUSH_BASE <= a < PASS_ACTION]
    assert terminated and not truncated and env.game.is_over
    assert reward == env.game.score().reward(env.player)
    connected = sum(env.game.connected_counts)
    assert len(moves) == 3 or (connected >= 23 and 1 <= len(moves) < 3)  # R18, or R16 first


def test_learner_grace_moves_are_consecutive_steps():
    """When the opponent has connected all 12, the learner's grace moves are separate steps
    with no opponent move in between (the env never plays for the learner)."""
    game = find_game(lambda g: g.grace is not None and g.pending_push is None)
    learner = game.to_move
    env = SatellitesGymEnv(opponent="random", agent_color=("red", "blue")[learner])
    _, info = env.reset(seed=0, options={"spn": game.to_spn()})
    assert info["opponent_actions"] == []
    rng = np.random.default_rng(0)
    grace = env.game.grace
    while not env.game.is_over and env.game.grace is not None:
        _, _, terminated, truncated, info = env.step(random_action(env, rng))
        if env.game.pending_push is None and not (terminated or truncated):
            assert info["opponent_actions"] == []
            assert env.game.grace == grace - 1
            grace -= 1
    assert env.game.is_over


# --------------------------------------------------------------------------- rewards, ends


def test_rewards_and_termination():
    env = SatellitesGymEnv(agent_color="random")
    rng = np.random.default_rng(0)
    seen = set()
    for seed in range(6):
        env.reset(seed=seed)

        def policy(game):
            return purposeful_action(game, rng)

        steps = play_out(env, rng, policy)
        for _, reward, terminated, truncated, info in steps[:-1]:
            assert reward == 0 and not terminated and not truncated and "winner" not in info
        obs, reward, terminated, truncated, info = steps[-1]
        result = env.game.score()
        assert reward == result.reward(env.player) and reward in (-1.0, 0.0, 1.0)
        assert terminated == env.game.terminated and truncated == env.game.truncated
        assert terminated != truncated
        assert info["winner"] == (None if result.winner is None else COLOR_NAMES[result.winner])
        assert info["winner"] in ("red", "blue", None) and info["reason"] == result.reason
        assert not obs["action_mask"].any() and not env.action_masks().any()
        seen.add(reward)
        with pytest.raises(gymnasium.error.ResetNeeded):
            env.step(0)
    assert len(seen) >= 2


def test_truncation_at_max_moves():
    env = SatellitesGymEnv(agent_color="red", max_moves=10)
    env.reset(seed=0)
    steps = play_out(env, np.random.default_rng(0))
    obs, reward, terminated, truncated, info = steps[-1]
    assert truncated and not terminated
    assert env.game.moves == 10
    assert reward == env.game.score().reward(0)
    assert info["winner"] == {0: "red", 1: "blue", None: None}[env.game.score().winner]
    assert obs["observation"][..., PLANE_INDEX["progress"]].min() == 1.0


def test_finished_position_cannot_be_reset_into():
    game = find_game(lambda g: g.is_over)
    env = SatellitesGymEnv()
    env.reset(seed=3)
    before = env.game.to_spn(), env.np_random.bit_generator.state
    with pytest.raises(GameOverError, match="already over"):
        env.reset(options={"spn": game.to_spn()})
    assert issubclass(GameOverError, ValueError)
    assert (env.game.to_spn(), env.np_random.bit_generator.state) == before  # nothing changed


# --------------------------------------------------------------------------- illegal actions


def test_illegal_action_raises_a_clear_error():
    env = SatellitesGymEnv(agent_color="red", illegal_action="raise")
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    n_legal = int(obs["action_mask"].sum())
    spn = env.game.to_spn()
    with pytest.raises(IllegalActionError, match=rf"illegal action {illegal} .*{n_legal} legal"):
        env.step(illegal)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(N_ACTIONS)
    with pytest.raises(IllegalActionError, match="integer"):
        env.step(1.5)
    # Nothing was played: the episode goes on.
    assert env.game.to_spn() == spn
    env.step(np.int64(np.flatnonzero(obs["action_mask"])[0]))
    env.step(np.array(np.flatnonzero(env.action_masks())[0]))


@pytest.mark.parametrize("mode", [None, "terminate", "lose"])  # None: the default
def test_illegal_action_terminates_by_default(mode):
    kwargs = {} if mode is None else {"illegal_action": mode}
    env = SatellitesGymEnv(agent_color="blue", **kwargs)
    assert env.illegal_action == "terminate"
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert reward == -1.0 and terminated and not truncated
    assert info["illegal_action"].startswith(f"illegal action {illegal} ")
    assert info["winner"] == "red" and "illegal action by the learner (blue)" in info["reason"]
    assert not obs["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(ResetNeededError, match="episode is over"):
        env.step(0)


def test_actions_outside_the_space_raise_in_both_modes():
    for mode in ("terminate", "raise"):
        env = SatellitesGymEnv(agent_color="red", illegal_action=mode)
        obs, _ = env.reset(seed=0)
        spn, history = env.game.to_spn(), list(env.game.history)
        legal = int(np.flatnonzero(obs["action_mask"])[0])
        for bad in (N_ACTIONS, -1, True, 1.5, "c10-c7", None, np.array([legal, legal])):
            with pytest.raises(IllegalActionError, match="action"):
                env.step(bad)
        assert env.game.to_spn() == spn and env.game.history == history
        env.step(np.array([legal]))  # one integer in an array is an action


# --------------------------------------------------------------------------- seeding, options


def trajectory(env: SatellitesGymEnv, seed: int, n: int = 60) -> list:
    obs, info = env.reset(seed=seed)
    out = [(obs["observation"].copy(), tuple(info["opponent_actions"]))]
    rng = np.random.default_rng(seed)
    for _ in range(n):
        obs, reward, terminated, truncated, info = env.step(random_action(env, rng))
        out.append((obs["observation"].copy(), tuple(info["opponent_actions"]), reward))
        if terminated or truncated:
            break
    return out


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x[0], y[0]) and x[1:] == y[1:] for x, y in zip(a, b, strict=False)
    )


@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_seeding_is_deterministic(opponent):
    a = SatellitesGymEnv(opponent=opponent, agent_color="random")
    b = SatellitesGymEnv(opponent=opponent, agent_color="random")
    assert same(trajectory(a, 7), trajectory(b, 7))
    assert same(trajectory(a, 7), trajectory(a, 7))  # reseeding restarts everything
    assert not same(trajectory(a, 7), trajectory(a, 8))
    # Unseeded resets after a seeded one continue deterministically.
    a.reset(seed=11)
    b.reset(seed=11)
    for _ in range(3):
        assert a.reset()[0]["observation"].tobytes() == b.reset()[0]["observation"].tobytes()
        assert a.game.to_spn() == b.game.to_spn() and a.player == b.player


def test_spn_option():
    game = find_game(lambda g: g.moves >= 10 and g.pending_push is None and g.to_move == 0)
    env = SatellitesGymEnv(agent_color="red")
    obs, info = env.reset(seed=0, options={"spn": game.to_spn()})
    assert env.game.to_spn() == game.to_spn() and info["opponent_actions"] == []
    assert np.array_equal(obs["action_mask"], game.legal_mask())
    # The learner as blue: the opponent (red, to move) plays first.
    env = SatellitesGymEnv(agent_color="blue")
    _, info = env.reset(seed=0, options={"spn": game.to_spn()})
    assert info["opponent_actions"] and env.game.to_move == 1


# --------------------------------------------------------------------------- rendering


def test_render_modes(monkeypatch):
    env = SatellitesGymEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "10" in text
    env = SatellitesGymEnv(render_mode="rgb_array", screen_size=160)
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    env = SatellitesGymEnv(render_mode="human", screen_size=160, agent_color="blue")
    env.reset(seed=0)
    env.step(random_action(env, np.random.default_rng(0)))
    assert env.render() is None
    env.close()
    env.close()


# --------------------------------------------------------------------------- vector envs


def random_vector_steps(envs, n_steps: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    episodes = 0
    for _ in range(n_steps):
        masks = obs["action_mask"]
        assert masks.shape == (envs.num_envs, N_ACTIONS)
        via_call = np.stack(envs.call("action_masks"))
        assert np.array_equal(via_call, masks.astype(bool))
        # After an episode ends the next action only resets that env (next-step autoreset).
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, _rewards, terminated, truncated, _ = envs.step(actions)
        episodes += int(np.sum(terminated | truncated))
    return episodes


def test_sync_vector_env():
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: SatellitesGymEnv(agent_color="random", max_moves=12) for _ in range(3)]
    )
    episodes = random_vector_steps(envs, 30, seed=0)
    assert episodes >= 3  # max_moves=12: every env ended at least once
    envs.close()


def test_async_vector_env():
    envs = gymnasium.vector.AsyncVectorEnv(
        [
            lambda: gymnasium.make(
                satellites_env.ENV_ID, opponent="random", agent_color="random", max_moves=12
            )
            for _ in range(2)
        ]
    )
    try:
        episodes = random_vector_steps(envs, 20, seed=1)
        assert episodes >= 2
    finally:
        envs.close()
