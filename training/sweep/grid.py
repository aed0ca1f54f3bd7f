"""What a sweep command asks for: the arms (a grid of `--set` values over the base
config), the seeds, the budget and the evaluation, checked before anything runs."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import re
from typing import Any

from ..common.config import (
    Config,
    ConfigError,
    load_config,
    parse_yaml,
)

#: the file that marks a folder as a sweep's, and its format
SWEEP_MARKER = "satellites-sweep.json"
SWEEP_FORMAT = {"format": "satellites-sweep", "version": 1}
#: the files the sweep writes at its top (beside trials/, results/ and Ray Tune's tune/)
OUTPUT_FILES = (SWEEP_MARKER, "sweep.json", "sweep.png")
#: the evaluation seed of every trial's games unless --eval-seed says otherwise
EVAL_SEED = 1_000_000
#: the player of the evaluation games unless --player says otherwise
DEFAULT_PLAYER = "az:PATH:32"
#: the opponents (spec -> games) unless --against says otherwise
DEFAULT_AGAINST = {"greedy": 200}
#: keys the sweep sets itself
RESERVED = ("seed", "minutes", "cpu_minutes")


class SweepError(ValueError):
    """A sweep that cannot run as asked (a bad option, a folder that is not a sweep's, a
    command that differs from the folder's)."""


# --------------------------------------------------------------------------- the command


def split_values(text: str) -> list[str]:
    """`4,6` -> ["4", "6"]; commas inside brackets or braces stay (`[random,greedy],[greedy]`
    is two values)."""
    values, depth, current = [], 0, ""
    for char in text:
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        if char == "," and depth == 0:
            values.append(current)
            current = ""
        else:
            current += char
    values.append(current)
    return [value.strip() for value in values]


def parse_set(text: str) -> tuple[str, list[Any]]:
    """`replay.replay_ratio=4,6` -> ("replay.replay_ratio", [4, 6]); each value read as a
    config file reads it (YAML 1.2)."""
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise SweepError(f"--set expects KEY=VALUE[,VALUE...], got {text!r}")
    parsed = []
    for value in split_values(values):
        if not value:
            raise SweepError(f"--set {key}: an empty value in {values!r}")
        try:
            parsed.append(parse_yaml(value, f"--set {key}"))
        except ConfigError as error:
            raise SweepError(str(error)) from None
    if len({json.dumps(v, sort_keys=True) for v in parsed}) != len(parsed):
        raise SweepError(f"--set {key} lists a value twice: {values!r}")
    return key, parsed


def parse_seeds(text: str | list[str]) -> list[int]:
    """`0-4` -> [0, 1, 2, 3, 4]; `0,3,7` or several words -> those seeds (distinct, in
    order)."""
    words = text if isinstance(text, list) else [text]
    seeds: list[int] = []
    for part in (p.strip() for word in words for p in word.split(",")):
        match = re.fullmatch(r"(\d{1,10})(?:-(\d{1,10}))?", part)
        if not match:
            raise SweepError(f"--seeds expects seeds such as 0-4 or 0,1,2, got {part!r}")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) else low
        if high < low or high >= 2**32 or high - low >= 10_000:
            raise SweepError(f"--seeds: {part!r} is not a range of at most 10,000 seeds")
        seeds += range(low, high + 1)
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"--seeds lists a seed twice: {seeds}")
    return seeds


def parse_against(items: list[str] | None) -> dict[str, int]:
    """`["greedy=200", "mcts:200=50"]` -> {"greedy": 200, "mcts:200": 50}."""
    if not items:
        return dict(DEFAULT_AGAINST)
    against: dict[str, int] = {}
    for item in items:
        spec, sep, games = item.rpartition("=")
        if not sep or not spec or not re.fullmatch(r"\d{1,7}", games) or int(games) < 1:
            raise SweepError(f"--against expects SPEC=GAMES (games >= 1), got {item!r}")
        if spec in against:
            raise SweepError(f"--against names {spec!r} twice")
        against[spec] = int(games)
    return against


@dataclasses.dataclass(frozen=True)
class Arm:
    """One variant of the base config: its overrides (dotted key -> value) and its name."""

    index: int
    overrides: tuple[tuple[str, Any], ...]

    @property
    def name(self) -> str:
        return ", ".join(f"{k}={json.dumps(v)}" for k, v in self.overrides) or "base"


