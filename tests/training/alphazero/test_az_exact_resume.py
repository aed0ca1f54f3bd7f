"""A run stopped between two iterations and resumed is the uninterrupted run, bit for bit: the
checkpoint holds the generators' games in flight (`training.alphazero.inflight`), searches in
progress included; every array of the search's tree is restored; an older checkpoint without
them still resumes (fresh games); damaged or crafted games in flight are refused when the run
is opened, before any kernel reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_az_generator import assert_same_run
from test_az_training import TINY, quiet

from satellites_env.core.state import STATE_LEN
from training.alphazero.config import AZConfig
from training.alphazero.generator import build_selfplay
from training.alphazero.inflight import SAVED_FIELDS, searched_nodes
from training.alphazero.search import NEED_ROOT, SEARCHING, TREE_FIELDS
from training.alphazero.trainer import AZTrainer
from training.common.checkpoint import CheckpointError
from training.common.config import load_config
from training.common.network import BatchedInference, build_network, network_for

#: full and cheap searches mixed, so that an iteration's end falls inside searches; games
#: long enough to be under way at each save
EXACT = {
    **TINY,
    "total_positions": 10_000,
    "positions_per_iteration": 40,
    "search": {
        "games": 6,
        "full_simulations": 8,
        "cheap_simulations": 2,
        "full_fraction": 0.5,
        "dagger": 0.5,
        "max_moves": 16,
    },
    "replay": {"capacity": 150, "min_positions": 10, "batch_size": 16, "replay_ratio": 2.0},
}
ITERATIONS, STOP = 8, 4


def exact(backend: str, workers: int) -> AZConfig:
    return AZConfig.from_dict({**EXACT, "distributed": {"backend": backend, "workers": workers}})


def in_flight(trainer: AZTrainer) -> list:
    return [member.generator.selfplay for member in trainer.generators.members]


@pytest.mark.parametrize("backend, workers", [("thread", 2), ("local", 2), ("local", 1)])
def test_a_run_stopped_and_resumed_is_the_uninterrupted_run(tmp_path, backend, workers):
    config = exact(backend, workers)
    whole = AZTrainer(config, tmp_path / "whole", console=quiet())
    for _ in range(ITERATIONS):
        whole.iterate()
    part = AZTrainer(config, tmp_path / "part", console=quiet())
    for _ in range(STOP):
        part.iterate()
    # the save falls inside searches and games: there is state in flight to keep
    selfplays = in_flight(part)
    assert any((s.search.tree.phase == SEARCHING).any() for s in selfplays)
    assert any(s.search.tree.sim[s.search.tree.phase == SEARCHING].max() > 0 for s in selfplays)
    assert all(any(s.trajectories) for s in selfplays)
    part.save()
    part.close()
    resumed = AZTrainer(config, tmp_path / "part", resume=True, console=quiet())
    for _ in range(ITERATIONS - STOP):
        resumed.iterate()
    assert resumed.buffer.added > resumed.buffer.capacity  # the ring wrapped: all of it compared
    assert_same_run(whole, resumed)


def test_an_older_checkpoint_without_games_in_flight_resumes_with_fresh_games(tmp_path):
    config = exact("thread", 2)
    trainer = AZTrainer(config, tmp_path, console=quiet())
    trainer.iterate()
    payload = torch.load(trainer.save(), weights_only=True)
    trainer.close()
    assert all("games" in state for state in payload["generators"])
    payload["generators"] = [{"rng": state["rng"]} for state in payload["generators"]]
    torch.save(payload, tmp_path / "checkpoint.pt")
    resumed = AZTrainer(config, tmp_path, resume=True, console=quiet())
    selfplays = in_flight(resumed)
    assert all((s.search.tree.phase == NEED_ROOT).all() for s in selfplays)
    assert all(not any(s.trajectories) for s in selfplays)
    resumed.iterate()
    assert resumed.counters.iterations == 2


def played_selfplay(seed: int = 5):
    """A SelfPlay stopped after some positions, with searches in progress."""
    config = exact("local", 1)
    selfplay = build_selfplay(config, seed)
    net = build_network(8, 1, seed=0)
    selfplay.play(47, BatchedInference(net), _Sink())
    assert (selfplay.search.tree.phase == SEARCHING).any()
    return config, selfplay, net


class _Sink:
    def add(self, *args, **kwargs) -> None:
        pass


def test_every_array_of_the_tree_is_restored():
    """Any field of `TREE_FIELDS` (a new one too) comes back, except the scratch ones, which a
    step writes before it reads them; a node array for the nodes of the searches in progress
    (a waiting game's next step resets its root)."""
    scratch = {name for name, scope, *_ in TREE_FIELDS if scope == "scratch"}
    assert scratch == {"obs", "mask", "work", "sigma"}
    assert {row[0] for row in SAVED_FIELDS} == {row[0] for row in TREE_FIELDS} - scratch
    config, played, _ = played_selfplay()
    saved = played.games_state()
    restored = build_selfplay(config, 99)  # another stream: other games
    restored.restore_games(saved)
    used = searched_nodes(played.search.tree)
    for name, scope, *_ in TREE_FIELDS:
        if name in scratch:
            continue
        a, b = getattr(played.search.tree, name), getattr(restored.search.tree, name)
        if scope == "node":
            a, b = a[used], b[used]
        assert np.array_equal(a, b), name
    assert np.array_equal(played.seats, restored.seats)
    for mine, theirs in zip(played.trajectories, restored.trajectories, strict=True):
        assert len(mine) == len(theirs)
        for p, q in zip(mine, theirs, strict=True):
            assert all(np.array_equal(x, y) for x, y in zip(p[:3], q[:3], strict=True))
            assert p[0].dtype == q[0].dtype and p[1].dtype == q[1].dtype
            assert p[3] == q[3] and type(p[3]) is type(q[3])


def test_only_the_nodes_of_the_searches_in_progress_are_saved():
    """az_quick's searches (64 simulations over 64 considered actions, cheap ones of 4): the
    saved tree is a fraction of the whole (for its 128 games: 6-8 MB of 27.6 MB)."""
    config = load_config(Path(__file__).parents[3] / "configs" / "az_quick.yaml")
    selfplay = build_selfplay(config, 0, games=16)
    selfplay.play(300, BatchedInference(network_for(config.model, seed=0).eval()), _Sink())
    saved = sum(t.numel() * t.element_size() for t in selfplay.games_state()["tree"].values())
    assert saved < sum(array.nbytes for array in selfplay.search.tree) / 2


def checkpoint_payload(tmp_path: Path) -> dict:
    trainer = AZTrainer(exact("local", 1), tmp_path, console=quiet())
    for _ in range(2):
        trainer.iterate()
    payload = torch.load(trainer.save(), weights_only=True)
    trainer.close()
    assert (payload["generators"][0]["games"]["tree"]["phase"] == SEARCHING).any()
    return payload


def with_games(payload: dict, change) -> dict:
    """`payload` with `change(games)` applied to a deep copy of generator 0's games."""
    games = payload["generators"][0]["games"]
    copied = {
        key: (
            {k: v.clone() for k, v in value.items()}
            if isinstance(value, dict)
            else value.clone()
            if isinstance(value, torch.Tensor)
            else value
        )
        for key, value in games.items()
    }
    change(copied)
    return {**payload, "generators": [{**payload["generators"][0], "games": copied}]}


def resume(tmp_path: Path, payload: dict) -> AZTrainer:
    folder = tmp_path / "resumed"
    folder.mkdir(exist_ok=True)
    torch.save(payload, folder / "checkpoint.pt")
    return AZTrainer(exact("local", 1), folder, resume=True, console=quiet())


def _searching(games) -> int:
    return int(np.flatnonzero(games["tree"]["phase"].numpy() == SEARCHING)[0])


def _set(part, name, value, index=0):
    def change(games):
        games[part][name].view(-1)[index] = value

    return change


def _with_root_values(value: float):
    """The root values that checkpoints held while satellites had short-term value targets."""

    def change(games):
        lengths = games["trajectories"]["lengths"]
        games["trajectories"]["value"] = torch.full((int(lengths.sum()),), value)

    return change


def test_games_saved_with_the_retired_late_flag_and_root_values_resume(tmp_path):
    """A checkpoint saved while satellites had a late search budget and short-term value
    targets holds `late` (false) and the trajectories' root values: it resumes, both unused."""

    def older(games):
        _with_root_values(0.5)(games)
        games["late"] = False

    payload = checkpoint_payload(tmp_path)
    resumed = resume(tmp_path, with_games(payload, older))
    (tmp_path / "now").mkdir()
    expected = resume(tmp_path / "now", payload)
    for a, b in zip(in_flight(resumed), in_flight(expected), strict=True):
        assert [len(t) for t in a.trajectories] == [len(t) for t in b.trajectories]
    resumed.iterate()


def _parent_loop(games):
    nodes = games["tree"]["node_parent"]
    nodes[0] = 0  # a root that is its own parent: a backup would never end


def _far_child(games):
    children = games["tree"]["child_node"]
    children[0, 0] = 10**6  # a node out of the arrays


def _illegal_child(games):
    games["tree"]["child_action"][0, 0] = 3000


@pytest.mark.parametrize(
    "change, message",
    [
        (_set("tree", "phase", 7), r"tree\.phase must hold phases"),
        (_set("tree", "kind", 5), r"tree\.kind must hold budgets"),
        (_set("tree", "num_nodes", 10**6), r"tree\.num_nodes"),
        (_parent_loop, r"tree\.node_parent must hold -1 at a root"),
        (_far_child, r"tree\.child_node must hold -1 or a later node"),
        (_illegal_child, r"tree\.child_action must hold the legal actions"),
        (_set("tree", "game_state", 9), r"state row 0: cell codes"),
        (_set("tree", "victim", 0), r"tree\.victim must hold values in -1\.\.-1"),
        (_set("tree", "gumbel", float("nan")), r"tree\.gumbel must hold finite"),
        (_set("trajectories", "lengths", 10**6), r"trajectories\.lengths must hold 0\.\.16"),
        (_set("trajectories", "actions", -1), r"trajectories\.actions must hold action ids"),
        (_set("trajectories", "policy", 2.0), r"trajectories\.policy must hold probabilities"),
        (lambda g: g["seats"].view(-1).__setitem__(0, 2), r"seats must hold search or raw"),
        (lambda g: g["tree"].pop("sim"), r"tree must hold exactly"),
        (
            lambda g: g["tree"].__setitem__("sim", g["tree"]["sim"].long()),
            r"tree\.sim must be a int32",
        ),
        (
            lambda g: g["trajectories"].__setitem__("states", torch.zeros(3, STATE_LEN)),
            r"states must be",
        ),
        (lambda g: g.__setitem__("late", True), r"games\.late must be false"),
        (_with_root_values(float("inf")), r"trajectories\.value must hold values in -1\.\.1"),
    ],
)
def test_damaged_games_in_flight_are_refused_when_the_run_opens(tmp_path, change, message):
    payload = checkpoint_payload(tmp_path)
    with pytest.raises(CheckpointError, match=rf"generators\[0\]\.games.*{message}|{message}"):
        resume(tmp_path, with_games(payload, change))


_PAYLOAD: dict = {}


def _cast(value: int, dtype: torch.dtype) -> int | float:
    """`value` as a value of `dtype` (ints wrapped into its range)."""
    if dtype.is_floating_point:
        return value / 7
    bits = torch.iinfo(dtype).bits
    return (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([row[0] for row in SAVED_FIELDS]),
    st.integers(0, 10**6),
    st.one_of(st.integers(-3, 80), st.integers(-(2**31), 2**31 - 1)),
)
def test_fuzz_games_in_flight_the_check_accepts_are_played_safely(name, at, value):
    """One value of a saved tree array set to anything: refused, or self-play goes on."""
    if "selfplay" not in _PAYLOAD:
        _PAYLOAD["selfplay"] = played_selfplay()
    config, played, net = _PAYLOAD["selfplay"]
    saved = played.games_state()
    array = saved["tree"][name].view(-1)
    if not len(array):
        return
    array[at % len(array)] = _cast(value, array.dtype)
    restored = build_selfplay(config, 1)
    try:
        restored.restore_games(saved)
    except ValueError as error:
        assert str(error).startswith(("games.", "state row")), error
        return
    restored.play(30, BatchedInference(net), _Sink())
