"""Checkpoints: atomic save and checked load, for both learners.

A checkpoint is one `torch.save` file holding the network weights and shape, the optimizer,
the run config, the step counters, the RNG states, the opponent pool and the evaluation
history: everything to resume a run exactly, and to play with the policy.

A checkpoint holds data only: dicts, lists, tuples, str, int, float, bool, None and tensors
(RNG states are tensors or plain ints). It is read with `torch.load(weights_only=True)`,
which refuses anything else, so opening a checkpoint never runs code from it (a pickle with
a `__reduce__` payload is a CheckpointError, and its payload does not run). Every field the
loader uses is checked for type and range: a damaged or hand-edited file is a
CheckpointError naming the file and the field, never a traceback from deep inside torch.

Every file goes through `load_checkpoint`, and every network is filled through
`load_weights`; `load_network` gives the checked network of a checkpoint of either learner
(or of the shipped one, `pretrained`). What they accept:

* tensors anywhere in the file: plain dense tensors in CPU memory (`torch.strided` layout,
  any strides); a sparse (COO, CSR, ...), quantized, nested or meta tensor, or a tensor
  subclass, is refused when the file is opened, whatever field holds it;
* a network's weights: float32 and finite (no NaN or infinity: a network that held them
  would play arbitrary moves), exactly the names the network has, each of exactly its shape.
"""

from __future__ import annotations

import math
import os
import pickle
import warnings
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

import torch

from satellites_env.core.checks import quoted, quoted_path
from satellites_env.core.engine import N_ACTIONS
from satellites_env.files import open_output
from satellites_env.observation import N_PLANES

from .config import NORMS
from .network import PolicyValueNet

FORMAT = "satellites-checkpoint"
#: the format this code writes; 2 holds the run state of `training.common.run`
VERSION = 2
#: the formats it reads: the network of a version 1 file plays, its run does not resume
READABLE = (1, 2)
#: how deep a checkpoint's containers may nest (this code writes fewer than 10 levels)
MAX_DEPTH = 64
#: the most containers and tensors a checkpoint may hold (a run's has a few thousand)
MAX_ITEMS = 1_000_000
#: bounds on a checkpoint's network shape (the config allows no more)
MAX_CHANNELS = 1024
MAX_BLOCKS = 64