@dataclasses.dataclass
class Sweep:
    """What a sweep command asks for, checked; `command()` is what the folder records."""

    config: str
    base: Config
    sets: list[tuple[str, list[Any]]]
    seeds: list[int]
    positions: int | None
    cpu_minutes: float | None
    player: str
    against: dict[str, int]
    eval_seed: int
    max_moves: int

    @property
    def arms(self) -> list[Arm]:
        keys = [key for key, _ in self.sets]
        grid = itertools.product(*(values for _, values in self.sets))
        return [Arm(k, tuple(zip(keys, values, strict=True))) for k, values in enumerate(grid)]

    def trials(self) -> list[tuple[Arm, int]]:
        """Every (arm, seed), seed by seed: a sweep stopped part way has every arm of the
        seeds it finished, which pair."""
        return [(arm, seed) for seed in self.seeds for arm in self.arms]

    def command(self) -> dict[str, Any]:
        return {
            "config": self.base.to_dict(),
            "set": [[key, values] for key, values in self.sets],
            "seeds": self.seeds,
            "budget": (
                {"positions": self.positions}
                if self.positions is not None
                else {"cpu_minutes": self.cpu_minutes}
            ),
            "player": self.player,
            "against": self.against,
            "eval_seed": self.eval_seed,
            "max_moves": self.max_moves,
        }

    def trial_config(self, arm: Arm, seed: int) -> Config:
        """The checked config of one trial: the base with the arm's overrides, the seed, the
        budget, and no final table of its own."""
        data = copy.deepcopy(self.base.to_dict())
        for key, value in arm.overrides:
            _assign(data, key, value)
        data["seed"] = seed
        data["minutes"] = 0.0
        if self.positions is not None:
            data[self.base.TOTAL], data["cpu_minutes"] = self.positions, 0.0
        else:
            data[self.base.TOTAL] = _highest(type(self.base), self.base.TOTAL)
            data["cpu_minutes"] = self.cpu_minutes
        for key in self.base.FINAL_TABLES:  # the sweep plays its own final games instead
            data["eval"][key] = dict.fromkeys(data["eval"][key], 0)
        try:
            return type(self.base).from_dict(data, check_agents=False)
        except ConfigError as error:
            raise SweepError(f"arm {arm.name}: {error}") from None


def _assign(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    for part in parts[:-1]:
        data = data[part]
    data[parts[-1]] = value


def _highest(cls: type[Config], key: str) -> int:
    field = next(f for f in dataclasses.fields(cls) if f.name == key)
    return int(field.metadata["high"])


def check_key(base: Config, key: str) -> None:
    """SweepError unless `key` names a setting of the base config (or an entry of one of its
    mappings, such as `eval.final.greedy`) that the sweep does not set itself."""
    if key in RESERVED or key == base.TOTAL:
        raise SweepError(
            f"--set {key}: the sweep sets {key} itself (--seeds, --positions, --cpu-minutes)"
        )
    value: Any = base
    parts = key.split(".")
    for k, part in enumerate(parts):
        if dataclasses.is_dataclass(value):
            if part not in {f.name for f in dataclasses.fields(value)}:
                known = ", ".join(sorted(f.name for f in dataclasses.fields(value)))
                where = ".".join(parts[:k]) or "the config"
                raise SweepError(f"--set {key}: no key {part!r} in {where} (known: {known})")
            value = getattr(value, part)
        elif isinstance(value, dict) and k == len(parts) - 1:
            return
        else:
            raise SweepError(f"--set {key}: {'.'.join(parts[:k])} is not a section")
    if dataclasses.is_dataclass(value):
        raise SweepError(f"--set {key} names a section; set one of its keys")


def parse_player(spec: str, learner: str) -> int | None:
    """The search simulations of `az:PATH:N`, or None for `checkpoint:PATH` (the raw
    policy); PATH stands for each trial's final network."""
    if spec == "checkpoint:PATH":
        return None
    match = re.fullmatch(r"az:PATH:(\d{1,4})", spec)
    if match and 1 <= int(match.group(1)) <= 1024 and learner == "alphazero":
        return int(match.group(1))
    raise SweepError(
        f"--player expects checkpoint:PATH (the raw policy) or, for an AlphaZero config, "
        f"az:PATH:N with N from 1 to 1024 (PATH: each trial's final network), got {spec!r}"
    )


def make_sweep(
    config: str,
    sets: list[str],
    seeds: str | list[str],
    positions: int | None,
    cpu_minutes: float | None,
    player: str = DEFAULT_PLAYER,
    against: list[str] | None = None,
    eval_seed: int = EVAL_SEED,
    max_moves: int = 400,
) -> Sweep:
    """A checked sweep: every arm's config built and checked, the opponents built once."""
    from satellites_env.agents import make_agent

    if (positions is None) == (cpu_minutes is None):
        raise SweepError("give the trials' budget: --positions N or --cpu-minutes M (one)")
    base = load_config(config)
    parsed = [parse_set(text) for text in sets]
    keys = [key for key, _ in parsed]
    if len(set(keys)) != len(keys):
        raise SweepError(f"--set names a key twice: {keys}")
    for key in keys:
        check_key(base, key)
    parse_player(player, base.learner)
    opponents = parse_against(against)
    for spec in opponents:
        try:
            make_agent(spec, seed=0)
        except ValueError as error:
            raise SweepError(f"--against {spec}: {error}") from None
    sweep = Sweep(
        str(config),
        base,
        parsed,
        parse_seeds(seeds),
        positions,
        cpu_minutes,
        player,
        opponents,
        eval_seed,
        max_moves,
    )
    if len(sweep.arms) * len(sweep.seeds) > 10_000:
        raise SweepError(f"{len(sweep.arms)} arms x {len(sweep.seeds)} seeds: too many trials")
    for arm in sweep.arms:
        sweep.trial_config(arm, sweep.seeds[0])  # a bad value: said before anything runs
    return sweep
