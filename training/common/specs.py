"""What a `checkpoint:` or `az:` spec names, read from its text alone (nothing is loaded):
its network file and, for `checkpoint:`, how it picks a move."""

from __future__ import annotations

from pathlib import Path

from .checkpoint import CheckpointError, resolve
from .policy_agent import check_temperature


def split_spec_argument(argument: str) -> tuple[str, bool, float]:
    """`PATH` or `PATH:greedy` -> (PATH, False, 1.0): the most likely action; `PATH:sample` ->
    (PATH, True, 1.0) and `PATH:sample=T` -> (PATH, True, T): a sample at temperature T > 0."""
    head, sep, tail = argument.rpartition(":")
    if sep and tail == "greedy":
        return head, False, 1.0
    if sep and tail == "sample":
        return head, True, 1.0
    if sep and tail.startswith("sample="):
        text = tail[len("sample=") :]
        try:
            return head, True, check_temperature(float(text))
        except ValueError:
            raise CheckpointError(
                f"checkpoint spec ':{tail[:40]}': the temperature must be a "
                f"finite number above 0, e.g. ':sample=0.5'"
            ) from None
    return argument, False, 1.0


def spec_file(spec: str) -> Path | None:
    """The network file a `checkpoint:` or `az:` spec names (`pretrained`: the shipped one),
    read from the spec's text as its factory reads it; None for any other spec."""
    name, _, argument = spec.partition(":")
    try:
        if name == "checkpoint":
            path = split_spec_argument(argument)[0]
        elif name == "az":
            head, sep, tail = argument.rpartition(":")
            path = head if sep and tail.isdigit() else argument
        else:
            return None
    except ValueError:
        return None
    return resolve(path) if path else None