Net = TypeVar("Net", bound=torch.nn.Module)


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, unsafe or does not match this code."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> Path:
    """Write atomically: a crash mid-write leaves the previous checkpoint intact. A path that
    is a folder, a special file or a symbolic link is refused (satellites_env.files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "planes": N_PLANES,
        "actions": N_ACTIONS,
        **payload,
    }
    with open_output(path, "checkpoint") as file:
        torch.save(payload, file)
        file.flush()
        os.fsync(file.fileno())  # a checkpoint outlives a power cut, not only a crash
    return path


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a checkpoint; every failure is a CheckpointError naming the problem.

    Only data is read (`weights_only=True`): a file that would need to import or call
    anything to unpickle is refused before any of it runs.
    """
    path = Path(path)
    name = quoted_path(path)
    try:
        path.stat()
    except FileNotFoundError:
        pass  # said below, after the directory check
    except (OSError, ValueError) as error:  # a name too long, a loop of links, a NUL byte
        detail = getattr(error, "strerror", None) or error
        raise CheckpointError(f"checkpoint {name} cannot be read: {detail}") from None
    if path.is_dir():
        raise CheckpointError(f"checkpoint {name} is a directory, not a checkpoint file")
    if not path.exists():
        raise CheckpointError(f"checkpoint {name} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {name} is not a regular file")
    size = _check_archive(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's notes on pickle protocols
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        detail = [
            line.strip()
            for line in str(error).splitlines()
            if line.strip()
            and not line.startswith(("Weights only load failed", "Please file", "Check the doc"))
        ]
        raise CheckpointError(
            f"checkpoint {name} is refused: a checkpoint may hold only tensors and plain data, "
            f"and this file is corrupt or would import or run code when loaded "
            f"({' '.join(detail)[:200] or 'unpickling failed'})"
        ) from None
    except Exception as error:
        detail = str(error).strip().splitlines()
        raise CheckpointError(
            f"checkpoint {name} is corrupt or not a torch file: "
            f"{(detail[0] if detail else type(error).__name__)[:200]}"
        ) from None
    if not isinstance(payload, dict) or not _equal(payload.get("format"), FORMAT):
        raise CheckpointError(f"{name} is not a satellites checkpoint (no format={FORMAT!r} entry)")
    version = payload.get("version")
    if type(version) is not int or version not in READABLE:
        raise CheckpointError(
            f"checkpoint {name} has format version {quoted(version)}; "
            f"this code reads versions {', '.join(map(str, READABLE))}"
        )
    if not (_equal(payload.get("planes"), N_PLANES) and _equal(payload.get("actions"), N_ACTIONS)):
        raise CheckpointError(
            f"checkpoint {name} was made for {payload.get('planes')!r} observation planes "
            f"and {payload.get('actions')!r} actions; this code has {N_PLANES} and {N_ACTIONS}"
        )
    check_tensors(payload, path, size)
    for key in ("model", "model_shape"):
        if key not in payload:
            raise CheckpointError(f"checkpoint {name} has no {key!r} entry")
    check_shape(payload["model_shape"], path)
    check_weights(payload["model"], path, "model")
    return payload


def _check_archive(path: Path) -> int:
    """The file's size, once its zip archive (what `torch.save` writes) is checked to expand
    to no more than that: every member stored, not compressed, and the members' sizes
    together at most the file's. A compressed member could expand a thousandfold (a zip
    bomb); torch never compresses one, so none is read."""
    name = quoted_path(path)
    try:
        size = path.stat().st_size
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except Exception as error:  # zipfile's own errors, and NotImplementedError for odd headers
        raise CheckpointError(
            f"checkpoint {name} is refused: it is corrupt, or not a zip archive as "
            f"torch.save writes ({str(error)[:100]})"
        ) from None
    for member in members:
        if member.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(
                f"checkpoint {name}: member {quoted(member.filename, 60)} is compressed; "
                f"torch.save stores its members uncompressed, and a compressed one could "
                f"expand far beyond the file's size"
            )
    if sum(member.file_size for member in members) > size:
        raise CheckpointError(
            f"checkpoint {name}: its members claim more bytes than the file holds "
            f"(overlapping or damaged members)"
        )
    return size


def _equal(value: Any, expected: str | int) -> bool:
    """`value == expected` for a value of exactly the expected type (never a tensor compare)."""
    return type(value) is type(expected) and value == expected


def check_shape(shape: Any, path: str | Path = "?") -> dict:
    """A `model_shape` entry with the right keys, types and ranges, or a CheckpointError."""
    where = f"checkpoint {quoted_path(path)}: model_shape"
    if not isinstance(shape, dict) or set(shape) - {
        "channels",
        "blocks",
        "lookahead",
        "landing_values",
        "norm",
    }:
        raise CheckpointError(
            f"{where} must be a mapping of channels, blocks, lookahead, "
            f"landing_values and norm, got {quoted(shape)}"
        )
    flags = {"landing_values": shape.get("landing_values", False)}
    for key, flag in flags.items():
        if type(flag) is not bool:
            raise CheckpointError(f"{where}.{key} must be true or false, got {flag!r}")
    norm = shape.get("norm", "group")
    if not (type(norm) is str and norm in NORMS):
        raise CheckpointError(f"{where}.norm must be one of {', '.join(NORMS)}, got {norm!r}")
    sizes: dict[str, int] = {}
    for key in ("channels", "blocks"):
        value = shape.get(key)
        if type(value) is not int:
            raise CheckpointError(f"{where}.{key} must be an int, got {value!r}")
        sizes[key] = value
    channels, blocks = sizes["channels"], sizes["blocks"]
    lookahead = shape.get("lookahead", 0.0)
    if not (8 <= channels <= MAX_CHANNELS and channels % 8 == 0):
        raise CheckpointError(
            f"{where}.channels must be a multiple of 8 in [8, {MAX_CHANNELS}], got {channels}"
        )
    if not 1 <= blocks <= MAX_BLOCKS:
        raise CheckpointError(f"{where}.blocks must be in [1, {MAX_BLOCKS}], got {blocks}")
    if type(lookahead) not in (int, float) or not math.isfinite(lookahead) or lookahead < 0:
        raise CheckpointError(f"{where}.lookahead must be a finite number >= 0, got {lookahead!r}")
    checked = {"channels": channels, "blocks": blocks, **flags, "norm": norm}
    if lookahead:
        checked["lookahead"] = float(lookahead)
    return checked


def plain_tensor_problem(tensor: torch.Tensor) -> str | None:
    """Why `tensor` is not a plain dense CPU tensor (a phrase), or None when it is one."""
    if type(tensor) is not torch.Tensor:
        return f"a {type(tensor).__name__} (a tensor subclass)"
    if tensor.device.type != "cpu":
        return f"a tensor on the {tensor.device.type!r} device, not in CPU memory"
    if tensor.layout != torch.strided:
        return f"a {str(tensor.layout).removeprefix('torch.')} tensor, not a dense one"
    if tensor.is_nested:
        return "a nested tensor, not a dense one"
    if tensor.is_quantized:
        return f"a quantized {tensor.dtype} tensor"
    return None


def check_tensors(payload: Any, path: str | Path = "?", size: int | None = None) -> None:
    """Refuse a payload holding any tensor that is not plain (see
    [`plain_tensor_problem`][training.common.checkpoint.plain_tensor_problem]), wherever it
    is, or that is not a tree of plain data: a container that holds itself or is held twice
    (a file whose walk would never end, or double with each level), nesting deeper than
    `MAX_DEPTH`, more than `MAX_ITEMS` values, or tensors that together view more bytes than
    the file's `size` (views of one storage, or stride-0 expansions, that would make a whole-
    tensor check cost far more than the file). So every later walk of the payload costs at
    most its size. A CheckpointError names the file and the field."""
    stack: list[tuple[Any, str, int]] = [(payload, "", 0)]
    seen: set[int] = set()
    viewed = 0
    items = 0
    while stack:  # a loop, not recursion: a deeply nested file is no RecursionError
        value, where, depth = stack.pop()
        items += 1
        field = where[:200] or "payload"
        if items > MAX_ITEMS:
            raise CheckpointError(
                f"checkpoint {quoted_path(path)} holds more than {MAX_ITEMS:,} values"
            )
        if isinstance(value, torch.Tensor):
            problem = plain_tensor_problem(value)
            if problem:
                raise CheckpointError(
                    f"checkpoint {quoted_path(path)}: {field}"
                    f" is {problem}; a checkpoint holds dense CPU tensors"
                )
            viewed += value.numel() * value.element_size()
            if size is not None and viewed > size:
                raise CheckpointError(
                    f"checkpoint {quoted_path(path)}: its tensors view more bytes than the "
                    f"file holds (at {field}: tensors sharing one storage, or expanded)"
                )
            continue
        if not isinstance(value, (dict, list, tuple)):
            continue
        inner = value.values() if isinstance(value, dict) else value
        if id(value) in seen and any(
            isinstance(v, (dict, list, tuple, torch.Tensor)) for v in inner
        ):
            # (a container of plain values may be shared: torch's optimizer shares `betas`)
            raise CheckpointError(
                f"checkpoint {quoted_path(path)}: {field} is a container held twice or "
                f"inside itself; a checkpoint is a tree of plain data"
            )
        seen.add(id(value))
        if depth >= MAX_DEPTH:
            raise CheckpointError(
                f"checkpoint {quoted_path(path)}: {field} nests deeper than {MAX_DEPTH} levels"
            )
        if isinstance(value, dict):
            stack.extend(
                (
                    item,
                    f"{where}[{quoted(key, 40)}]"
                    if where
                    else key[:40]
                    if isinstance(key, str) and key.isidentifier()
                    else quoted(key, 40),
                    depth + 1,
                )
                for key, item in value.items()
            )
        else:
            stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))


