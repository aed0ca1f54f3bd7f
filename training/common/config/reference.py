"""The Markdown reference of every config key (docs/configs.md)."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Iterator

from .schema import Config, describe_range

if typing.TYPE_CHECKING:
    from _typeshed import DataclassInstance


def reference() -> str:
    """The Markdown reference of every key of every learner's config (docs/configs.md)."""
    lines = [
        "# Configuration reference",
        "",
        "Every key of the run configs, with its default and range, for each learner.",
        "Unknown or duplicate keys and out-of-range values are errors naming the file and",
        "the key, reported before anything runs. This page is written by",
        "`python -m training.common.config > docs/configs.md` (a test checks it).",
        "",
    ]
    for learner, cls in Config.LEARNERS.items():
        lines += [
            f"## `learner: {learner}`",
            "",
            " ".join(inspect.cleandoc(cls.__doc__ or "").split()),
            "",
            "| key | default | range | meaning |",
            "| --- | --- | --- | --- |",
        ]
        lines += [_row(key, f) for key, f in _fields(cls, "")]
        lines.append("")
    return "\n".join(lines)


def _fields(
    cls: type[DataclassInstance], prefix: str
) -> Iterator[tuple[str, dataclasses.Field[typing.Any]]]:
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            yield from _fields(hints[f.name], f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", f


def _row(key: str, f: dataclasses.Field[typing.Any]) -> str:
    meta = f.metadata
    default = f.default
    if f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    if meta.get("choices"):
        span = ", ".join(meta["choices"])
    elif meta.get("low") is None and meta.get("high") is None:
        span = ""
    else:
        span = describe_range(meta)
    shown = (
        "" if default == "" else (str(default).lower() if isinstance(default, bool) else default)
    )
    return f"| `{key}` | `{shown}` | {span} | {meta.get('doc', '')} |"
