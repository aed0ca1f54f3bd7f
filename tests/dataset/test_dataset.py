"""`satellites dataset`: games of an agent as a Minari data set, loadable with Minari's API."""

from __future__ import annotations

import os

import minari
import numpy as np
import pytest

from satellites_env.cli import main
from satellites_env.dataset import DatasetExistsError, datasets_root, record_dataset
from satellites_env.observation import PLANE_INDEX


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasets")
    dataset = record_dataset(
        "satellites/greedy-v0", "greedy", "random", 4, seat="both", seed=3, root=root
    )
    return root, dataset


def test_the_data_set_holds_every_game_with_masks_actions_and_rewards(recorded):
    _, dataset = recorded
    assert dataset.total_episodes == 4
    for i, episode in enumerate(dataset.iterate_episodes()):
        planes = episode.observations["observation"]
        masks = episode.observations["action_mask"]
        assert planes.shape == (len(episode.actions) + 1, 10, 10, 22)
        assert masks.shape == (len(episode.actions) + 1, 3217)
        # every recorded action is legal under the mask the agent saw
        assert masks[np.arange(len(episode.actions)), episode.actions].all()
        assert not masks[-1].any()  # the game is over: no legal action
        assert episode.rewards[-1] in (-1.0, 0.0, 1.0) and not episode.rewards[:-1].any()
        assert episode.terminations[-1] or episode.truncations[-1]
        # seat "both": the recorded agent is red in even games, blue in odd ones
        is_red = planes[0, 0, 0, PLANE_INDEX["is_red"]]
        assert is_red == (1.0 if i % 2 == 0 else 0.0)


def test_the_metadata_names_the_agents(recorded):
    root, dataset = recorded
    metadata = dataset.storage.metadata
    assert metadata["algorithm_name"] == "greedy"
    assert metadata["satellites_agent"] == "greedy"
    assert metadata["satellites_opponent"] == "random"
    assert metadata["satellites_seat"] == "both"
    assert metadata["satellites_games"] == 4 and metadata["satellites_seed"] == 3
    with datasets_root(root):
        assert minari.load_dataset("satellites/greedy-v0").total_episodes == 4


def test_minaris_folder_variable_is_restored_after_a_call(recorded, monkeypatch, tmp_path):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "elsewhere"))
    with datasets_root(recorded[0]):
        assert os.environ["MINARI_DATASETS_PATH"] == str(recorded[0].resolve())
    assert os.environ["MINARI_DATASETS_PATH"] == str(tmp_path / "elsewhere")


def test_an_existing_data_set_is_never_overwritten(recorded):
    root, _ = recorded
    before = sorted(p.name for p in (root / "satellites" / "greedy-v0").rglob("*"))
    with pytest.raises(DatasetExistsError, match="already exists"):
        record_dataset("satellites/greedy-v0", "random", "random", 1, root=root)
    assert sorted(p.name for p in (root / "satellites" / "greedy-v0").rglob("*")) == before


def test_the_same_seed_records_the_same_games(tmp_path):
    one, two = (
        record_dataset(name, "random", "greedy", 2, seat="blue", seed=9, root=tmp_path)
        for name in ("satellites/one-v0", "satellites/two-v0")
    )
    for first, second in zip(one.iterate_episodes(), two.iterate_episodes(), strict=True):
        assert np.array_equal(first.actions, second.actions)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"dataset_id": "no version"}, "Malformed dataset ID"),
        ({"seat": "green"}, "seat"),
        ({"games": 0}, "games"),
        ({"agent": "nonsense"}, "unknown agent spec"),
        ({"opponent": "mcts:0"}, "mcts"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_written(tmp_path, arguments, message):
    call = {"dataset_id": "satellites/x-v0", "agent": "random", "opponent": "random", "games": 1}
    with pytest.raises(ValueError, match=message):
        record_dataset(**{**call, **arguments}, root=tmp_path)
    assert not (tmp_path / "satellites").exists()


def test_the_command_writes_a_data_set_and_refuses_to_overwrite_it(tmp_path, capsys):
    argv = ["dataset", "satellites/cli-v0", "--agent", "greedy", "--games", "2"]
    argv += ["--max-moves", "60", "--root", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Minari data set satellites/cli-v0" in out and "2/2" in out
    with datasets_root(tmp_path):
        assert minari.load_dataset("satellites/cli-v0").total_episodes == 2
    assert main(argv) == 2
    assert "already exists" in capsys.readouterr().err
