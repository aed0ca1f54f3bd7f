"""Checkpoints (atomic save, checked load) and the `checkpoint:PATH` agent.

A checkpoint is one `torch.save` file holding the network weights and shape, the optimizer,
the run config, the step counters, the RNG states, the opponent pool and the evaluation
history: everything to resume a run exactly, and to play with the policy.

A checkpoint holds data only: dicts, lists, tuples, str, int, float, bool, None and tensors
(RNG states are tensors or plain ints). It is read with `torch.load(weights_only=True)`,
which refuses anything else, so opening a checkpoint never runs code from it (a pickle with
a `__reduce__` payload is a CheckpointError, and its payload does not run). Every field the
loader uses is checked for type and range: a damaged or hand-edited file is a
CheckpointError naming the field, never a traceback from deep inside torch.
"""

from __future__ import annotations

import math
import os
import pickle
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from satellites_env.agents.base import Agent
from satellites_env.core.board import N_ACTIONS
from satellites_env.core.game import Game
from satellites_env.core.rules import new_scratch
from satellites_env.observation import N_PLANES, observe

from .config import NORMS
from .features import LookaheadFeatures
from .network import PolicyValueNet, sample_masked

FORMAT = "satellites-checkpoint"
VERSION = 1
#: environment variable: torch threads of a `checkpoint:PATH` agent (default 1)
THREADS_VARIABLE = "SATELLITES_TORCH_THREADS"
#: bounds on a checkpoint's network shape (the config allows no more)
MAX_CHANNELS = 1024
MAX_BLOCKS = 64


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, unsafe or does not match this code."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write atomically: a crash mid-write leaves the previous checkpoint intact."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "version": VERSION, "planes": N_PLANES, "actions": N_ACTIONS,
               **payload}
    temporary = path.with_name(path.name + ".tmp")
    torch.save(payload, temporary)
    os.replace(temporary, path)
    return path


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a checkpoint; every failure is a CheckpointError naming the problem.

    Only data is read (`weights_only=True`): a file that would need to import or call
    anything to unpickle is refused before any of it runs.
    """
    path = Path(path)
    name = repr(str(path))
    if path.is_dir():
        raise CheckpointError(f"checkpoint {name} is a directory, not a checkpoint file")
    if not path.exists():
        raise CheckpointError(f"checkpoint {name} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {name} is not a regular file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's notes on pickle protocols
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        detail = [line.strip() for line in str(error).splitlines() if line.strip() and not
                  line.startswith(("Weights only load failed", "Please file", "Check the doc"))]
        raise CheckpointError(
            f"checkpoint {name} is refused: a checkpoint may hold only tensors and plain data, "
            f"and this file is corrupt or would import or run code when loaded "
            f"({' '.join(detail)[:200] or 'unpickling failed'})") from None
    except Exception as error:  # noqa: BLE001 - any other decoding failure means a bad file
        detail = str(error).strip().splitlines()
        raise CheckpointError(f"checkpoint {name} is corrupt or not a torch file: "
                              f"{(detail[0] if detail else type(error).__name__)[:200]}") from None
    if not isinstance(payload, dict) or not _equal(payload.get("format"), FORMAT):
        raise CheckpointError(f"{name} is not a satellites checkpoint (no "
                              f"format={FORMAT!r} entry)")
    if not _equal(payload.get("version"), VERSION):
        raise CheckpointError(f"checkpoint {name} has format version "
                              f"{payload.get('version')!r}; this code reads version {VERSION}")
    if not (_equal(payload.get("planes"), N_PLANES) and _equal(payload.get("actions"), N_ACTIONS)):
        raise CheckpointError(
            f"checkpoint {name} was made for {payload.get('planes')!r} observation planes "
            f"and {payload.get('actions')!r} actions; this code has {N_PLANES} and {N_ACTIONS}")
    for key in ("model", "model_shape"):
        if key not in payload:
            raise CheckpointError(f"checkpoint {name} has no {key!r} entry")
    check_shape(payload["model_shape"], path)
    check_weights(payload["model"], path, "model")
    return payload


def _equal(value: Any, expected: str | int) -> bool:
    """`value == expected` for a value of exactly the expected type (never a tensor compare)."""
    return type(value) is type(expected) and value == expected


def check_shape(shape: Any, path: str | Path = "?") -> dict:
    """A `model_shape` entry with the right keys, types and ranges, or a CheckpointError."""
    where = f"checkpoint {str(path)!r}: model_shape"
    if not isinstance(shape, dict) or set(shape) - {"channels", "blocks", "lookahead",
                                                     "ownership", "landing_values", "max_pool",
                                                     "norm", "global_pool"}:
        raise CheckpointError(f"{where} must be a mapping of channels, blocks, lookahead, "
                              f"ownership, landing_values, max_pool, norm and global_pool, "
                              f"got {shape!r}")
    flags = {key: shape.get(key, False)
             for key in ("ownership", "landing_values", "max_pool", "global_pool")}
    for key, flag in flags.items():
        if type(flag) is not bool:
            raise CheckpointError(f"{where}.{key} must be true or false, got {flag!r}")
    norm = shape.get("norm", "group")
    if not (type(norm) is str and norm in NORMS):
        raise CheckpointError(f"{where}.norm must be one of {', '.join(NORMS)}, got {norm!r}")
    channels, blocks = shape.get("channels"), shape.get("blocks")
    lookahead = shape.get("lookahead", 0.0)
    for key, value in (("channels", channels), ("blocks", blocks)):
        if type(value) is not int:
            raise CheckpointError(f"{where}.{key} must be an int, got {value!r}")
    if not (8 <= channels <= MAX_CHANNELS and channels % 8 == 0):
        raise CheckpointError(f"{where}.channels must be a multiple of 8 in [8, {MAX_CHANNELS}],"
                              f" got {channels}")
    if not 1 <= blocks <= MAX_BLOCKS:
        raise CheckpointError(f"{where}.blocks must be in [1, {MAX_BLOCKS}], got {blocks}")
    if type(lookahead) not in (int, float) or not math.isfinite(lookahead) or lookahead < 0:
        raise CheckpointError(f"{where}.lookahead must be a finite number >= 0, "
                              f"got {lookahead!r}")
    checked = {"channels": channels, "blocks": blocks, "lookahead": float(lookahead), **flags}
    if norm != "group":
        checked["norm"] = norm
    return checked


def check_weights(weights: Any, path: str | Path = "?", key: str = "model") -> None:
    """A state dict: str keys and floating-point tensors with finite values."""
    if not isinstance(weights, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()):
        raise CheckpointError(f"checkpoint {str(path)!r}: {key} must map parameter names to "
                              f"tensors")
    for name, tensor in weights.items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise CheckpointError(f"checkpoint {str(path)!r}: {key}[{name!r}] holds NaN or "
                                  f"infinite values")


@contextmanager
def restoring(path: str | Path) -> Iterator[None]:
    """Restore a run's state inside this block: any failure of a damaged or hand-edited field
    (a missing key, a wrong type, a tensor that does not fit) becomes a CheckpointError."""
    try:
        yield
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RuntimeError,
            OverflowError) as error:
        raise CheckpointError(f"checkpoint {str(path)!r} holds a damaged run state "
                              f"({type(error).__name__}: {str(error)[:200]})") from None


def saved_config(payload: dict[str, Any], path: str | Path, parse: Callable[[Any], Any]) -> Any:
    """The run config a loaded checkpoint holds, read by its learner's `parse` (which raises a
    ValueError for a bad one); a CheckpointError when it holds none or a bad one."""
    try:
        return parse(payload["config"])
    except (ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"checkpoint {str(path)!r} holds no valid run config: "
                              f"{error}") from None


def check_results(results: Any) -> None:
    """An evaluation's results from a checkpoint: opponent name -> a result mapping whose game
    counts are ints >= 0 with at least one game (TypeError/ValueError when damaged)."""
    if not isinstance(results, dict):
        raise TypeError("evaluation results must be a mapping")
    for opponent, result in results.items():
        if not (isinstance(opponent, str) and isinstance(result, dict)):
            raise TypeError(f"evaluation result for {opponent!r} is not a mapping")
        counts = [result.get(k) for k in ("games", "a_wins", "b_wins", "draws")]
        if any(type(n) is not int or n < 0 for n in counts) or counts[0] < 1:
            raise ValueError(f"evaluation result for {opponent!r} has bad counts: {counts}")


def check_counters(counters: Any, floats: tuple[str, ...] = ("seconds",)) -> None:
    """Run counters from a checkpoint: ints >= 0, and finite numbers >= 0 for the keys in
    `floats` (ValueError naming the counter)."""
    for key, value in counters.items():
        number = type(value) in ((float, int) if key in floats else (int,))
        if not number or not math.isfinite(value) or value < 0:
            raise ValueError(f"counters.{key} must be a number >= 0, got {value!r}")


def check_optimizer_state(state: Any, params: list[torch.Tensor]) -> None:
    """An Adam or AdamW state dict from a checkpoint for `params` (in the optimizer's order): each
    slot keyed by a parameter's index, its step count and moments finite tensors, the moments
    of that parameter's shape (torch checks none of this on load; the first step would fail).
    The step size (param_groups) is the caller's to check or to set."""
    if not (isinstance(state, dict) and isinstance(state.get("state"), dict)):
        raise TypeError("optimizer must be an optimizer state dict")
    for key, slot in state["state"].items():
        if not (type(key) is int and 0 <= key < len(params) and isinstance(slot, dict)):
            raise TypeError(f"optimizer state entry {key!r} does not belong to a parameter")
        for name, value in slot.items():
            if not isinstance(value, torch.Tensor) or not torch.isfinite(value).all():
                raise ValueError(f"optimizer state {name!r} must be a finite tensor")
            expected = () if name == "step" else tuple(params[key].shape)
            if tuple(value.shape) != expected:
                raise ValueError(f"optimizer state {name!r} of parameter {key} has shape "
                                 f"{tuple(value.shape)}, expected {expected}")


def network_from_checkpoint(payload: dict[str, Any], path: str | Path = "?") -> PolicyValueNet:
    """The checked network of a loaded checkpoint (its weights must fit its shape exactly)."""
    shape = check_shape(payload.get("model_shape"), path)
    check_weights(payload.get("model"), path)
    return network_from_weights(shape, payload["model"], path)


def network_from_weights(shape: dict, weights: dict, path: str | Path = "?",
                         key: str = "model") -> PolicyValueNet:
    net = PolicyValueNet(shape["channels"], shape["blocks"], shape["lookahead"],
                         shape.get("ownership", False), shape.get("landing_values", False),
                         shape.get("max_pool", False), shape.get("norm", "group"),
                         shape.get("global_pool", False))
    try:
        net.load_state_dict(weights)
    except (RuntimeError, ValueError, TypeError, KeyError) as error:
        first = str(error).strip().splitlines()
        raise CheckpointError(f"checkpoint {str(path)!r}: {key} weights do not fit the network "
                              f"{shape}: {' '.join(first[:3])}") from None
    net.eval()
    return net


def default_threads() -> int:
    """Torch threads for playing: $SATELLITES_TORCH_THREADS, else 1."""
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if not text:
        return 1
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a positive integer, got {text!r}")
    return threads


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` torch intra-op threads, then restore the previous count."""
    previous = torch.get_num_threads()
    if previous == threads:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class PolicyAgent(Agent):
    """Plays a network's policy: the most likely legal action, or, with `sample`, a sample from
    softmax(logits / `temperature`) over the legal actions.

    One forward pass of batch 1 gains nothing from more torch threads, and extra threads that
    spin-wait on a busy machine make every move many times slower, so each move runs with
    `threads` torch threads (default: $SATELLITES_TORCH_THREADS, else 1); the process's own
    setting is restored after the move.
    """

    def __init__(self, net: PolicyValueNet, sample: bool = False, seed: int | None = None,
                 spec: str = "policy", threads: int | None = None, temperature: float = 1.0):
        super().__init__(seed)
        self.net = net.eval()
        self.sample = sample
        self.temperature = check_temperature(temperature)
        self.spec = spec
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self._scratch = new_scratch()
        self._features = LookaheadFeatures() if net.uses_lookahead else None
        self._generator = torch.Generator().manual_seed(int(self.rng.integers(2**31)))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self._generator.manual_seed(int(self.rng.integers(2**31)))

    @torch.no_grad()
    def act(self, game: Game) -> int:
        obs = observe(game.state, game.to_move, game.max_moves, self._scratch)
        legal = game.legal_mask()
        lookahead = (torch.from_numpy(self._features.of(game, legal))[None]
                     if self._features else None)
        with torch_threads(self.threads):
            logits, _ = self.net.masked_forward(torch.from_numpy(obs)[None],
                                                torch.from_numpy(legal.copy())[None], lookahead)
        if self.sample:
            # in float64 (a temperature of 1e-300 or 1e300 is 0 or inf in float32) and shifted
            # so that the best legal logit is 0: no temperature makes it -inf or NaN
            shifted = (logits - logits.max(-1, keepdim=True).values).double()
            return int(sample_masked(shifted / self.temperature, self._generator).item())
        return int(logits.argmax(-1).item())


def check_temperature(temperature) -> float:
    """A sampling temperature: a finite number above 0 (ValueError otherwise)."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a finite number above 0, got {temperature!r}")
    return float(temperature)


def split_spec_argument(argument: str) -> tuple[str, bool, float]:
    """`PATH` or `PATH:greedy` -> (PATH, False, 1.0): the most likely action; `PATH:sample` ->
    (PATH, True, 1.0) and `PATH:sample=T` -> (PATH, True, T): a sample at temperature T > 0."""
    head, sep, tail = argument.rpartition(":")
    if sep and tail == "greedy":
        return head, False, 1.0
    if sep and tail == "sample":
        return head, True, 1.0
    if sep and tail.startswith("sample="):
        text = tail[len("sample="):]
        try:
            return head, True, check_temperature(float(text))
        except ValueError:
            raise CheckpointError(f"checkpoint spec ':{tail}': the temperature must be a finite "
                                  f"number above 0, e.g. ':sample=0.5'") from None
    return argument, False, 1.0


class CheckpointAgent(PolicyAgent):
    """`checkpoint:PATH` (most likely action), `checkpoint:PATH:sample` (sampled) or
    `checkpoint:PATH:sample=T` (sampled at temperature T)."""

    @classmethod
    def from_spec(cls, argument: str, seed: int | None = None,
                  threads: int | None = None) -> "CheckpointAgent":
        path, sample, temperature = split_spec_argument(argument)
        payload = load_checkpoint(path)
        return cls(network_from_checkpoint(payload, path), sample=sample, seed=seed,
                   spec=f"checkpoint:{argument}", threads=threads, temperature=temperature)