def check_weights(weights: Any, path: str | Path = "?", key: str = "model") -> None:
    """A state dict: str keys and plain float32 tensors with finite values (the networks' own
    dtype: integer or complex weights would load cast, and play other moves)."""
    name = quoted_path(path)
    if not isinstance(weights, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()
    ):
        raise CheckpointError(f"checkpoint {name}: {key} must map parameter names to tensors")
    for weight, tensor in weights.items():
        problem = plain_tensor_problem(tensor)
        if problem:
            raise CheckpointError(
                f"checkpoint {name}: {key}[{quoted(weight)}] is {problem}; "
                f"the networks hold dense CPU float32 tensors"
            )
        if tensor.dtype != torch.float32:
            raise CheckpointError(
                f"checkpoint {name}: {key}[{quoted(weight)}] is a "
                f"{tensor.dtype} tensor; the networks hold float32"
            )
        if not torch.isfinite(tensor).all():
            raise CheckpointError(
                f"checkpoint {name}: {key}[{quoted(weight)}] holds NaN or infinite values"
            )


@contextmanager
def restoring(path: str | Path) -> Iterator[None]:
    """Restore a run's state inside this block: any failure of a damaged or hand-edited field
    (a missing key, a wrong type, a tensor that does not fit) becomes a CheckpointError."""
    try:
        yield
    except CheckpointError:
        raise
    except (
        KeyError,
        TypeError,
        ValueError,
        IndexError,
        AttributeError,
        RuntimeError,
        OverflowError,
    ) as error:
        raise CheckpointError(
            f"checkpoint {str(path)!r} holds a damaged run state "
            f"({type(error).__name__}: {str(error)[:200]})"
        ) from None


