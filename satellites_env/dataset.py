"""`satellites dataset`: games of any agent recorded as a Minari data set (the `minari` extra).

The recorded agent plays one seat of the Gymnasium env (``satellites/Satellites-v0``) against
an opponent spec that the env plays inside ``step``; each game is one episode, written with
``minari.create_dataset_from_buffers`` (Minari's ``DataCollector`` would need JAX for its
buffers), then appended in chunks of `CHUNK_GAMES` games. An episode holds the observations
(``{"observation": planes, "action_mask": mask}``, the mask being the exact legal-action
mask), the agent's actions, the rewards (+1/-1/0 at the end, R24), terminations and
truncations (the move cap). ``seat="both"`` alternates the recorded agent's colour game by
game (red in even games), so both seats are covered equally.

The data set's metadata names the agents: ``algorithm_name`` is the recorded agent's spec, and
the extra keys ``satellites_agent``, ``satellites_opponent``, ``satellites_seat``,
``satellites_games``, ``satellites_seed`` and ``satellites_max_moves`` say how it was made.

Where data sets live: Minari's own rule, the folder ``MINARI_DATASETS_PATH`` names, else
``~/.minari/datasets``; `root` overrides it for this call. An existing data set of the same id is
never overwritten: the call refuses before the first game.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

from . import ENV_ID
from .agents import Agent, make_agent
from .core.board import DEFAULT_MAX_MOVES, check_max_moves
from .core.checks import check_seed, quoted

if TYPE_CHECKING:
    from minari.data_collector import EpisodeBuffer

SEATS = ("red", "blue", "both")
#: games held in memory before they are appended to the data set (about 1 MB a game)
CHUNK_GAMES = 50


class DatasetExistsError(FileExistsError):
    """A Minari data set with this id already exists where it would be written."""


@contextmanager
def datasets_root(root: str | os.PathLike | None) -> Iterator[None]:
    """Point Minari at the folder `root` (MINARI_DATASETS_PATH) inside the block, when given;
    the variable is restored after it."""
    if root is None:
        yield
        return
    saved = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(Path(root).resolve())
    try:
        yield
    finally:
        if saved is None:
            del os.environ["MINARI_DATASETS_PATH"]
        else:
            os.environ["MINARI_DATASETS_PATH"] = saved


def check_new_dataset(dataset_id: str, root: str | os.PathLike | None = None) -> Path:
    """Where the data set `dataset_id` would be written (under `root`, else Minari's folder);
    ValueError for a malformed id, DatasetExistsError when one is already there."""
    from minari.dataset.minari_dataset import parse_dataset_id
    from minari.storage import get_dataset_path

    if not isinstance(dataset_id, str):
        raise ValueError(f"dataset id must be a string, got {type(dataset_id).__name__}")
    parse_dataset_id(dataset_id)  # ValueError naming the id and the form it should have
    with datasets_root(root):
        where = Path(get_dataset_path(dataset_id))
    if where.exists():
        raise DatasetExistsError(
            f"a Minari data set {dataset_id!r} already exists at {where}; choose another "
            f"id or version (existing data sets are never overwritten)"
        )
    return where


def record_dataset(
    dataset_id: str,
    agent: str,
    opponent: str,
    games: int,
    seat: str = "both",
    seed: int = 0,
    max_moves: int = DEFAULT_MAX_MOVES,
    root: str | os.PathLike | None = None,
    on_game: Callable[[int, int], None] | None = None,
) -> Any:
    """Play `games` games of `agent` (a spec) against `opponent` (a spec) and write them as the
    Minari data set `dataset_id` (``namespace/name-vN``); returns the ``MinariDataset``.

    Game i is reset with seed ``seed + i``, the recorded agent reseeded with it too, so a
    data set is reproducible. `on_game(done, total)` is called after each game.

    Raises:
        ValueError: a malformed id, seat, count, seed or max_moves; AgentSpecError (a
            ValueError) for a bad spec.
        DatasetExistsError: a data set with this id is already there.
    """
    import minari

    if not isinstance(seat, str) or seat not in SEATS:
        raise ValueError(f"seat must be one of {', '.join(SEATS)}, got {quoted(seat)}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {quoted(games)}")
    checked = check_seed(seed)
    if checked is None:
        raise ValueError("seed must be an integer (a data set is reproducible)")
    seed = checked
    max_moves = check_max_moves(max_moves)
    recorded = make_agent(agent, seed)  # AgentSpecError before anything is written
    make_agent(opponent)  # likewise for the opponent, which the env builds from its spec

    where = check_new_dataset(dataset_id, root)
    with datasets_root(root), warnings.catch_warnings():
        # Minari asks for a code permalink, an author and an e-mail; a data set made here has
        # its agents and seed in the metadata instead
        warnings.filterwarnings("ignore", r"`(code_permalink|author|author_email)` is set to None")
        env = gymnasium.make(ENV_ID, opponent=opponent, agent_color="red", max_moves=max_moves)
        satellites = env.unwrapped
        dataset = None
        try:
            chunk: list[EpisodeBuffer] = []
            for i in range(games):
                color = seat if seat != "both" else ("red", "blue")[i % 2]
                chunk.append(_play_episode(env, satellites, recorded, color, seed + i, i))
                if on_game is not None:
                    on_game(i + 1, games)
                if len(chunk) == CHUNK_GAMES or i == games - 1:
                    if dataset is None:
                        dataset = minari.create_dataset_from_buffers(
                            dataset_id=dataset_id,
                            buffer=chunk,
                            env=env,
                            eval_env=env.spec,
                            algorithm_name=agent,
                            ref_min_score=-1.0,
                            ref_max_score=1.0,
                            description=(
                                f"Satellites games of {agent} ({seat}) against {opponent}, "
                                f"recorded through {ENV_ID} by `satellites dataset`."
                            ),
                            data_format="arrow",
                            requirements=["satellites-env"],
                        )
                    else:
                        dataset.storage.update_episodes(chunk)
                    chunk = []
        except BaseException:
            if dataset is not None:  # the partial data set this call made, and only it
                shutil.rmtree(where, ignore_errors=True)
            raise
        finally:
            env.close()
        assert dataset is not None
        dataset.storage.update_metadata(
            {
                "satellites_agent": agent,
                "satellites_opponent": opponent,
                "satellites_seat": seat,
                "satellites_games": games,
                "satellites_seed": seed,
                "satellites_max_moves": max_moves,
            }
        )
        return minari.load_dataset(dataset_id)


def _play_episode(
    env: gymnasium.Env, satellites: Any, recorded: Agent, color: str, seed: int, index: int
) -> EpisodeBuffer:
    """One game of `recorded` as `color`, as a Minari episode buffer."""
    from minari.data_collector import EpisodeBuffer

    satellites.agent_color = color
    recorded.reset(seed)
    observation, _ = env.reset(seed=seed)
    observations = [observation]
    actions: list[int] = []
    rewards: list[float] = []
    terminations: list[bool] = []
    truncations: list[bool] = []
    done = False
    while not done:
        action = int(recorded.act(satellites.game))
        observation, reward, terminated, truncated, _ = env.step(action)
        observations.append(observation)
        actions.append(action)
        rewards.append(float(reward))
        terminations.append(bool(terminated))
        truncations.append(bool(truncated))
        done = terminated or truncated
    return EpisodeBuffer(
        id=index,
        seed=seed,
        observations={key: np.stack([o[key] for o in observations]) for key in observations[0]},
        actions=np.asarray(actions, dtype=np.int64),
        rewards=rewards,
        terminations=terminations,
        truncations=truncations,
        infos={},
    )
