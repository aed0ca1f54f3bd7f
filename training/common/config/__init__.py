"""The one config system of both learners: typed dataclasses read from YAML, every key
documented, everything checked before anything runs.

A learner's config is a [`Config`][training.common.config.Config] subclass
(``training/ppo/config.py``, ``training/alphazero/config.py``) whose sections are dataclasses of
[`setting`][training.common.config.setting] fields: each field carries its default, its bounds and
one line of documentation, so the checks, the reference page (``docs/configs.md``, written by
``python -m training.common.config``) and the defaults come from one place. Every problem is a
[`ConfigError`][training.common.config.ConfigError] naming the key (and, read from a file, the
file): an unknown or duplicate key, a section that is not a mapping, a value of the wrong type, a
number out of its range (NaN and infinities included; every number has a ceiling the code can
honour), an agent spec that names no agent, or a `checkpoint:PATH` opponent that does not exist or
does not load.

Numbers are read as YAML 1.2 reads them (`parse_yaml`): `5e-4` and `1e3` are floats and
`1:30`, `0x10` and `yes` are strings, not YAML 1.1's 90, 16 and true; an int key accepts a
float with an integral value (`total_steps: 2e5`). A `--config` value names a file when it
contains a path separator or ends in `.yaml` or `.yml`, and a shipped config otherwise
(`config_path`).
"""

from .files import (
    FINE_TUNING,
    SHIPPED,
    YAML_SUFFIXES,
    config_command,
    config_path,
    load_config,
    names_a_file,
    purpose,
    shipped_configs,
    shipped_folder,
)
from .reference import reference
from .schema import (
    BACKENDS,
    MAX_MOVES,
    NORMS,
    Config,
    ConfigError,
    DistributedConfig,
    EvalConfig,
    NetworkSettings,
    build,
    check_agents_of,
    config_from_dict,
    describe_range,
    differences,
    flatten,
    section,
    setting,
)
from .yaml_reader import MAX_CONFIG_BYTES, MAX_CONFIG_NODES, parse_yaml, read_yaml

__all__ = [
    "BACKENDS",
    "FINE_TUNING",
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_NODES",
    "MAX_MOVES",
    "NORMS",
    "SHIPPED",
    "YAML_SUFFIXES",
    "Config",
    "ConfigError",
    "DistributedConfig",
    "EvalConfig",
    "NetworkSettings",
    "build",
    "check_agents_of",
    "config_command",
    "config_from_dict",
    "config_path",
    "describe_range",
    "differences",
    "flatten",
    "load_config",
    "names_a_file",
    "parse_yaml",
    "purpose",
    "read_yaml",
    "reference",
    "section",
    "setting",
    "shipped_configs",
    "shipped_folder",
]