def check_results(results: Any) -> None:
    """An evaluation's results from a checkpoint: opponent name -> a result mapping whose game
    counts are ints >= 0 with at least one game (TypeError/ValueError when damaged)."""
    if not isinstance(results, dict):
        raise TypeError("evaluation results must be a mapping")
    for opponent, result in results.items():
        if not (isinstance(opponent, str) and isinstance(result, dict)):
            raise TypeError(f"evaluation result for {opponent!r} is not a mapping")
        counts = [result.get(k) for k in ("games", "a_wins", "b_wins", "draws")]
        if not are_counts(counts) or counts[0] < 1:
            raise ValueError(f"evaluation result for {opponent!r} has bad counts: {counts}")


def are_counts(values: list[Any], below: int | None = None) -> TypeGuard[list[int]]:
    """Whether every value is an int (a bool is not one) >= 0, and < `below` when given."""
    return all(type(n) is int and n >= 0 and (below is None or n < below) for n in values)


#: the largest counter a run can reach (a million positions a second for thirty years)
MAX_COUNT = 10**15


def check_counters(counters: Any, floats: tuple[str, ...] = ("seconds",)) -> None:
    """Run counters from a checkpoint: ints in [0, MAX_COUNT], and finite numbers in that
    range for the keys in `floats` (ValueError naming the counter)."""
    for key, value in counters.items():
        number = type(value) in ((float, int) if key in floats else (int,))
        if not number or not math.isfinite(value) or not 0 <= value <= MAX_COUNT:
            raise ValueError(
                f"counters.{key} must be a number in [0, {MAX_COUNT}], got {quoted(value)}"
            )


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
                raise ValueError(
                    f"optimizer state {name!r} of parameter {key} has shape "
                    f"{tuple(value.shape)}, expected {expected}"
                )


