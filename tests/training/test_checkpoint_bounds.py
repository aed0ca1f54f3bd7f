"""Loading a checkpoint costs at most about its size (issue 58): a container inside itself or
held twice, nesting past `MAX_DEPTH`, a compressed member (a zip bomb) or tensors that view
more bytes than the file holds are one CheckpointError naming the file, at once."""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_checkpoint_safety import net_payload

from training.common.checkpoint import (
    MAX_DEPTH,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)


def refused_quickly(path: Path, match: str) -> None:
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=rf"checkpoint '.*{path.name}'.*{match}"):
        load_checkpoint(path)
    assert time.perf_counter() - start < 5.0


def self_containing() -> dict:
    extra: dict = {"a": 1}
    extra["self"] = extra
    return extra


def doubling(levels: int) -> list:
    shared: list = [1]
    for _ in range(levels):
        shared = [shared, shared]  # a walk that does not notice the sharing takes 2**levels
    return shared


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "extra, match",
    [
        (self_containing(), "held twice or inside itself"),
        (doubling(60), "held twice or inside itself"),
        (nested(MAX_DEPTH + 5), f"deeper than {MAX_DEPTH}"),
        ([torch.zeros(1).expand(10**8)], "view more bytes than the file holds"),
        ([torch.zeros(250_000)] * 50, "view more bytes than the file holds"),
    ],
    ids=["self", "shared", "deep", "expanded", "views"],
)
def test_a_structure_that_would_cost_more_than_the_file_is_refused(tmp_path, extra, match):
    path = save_checkpoint(tmp_path / "c.pt", {**net_payload(), "extra": extra})
    refused_quickly(path, match)


def test_a_compressed_member_is_refused_before_it_expands(tmp_path):
    plain = save_checkpoint(
        tmp_path / "plain.pt", {**net_payload(), "extra": torch.zeros(2_000_000)}
    )
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info.filename, src.read(info.filename))
    assert bomb.stat().st_size * 50 < plain.stat().st_size  # it would expand fiftyfold
    refused_quickly(bomb, "compressed")
    load_checkpoint(plain)  # the same data, stored as torch stores it, loads


def test_a_file_that_is_not_a_zip_archive_is_refused(tmp_path):
    legacy = tmp_path / "legacy.pt"
    torch.save({"format": "satellites-checkpoint"}, legacy, _use_new_zipfile_serialization=False)
    refused_quickly(legacy, "refused: it is corrupt, or not a zip archive")


@st.composite
def graphs(draw):
    """Containers whose children are leaves or other containers of the graph: trees, shared
    nodes and cycles alike."""
    count = draw(st.integers(1, 12))
    kinds = draw(st.lists(st.sampled_from(["list", "dict"]), min_size=count, max_size=count))
    nodes: list = [[] if kind == "list" else {} for kind in kinds]
    for i, node in enumerate(nodes):
        for j, child in enumerate(
            draw(st.lists(st.one_of(st.integers(0, count - 1), st.none()), max_size=4))
        ):
            value = nodes[child] if child is not None else i
            if isinstance(node, list):
                node.append(value)
            else:
                node[f"k{j}"] = value
    return nodes[0]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(graphs())
def test_fuzz_any_graph_of_containers_loads_or_is_refused_at_once(tmp_path, extra):
    path = save_checkpoint(tmp_path / "g.pt", {**net_payload(), "extra": extra})
    start = time.perf_counter()
    try:
        load_checkpoint(path)
    except CheckpointError as error:
        assert "g.pt" in str(error) and "\n" not in str(error)
    assert time.perf_counter() - start < 5.0


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(4, 40), st.integers(0, 255)), max_size=4))
def test_fuzz_damaged_zip_headers_load_or_name_the_file(tmp_path, changes):
    data = bytearray(save_checkpoint(tmp_path / "ok.pt", net_payload()).read_bytes())
    headers = [i for i in range(len(data) - 1) if data[i : i + 2] == b"PK"]
    for which, offset, byte in changes:  # a member's version, method, sizes, names...
        at = headers[which % len(headers)] + offset
        if at < len(data):
            data[at] = byte
    path = tmp_path / "z.pt"
    path.write_bytes(bytes(data))
    try:
        load_checkpoint(path)
    except CheckpointError as error:
        assert "z.pt" in str(error) and "\n" not in str(error)
