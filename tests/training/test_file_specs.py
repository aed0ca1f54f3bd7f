"""Nothing a file names runs, and a run's networks are pinned by content (issue 58).

A config (`eval.opponents`, `eval.final`, `search.opponent`, an exploit config) builds only
the agent kinds that load data; `--allow-pickle` is the only way in for the others, and a
spec the user types (`exploit --target`) is theirs. The `checkpoint:` and `az:` files a run
names are pinned by their sha256: a changed one is refused on `--resume`, naming it."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch
import yaml
from test_checkpoint_safety import CreatesAFile, net_payload
from test_run_guarantees import FAST_EVAL, fast_config
from test_training import TINY

from satellites_env import agents
from satellites_env.cli import main
from training.common.checkpoint import save_checkpoint
from training.common.config import SHIPPED, ConfigError, load_config
from training.common.run_folder import RunError
from training.exploit import exploit_config
from training.ppo.trainer import PPOTrainer


def pickled_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder an `rllib:` spec would unpickle, holding a payload that creates `marker`."""
    folder, marker = tmp_path / "module", tmp_path / "ran"
    folder.mkdir()
    for name in ("module_state.pkl", "class_and_ctor_args.pkl", "metadata.json"):
        (folder / name).write_bytes(pickle.dumps(CreatesAFile(marker)))
    return folder, marker


def az_file(tmp_path: Path, **search) -> Path:
    data = yaml.safe_load((SHIPPED / "az_quick.yaml").read_text())
    data["search"] = {**data.get("search", {}), **search}
    path = tmp_path / "az.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_config_naming_a_pickle_is_refused_while_checked_and_nothing_runs(tmp_path, capsys):
    folder, marker = pickled_folder(tmp_path)
    path = az_file(tmp_path, opponent=f"rllib:{folder}")
    with pytest.raises(ConfigError, match=r"az\.yaml: search\.opponent: .*--allow-pickle"):
        load_config(path)
    assert main(["train", "--config", str(path), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--allow-pickle" in err and "search.opponent" in err
    assert not marker.exists() and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "key, value",
    [
        ("opponents", ["random", "plug:x"]),
        ("final", {"random": 2, "plug:x": 2}),
    ],
)
def test_eval_specs_of_other_kinds_need_allow_pickle(tmp_path, plugin, key, value):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**TINY, "eval": {**FAST_EVAL, key: value}}))
    with pytest.raises(ConfigError, match=rf"c\.yaml: eval\.{key}.*plug:x.*--allow-pickle"):
        load_config(path)
    assert plugin == []  # refused before it was built
    load_config(path, allow_pickle=True)  # the user's flag is the only way in
    assert plugin == ["x"]


def test_an_exploit_config_file_is_gated_and_the_typed_target_is_the_users(tmp_path, plugin):
    data = yaml.safe_load((SHIPPED / "exploit.yaml").read_text())
    data["eval"]["opponents"] = ["random", "plug:file"]
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"x\.yaml: eval\.opponents.*plug:file"):
        exploit_config("random", 1.0, path)
    assert plugin == []
    settings, _ = exploit_config("plug:typed", 1.0)  # --target: typed, so built
    assert settings.search.opponent == "plug:typed" and "typed" in plugin


def test_fine_tuning_is_checked_without_init(tmp_path):
    data = yaml.safe_load((SHIPPED / "exploit.yaml").read_text())
    data["fine_tuning"] = {"optim": {"learning_rate": -1.0}}
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"x\.yaml: fine_tuning: .*learning_rate"):
        exploit_config("random", 1.0, path)


def test_a_checkpoints_bad_search_settings_name_the_file(tmp_path):
    from training.agents import az_agent
    from training.common.checkpoint import CheckpointError

    path = save_checkpoint(
        tmp_path / "n.pt", {**net_payload(), "config": {"search": {"c_visit": -5.0}}}
    )
    with pytest.raises(CheckpointError, match=r"n\.pt.*search settings.*c_visit"):
        az_agent(str(path))


def test_a_run_pins_the_networks_it_names_and_refuses_a_changed_one(tmp_path):
    opponent = save_checkpoint(tmp_path / "opp.pt", net_payload())
    spec = f"checkpoint:{opponent}"
    config = fast_config(eval={**FAST_EVAL, "opponents": ["random", spec]})
    trainer = PPOTrainer(config, tmp_path / "run")
    trainer.save()
    assert trainer.files == {spec: agents.base.digest_of(opponent)}
    PPOTrainer(config, tmp_path / "run", resume=True)  # the same file: resumes
    changed = net_payload()
    changed["model"] = {k: v + 1 for k, v in changed["model"].items()}
    save_checkpoint(opponent, changed)
    with pytest.raises(RunError, match=rf"{spec}: '.*opp\.pt' is not the file this run began"):
        PPOTrainer(config, tmp_path / "run", resume=True)
    with pytest.raises(RunError, match="not the file this run began"):
        trainer.evaluate()  # and before each evaluation of the run under way


def test_a_checkpoint_with_a_bad_files_entry_is_refused(tmp_path):
    from training.common.checkpoint import CheckpointError, load_checkpoint

    trainer = PPOTrainer(fast_config(), tmp_path / "run")
    trainer.save()
    payload = load_checkpoint(trainer.checkpoint_path)
    payload["files"] = {"checkpoint:x": "not a digest"}
    torch.save(payload, trainer.checkpoint_path)
    with pytest.raises(CheckpointError, match="files"):
        PPOTrainer(fast_config(), tmp_path / "run", resume=True)


def test_a_resumed_config_compares_specs_by_their_canonical_spelling():
    from training.common.config import config_from_dict, differences

    def config(opponent: str, final: str):
        data = {"eval": {"opponents": ["random", opponent], "final": {final: 2}}}
        return config_from_dict(data, check_agents=False)

    assert differences(config("mcts:05", "mcts"), config("mcts:5", "mcts:200")) == {}
    assert differences(config("mcts:5", "mcts"), config("mcts:6", "mcts")) == {
        "eval.opponents": (["random", "mcts:5"], ["random", "mcts:6"])
    }