def load_weights(net: Net, weights: Any, path: str | Path = "?", key: str = "model") -> Net:
    """`net` with a checkpoint's state dict loaded, in eval mode.

    Args:
        net: The network to fill (its state dict gives the names and shapes expected).
        weights: The state dict read from the checkpoint.
        path: The checkpoint file, named in errors.
        key: The checkpoint's field that holds `weights`, named in errors.

    Returns:
        `net`, filled and in eval mode.

    Raises:
        CheckpointError: `weights` is not a state dict of plain finite float32 tensors with
            exactly the network's names and shapes (the message names the file and the
            first weight that differs).
    """
    check_weights(weights, path, key)
    name = quoted_path(path)
    expected = net.state_dict()
    missing = [k for k in expected if k not in weights]
    extra = [k for k in weights if k not in expected]
    if missing or extra:
        listed = "; ".join(
            part
            for part in (
                missing
                and f"missing {', '.join(map(quoted, missing[:3]))}"
                + (f" and {len(missing) - 3} more" if len(missing) > 3 else ""),
                extra
                and f"unexpected {', '.join(map(quoted, extra[:3]))}"
                + (f" and {len(extra) - 3} more" if len(extra) > 3 else ""),
            )
            if part
        )
        raise CheckpointError(
            f"checkpoint {name}: {key} weights do not fit the network "
            f"{getattr(net, 'shape', '')}: {listed}"
        )
    for weight, tensor in expected.items():
        if weights[weight].shape != tensor.shape:
            raise CheckpointError(
                f"checkpoint {name}: {key}[{quoted(weight)}] has shape "
                f"{tuple(weights[weight].shape)}, the network {getattr(net, 'shape', '')} "
                f"needs {tuple(tensor.shape)}"
            )
    try:
        net.load_state_dict(weights)
    except (RuntimeError, ValueError, TypeError, KeyError) as error:
        first = str(error).strip().splitlines()
        raise CheckpointError(
            f"checkpoint {name}: {key} weights do not fit the network "
            f"{getattr(net, 'shape', '')}: {' '.join(first[:3])[:300]}"
        ) from None
    return net.eval()


#: The shipped network (`az:pretrained[:SIMS]`, `checkpoint:pretrained`): the final network of
#: the `az_standard` config; docs/pretrained.md is its model card. It is package data of the
#: learner that trained it (`training.alphazero`); both learners' agents load it from here.
PRETRAINED = Path(__file__).parents[1] / "alphazero" / "pretrained.pt"


def resolve(path: str | Path) -> Path:
    """`pretrained` names the shipped network; any other path is itself."""
    return PRETRAINED if str(path) == "pretrained" else Path(path)


def load_payload(path_or_payload: str | Path | dict[str, Any]) -> dict[str, Any]:
    """A checked checkpoint payload (a path, `pretrained`, or a payload already loaded)."""
    return (
        path_or_payload
        if isinstance(path_or_payload, dict)
        else load_checkpoint(resolve(path_or_payload))
    )


def load_network(
    path_or_payload: str | Path | dict[str, Any],
    where: str | Path | None = None,
    build: Callable[[dict[str, Any]], PolicyValueNet] | None = None,
) -> PolicyValueNet:
    """The checked network of a checkpoint of either learner.

    Args:
        path_or_payload: A checkpoint's path, `pretrained`, or a payload already loaded.
        where: The file a payload was loaded from, which errors name.
        build: The blank network of the checkpoint's checked `model_shape` (PPO's
            `network_from_shape` gives PPO's networks their prior). Without it, the network
            alone: a PPO network with the lookahead prior is refused.

    Raises:
        CheckpointError: A file, shape or weights that are not a network's.
    """
    if where is None:
        where = "<payload>" if isinstance(path_or_payload, dict) else resolve(path_or_payload)
    payload = load_payload(path_or_payload)
    shape = check_shape(payload.get("model_shape"), where)
    if build is None:
        if shape.pop("lookahead", 0.0):
            raise CheckpointError(
                f"checkpoint {quoted_path(where)} holds a PPO network with the "
                f"lookahead prior, which needs the game as well as the planes: "
                f"play it as checkpoint:PATH"
            )
        build = _network_of_shape
    return load_weights(build(shape), payload.get("model"), where)


def _network_of_shape(shape: dict[str, Any]) -> PolicyValueNet:
    return PolicyValueNet(**shape)
