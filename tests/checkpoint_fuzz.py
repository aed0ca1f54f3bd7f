"""Hypothesis strategies and helpers shared by the checkpoint fuzz tests: any plain value a
checkpoint could hold, and a payload with one field replaced or deleted."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

tensors = st.builds(
    lambda shape, dtype: torch.zeros(shape, dtype=dtype),
    st.lists(st.integers(0, 3), max_size=3),
    st.sampled_from([torch.float32, torch.int64, torch.uint8, torch.bool]),
)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    tensors,
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def mutated(payload: dict, path: tuple, value, delete: bool) -> dict:
    """A copy of `payload` with the field at `path` set to `value` (or deleted); the dicts on
    the way are copied, the rest is shared."""
    payload = dict(payload)
    target = payload
    for part in path[:-1]:
        target[part] = dict(target[part]) if isinstance(target[part], dict) else {}
        target = target[part]
    if delete:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return payload
