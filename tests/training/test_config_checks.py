"""Run configs are checked before anything runs: every bad file or value is a ConfigError that
names the file and the key; numbers are read as users mean them."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from training.common.checkpoint import save_checkpoint
from training.common.config import SHIPPED as CONFIGS
from training.common.config import ConfigError, config_from_dict, load_config, parse_yaml
from training.common.network import PolicyValueNet
from training.ppo.config import PPOConfig


def write(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        ("ppo:\n  learning_rate: 0\n", r"x.yaml: ppo.learning_rate must be in \(0, 1\], got 0"),
        ("ppo:\n  gamma: -2.0\n", r"x.yaml: ppo.gamma must be in \[0, 1\], got -2"),
        ("ppo:\n  clip: -0.2\n", r"x.yaml: ppo.clip must be in \(0, 1\), got -0.2"),
        ("ppo:\n  learning_rate: .inf\n", "ppo.learning_rate must be a finite number, got inf"),
        ("ppo:\n  learning_rate: .nan\n", "ppo.learning_rate must be a finite number, got nan"),
        ("ppo:\n  gae_lambda: 1.5\n", r"ppo.gae_lambda must be in \[0, 1\]"),
        ("ppo:\n  max_grad_norm: 0\n", r"ppo.max_grad_norm must be in \(0, "),
        ("ppo:\n  entropy_coef: -0.01\n", r"ppo.entropy_coef must be in \[0, "),
        ("ppo:\n  minibatch: 0\n", r"ppo.minibatch must be in \[1, 65536\], got 0"),
        ("selfplay:\n  shaping: -1\n", r"selfplay.shaping must be in \[0, "),
        ("selfplay:\n  envs: 100000000\n", r"selfplay.envs must be in \[1, 4096\], got 100000000"),
        ("ppo:\n  epochs: 1e12\n", r"ppo.epochs must be in \[1, 100\]"),
        ("total_steps: 1e300\n", r"total_steps must be an integer|total_steps must be in"),
        ("selfplay:\n  pool_fraction: 0.7\n  baseline_fraction: 0.7\n", "must be <= 1"),
        ("model:\n  channels: 12\n", "model.channels must be a multiple of 8"),
        ("model:\n  lookahead: -.inf\n", "model.lookahead must be a finite number"),
        ("seed: -1\n", r"seed must be in \[0, 4294967295\]"),
        ("selfplay:\n  envs: 2.5e0\n", "x.yaml: selfplay.envs must be an integer, got 2.5"),
        ("eval:\n  opponents: []\n", "eval.opponents must name at least one"),
        ("eval:\n  opponents: [random, random]\n", "lists an opponent twice"),
        ("threads: true\n", "threads must be an integer"),
    ],
)
def test_bad_values_are_refused_naming_file_and_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_numbers_are_read_as_users_mean_them(tmp_path):
    config = load_config(
        write(
            tmp_path,
            "total_steps: 2e5\nppo:\n  learning_rate: 5e-4\n  value_coef: 1e0\n  clip: .2\n",
        )
    )
    assert config.ppo.learning_rate == 5e-4 and isinstance(config.ppo.learning_rate, float)
    assert config.total_steps == 200_000 and type(config.total_steps) is int
    assert config.ppo.value_coef == 1.0 and config.ppo.clip == 0.2
    assert parse_yaml("a: 1e3\nb: '5e-4'\nc: 7") == {"a": 1000.0, "b": "5e-4", "c": 7}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is empty"),
        ("# only a comment\n\n", "is empty"),
        ("seed: 1\nseed: 2\n", "duplicate key 'seed'"),
        ("ppo:\n  clip: 0.1\n  epochs: 2\n  clip: 0.3\n", "duplicate key 'clip'"),
        ("model: [unclosed\n", "not valid YAML"),
        ("seed: 2001-02-30\n", "seed must be an integer, got '2001-02-30'"),  # YAML 1.2: a string
        ("- 1\n- 2\n", "the config must be a mapping, got list"),
        ("1: 2\n", "unknown config key 1"),
        ("seed: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
    ],
)
def test_bad_files_are_refused(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_a_directory_or_binary_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00seed: 1")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(binary)


def test_agent_specs_and_checkpoint_paths_are_checked_before_training(tmp_path):
    with pytest.raises(ConfigError, match=r"eval.opponents\[1\]: unknown agent spec 'greedie'"):
        load_config(write(tmp_path, "eval:\n  opponents: [random, greedie]\n"))
    with pytest.raises(ConfigError, match=r"selfplay.baseline_opponent: .*mcts:0"):
        load_config(write(tmp_path, "selfplay:\n  baseline_opponent: 'mcts:0'\n"))
    missing = tmp_path / "missing.pt"
    with pytest.raises(ConfigError, match=r"x.yaml: eval.opponents\[0\]: .*does not exist"):
        load_config(write(tmp_path, f"eval:\n  opponents: ['checkpoint:{missing}']\n"))
    net = PolicyValueNet(8, 1)
    good = save_checkpoint(
        tmp_path / "good.pt", {"model": net.state_dict(), "model_shape": net.shape}
    )
    config = load_config(write(tmp_path, f"eval:\n  opponents: ['checkpoint:{good}', 'mcts:20']\n"))
    assert config.eval.opponents == [f"checkpoint:{good}", "mcts:20"]


@pytest.mark.parametrize("name", ["quick.yaml", "standard.yaml"])
def test_shipped_configs_pass_every_check(name):
    assert isinstance(load_config(CONFIGS / name), PPOConfig)


# --------------------------------------------------------------------------- fuzzing

SCHEMA = {key: value for key, value in PPOConfig().to_dict().items()}
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "random",
            "greedy",
            "mcts:5",
            "mcts:x",
            "checkpoint:",
            "checkpoint:/",
            "checkpoint:nothing.pt",
            "5e-4",
            ".inf",
        ]
    ),
)
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _section(name: str, default):
    """Mostly real keys of the schema (so values reach the range checks), some unknown."""
    if isinstance(default, dict):
        keys = st.sampled_from(sorted(default)) | st.text(max_size=8)
        return st.dictionaries(keys, anything, max_size=4) | anything
    return anything


configs = st.fixed_dictionaries(
    {}, optional={name: _section(name, default) for name, default in SCHEMA.items()}
)
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(configs)
def test_fuzz_config_mappings_raise_only_config_errors(data):
    try:
        config = config_from_dict(data)
    except ConfigError:
        return
    assert isinstance(config, PPOConfig)


def _load_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_text(text)
        try:
            load_config(path)
        except ConfigError:
            pass


@FUZZ
@given(configs)
def test_fuzz_config_files_raise_only_config_errors(data):
    _load_text(yaml.safe_dump(data, allow_unicode=True))


yaml_bits = st.sampled_from(
    [
        "seed",
        "ppo",
        "model",
        ":",
        " ",
        "  ",
        "\n",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        '"',
        "&a ",
        "*a",
        "!!float ",
        "!!python/name:os ",
        "<<: ",
        "5e-4",
        ".nan",
        "2001-02-30",
        "#",
        "? ",
        "|",
        ">",
        "%YAML",
    ]
)


@FUZZ
@given(st.one_of(st.text(max_size=200), st.lists(yaml_bits, max_size=40).map("".join)))
def test_fuzz_garbage_text_raises_only_config_errors(text):
    _load_text(text)


@pytest.mark.parametrize(
    "text, where",
    [
        ("seed: 1\nseed: 2\n", "line 2, column 1: found duplicate key 'seed'"),
        ("model:\n\tchannels: 8\n", "line 2, column 1: found character"),
        (
            "seed: !!python/object/apply:os.system ['true']\n",
            "line 1, column 7: could not determine",
        ),
        ("? [1, 2]\n: 3\n", "found unhashable key"),
    ],
)
def test_yaml_errors_are_one_line_naming_the_file_and_line(tmp_path, text, where):
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path, text))
    message = str(error.value)
    assert "\n" not in message and "x.yaml" in message and where in message, message


def test_an_alias_bomb_is_refused_at_once(tmp_path):
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for k, name in enumerate("bcdefgh"):
        prev = "abcdefg"[k]
        levels.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    text = "\n".join(levels) + "\neval: {opponents: *h}\nlearner: alphazero\n"
    with pytest.raises(ConfigError, match="more than 100,000 values with its aliases expanded"):
        parse_yaml(text)  # refused as it is read, before anything walks it
    bomb: list = ["x"] * 9
    for _ in range(7):  # the same shared structure built in Python: the checks stay quick
        bomb = [bomb] * 9
    with pytest.raises(ConfigError, match=r"eval.opponents must be a list of str"):
        config_from_dict({"eval": {"opponents": bomb}})
