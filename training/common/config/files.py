"""Config files: the shipped configs, what a `--config` value names, `satellites config`,
and `load_config`."""

from __future__ import annotations

import os
import typing
from pathlib import Path

from satellites_env.core.checks import quoted

from .schema import Config, ConfigError, clip, config_from_dict
from .yaml_reader import read_yaml

if typing.TYPE_CHECKING:
    from rich.console import Console

#: an exploiter config's section of settings that --init applies over the others (fine-tuning
#: a trained network); read by `satellites exploit`, never by the learner
FINE_TUNING = "fine_tuning"


def shipped_folder() -> Path:
    """The folder of the shipped configs: `training/configs/` in an installed wheel (package
    data), `configs/` at the top of a clone (and of its editable install)."""
    package = Path(__file__).resolve().parents[2]
    installed = package / "configs"
    if any(installed.glob("*.yaml")):
        return installed
    return package.parent / "configs"


#: the folder of the shipped configs (`satellites train --config NAME`)
SHIPPED = shipped_folder()
#: the endings that make a `--config` value a file
YAML_SUFFIXES = (".yaml", ".yml")


def shipped_configs() -> list[str]:
    """The names of the shipped configs (`quick`, `az_quick`, ...)."""
    return sorted(path.stem for path in SHIPPED.glob("*.yaml"))


def names_a_file(value: str) -> bool:
    """Whether a `--config` value names a file: it contains a path separator or ends in
    `.yaml` or `.yml`. Any other value is the name of a shipped config, whatever files the
    current folder holds."""
    separators = [sep for sep in (os.sep, os.altsep) if sep]
    return any(sep in value for sep in separators) or value.lower().endswith(YAML_SUFFIXES)


def config_path(name_or_path: str | Path) -> Path:
    """The file a `--config` value names. A `Path`, or a string that `names_a_file`, is that
    file; any other string is the name of a shipped config (`az_quick`).

    Raises:
        ConfigError: the value is empty, or names no shipped config.
    """
    if isinstance(name_or_path, Path):
        return name_or_path
    if not name_or_path:
        raise ConfigError(
            f"the config is empty: name a shipped config "
            f"({', '.join(shipped_configs())}) or a YAML file"
        )
    if names_a_file(name_or_path):
        return Path(name_or_path)
    if name_or_path in shipped_configs():
        return SHIPPED / f"{name_or_path}.yaml"
    raise ConfigError(
        f"{quoted(clip(name_or_path))} is not a shipped config (shipped: "
        f"{', '.join(shipped_configs())}); a config file is named by a path "
        f"with a / or ending in .yaml or .yml (./{clip(name_or_path)}.yaml)"
    )


def purpose(path: Path) -> str:
    """A config file's one-line purpose: its first line, when that is a comment."""
    with path.open(encoding="utf-8") as handle:
        first = handle.readline().strip()
    return first.lstrip("#").strip() if first.startswith("#") else ""


def config_command(action: str, name: str | None, console: Console) -> None:
    """`satellites config list` (each shipped config with its purpose) and `satellites config
    show NAME` (the shipped file, to copy and edit).

    Raises:
        ConfigError: `name` is no shipped config.
    """
    if action == "list":
        names = shipped_configs()
        width = max(map(len, names))
        for name in names:
            console.print(
                f"{name:<{width}}  {purpose(SHIPPED / f'{name}.yaml')}",
                markup=False,
                highlight=False,
            )
        return
    if name not in shipped_configs():
        raise ConfigError(
            f"{quoted(clip(name or ''))} is not a shipped config (shipped: "
            f"{', '.join(shipped_configs())})"
        )
    text = (SHIPPED / f"{name}.yaml").read_text(encoding="utf-8")
    console.file.write(text)
    console.file.flush()


def load_config(
    name_or_path: str | Path, check_agents: bool = True, allow_pickle: bool = False
) -> Config:
    """The checked config in a YAML file (or a shipped one, by name), read once; every error
    names the file and the key. An agent spec that may unpickle is refused unless
    `allow_pickle` (`--allow-pickle`)."""
    path = config_path(name_or_path)
    data = read_yaml(path)
    if isinstance(data, dict) and FINE_TUNING in data:
        raise ConfigError(
            f"{path} is an exploiter's config (it has {FINE_TUNING}:): train it with "
            f"satellites exploit --target SPEC --config {name_or_path}"
        )
    try:
        return config_from_dict(data, check_agents, allow_pickle)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
