"""The games in flight of a `SelfPlay` as checkpoint data, and back, so that a run stopped
between two iterations and resumed plays on exactly as if it had not stopped.

What is saved (`games_state`), as tensors and plain values only:

* ``tree``: the batched search's arrays, every row of `search.TREE_FIELDS` but the
  ``scratch`` ones (which a step writes before it reads them): the per-game ones whole, the
  per-node ones only for the nodes of the searches in progress (``phase == SEARCHING``, the
  first ``num_nodes[b]`` of game b, one after the other). A game waiting for a new search
  reads none of its nodes: its next step resets the root. So a new field of the tree is saved
  without a change here.
* ``trajectories``: each game's positions searched so far, stacked: ``lengths`` (positions
  per game), ``states``, ``n_legal``, the legal ``actions`` and improved ``policy`` of every
  position one after the other (``n_legal`` each) and ``full``.
* ``seats``.

A checkpoint may also hold what runs saved while satellites had a late search budget and
short-term value targets (``late``, false, and the trajectories' root ``value``): it is
checked and left unused, so such a run resumes (one that used either is refused by its
config, `trainer.RETIRED`).

The random stream is saved beside them (`AZGenerator.state`). A run with an opponent
(`search.opponent`) saves none of this: its opponent agents hold state of their own (a
batched search, a random stream), so such a run starts fresh games on resume.

`check_games` checks what a file holds before anything of it is used: the names, dtypes and
shapes, and every value the numba kernels index with or walk along (phases, budgets,
simulation counts, node counts, parents before children, child ids and actions in range,
positions the engine can read, games still under way), since the kernels do not check
bounds: a damaged or crafted file is a ValueError naming the field, never a crash or a loop
inside a kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from satellites_env.core import engine
from satellites_env.core.engine import N_ACTIONS, ONGOING, STATE_LEN
from satellites_env.core.state import check_state_rows

from .search import NEED_ROOT, SEARCHING, SLOTS, TREE_FIELDS, SearchOptions, Tree
from .seats import RAW, SEARCH

#: the tree's rows a checkpoint holds: all but the scratch ones
SAVED_FIELDS = tuple(row for row in TREE_FIELDS if row[1] != "scratch")
TRAJECTORY_FIELDS = {
    "lengths": np.int32,
    "states": np.int32,
    "n_legal": np.int32,
    "actions": np.int16,
    "policy": np.float32,
    "full": np.bool_,
}
Trajectory = list[tuple[np.ndarray, np.ndarray, np.ndarray, bool]]


def searched_nodes(tree: Tree) -> np.ndarray:
    """(games, nodes) bool: the nodes of the searches in progress."""
    nodes = tree.node_state.shape[1]
    searching = tree.phase == SEARCHING
    used: np.ndarray = searching[:, None] & (np.arange(nodes)[None, :] < tree.num_nodes[:, None])
    return used


def games_state(tree: Tree, trajectories: list[Trajectory], seats: np.ndarray) -> dict[str, Any]:
    """The games in flight as checkpoint data (the module docstring)."""
    used = searched_nodes(tree)
    saved = {}
    for name, scope, *_ in SAVED_FIELDS:
        array = getattr(tree, name)
        saved[name] = torch.from_numpy(array[used] if scope == "node" else array.copy())
    positions = [position for trajectory in trajectories for position in trajectory]
    legal = [len(p[1]) for p in positions]
    arrays = {
        "lengths": np.array([len(t) for t in trajectories], np.int32),
        "states": np.array([p[0] for p in positions], np.int32).reshape(-1, STATE_LEN),
        "n_legal": np.array(legal, np.int32),
        "actions": np.concatenate([p[1] for p in positions] or [np.zeros(0, np.int16)]),
        "policy": np.concatenate([p[2] for p in positions] or [np.zeros(0, np.float32)]),
        "full": np.array([bool(p[3]) for p in positions], np.bool_),
    }
    return {
        "tree": saved,
        "trajectories": {
            key: torch.from_numpy(np.ascontiguousarray(value, TRAJECTORY_FIELDS[key]))
            for key, value in arrays.items()
        },
        "seats": torch.from_numpy(seats.astype(np.int32)),
    }


def _array(value: Any, where: str, shape: tuple, dtype: Any) -> np.ndarray:
    """The numpy array of a tensor of exactly `shape` and `dtype`, else ValueError."""
    expected = torch.from_numpy(np.zeros(0, dtype)).dtype
    if not (
        isinstance(value, torch.Tensor)
        and value.dtype == expected
        and tuple(value.shape) == tuple(shape)
    ):
        raise ValueError(
            f"games.{where} must be a {np.dtype(dtype)} tensor of shape {tuple(shape)}, got "
            f"{getattr(value, 'dtype', type(value).__name__)} {tuple(getattr(value, 'shape', ()))}"
        )
    return value.numpy()


def _require(ok: Any, where: str, what: str) -> None:
    if not bool(np.all(ok)):
        raise ValueError(f"games.{where} must hold {what}")


def _mapping(value: Any, where: str, keys: set[str], retired: str = "") -> dict:
    """`value` if it is a dict of exactly `keys`, and perhaps the `retired` key."""
    if not isinstance(value, dict) or set(value) - {retired} != keys:
        found = sorted(map(str, value)) if isinstance(value, dict) else type(value).__name__
        raise ValueError(f"games.{where} must hold exactly {sorted(keys)}, got {found}")
    return value


def check_games(data: Any, options: SearchOptions, games: int, max_moves: int) -> dict[str, Any]:
    """The games in flight of `games` games from a checkpoint, checked (the module docstring)
    and as numpy arrays: {"tree": {field: array}, "trajectories": [per game: its
    positions], "seats"}. ValueError naming the field when anything does not fit."""
    data = _mapping(data, "", {"tree", "trajectories", "seats"}, retired="late")
    if data.get("late", False) is not False:
        raise ValueError(f"games.late must be false, got {data['late']!r}"[:200])
    seats = _array(data["seats"], "seats", (games, 2), np.int32)
    _require((seats == SEARCH) | (seats == RAW), "seats", "search or raw-policy seats")
    return {
        "tree": _check_tree(data["tree"], options, games, max_moves),
        "trajectories": _check_trajectories(data["trajectories"], games, max_moves),
        "seats": seats.copy(),
    }


def _check_tree(
    data: Any, options: SearchOptions, games: int, max_moves: int
) -> dict[str, np.ndarray]:
    data = _mapping(data, "tree", {row[0] for row in SAVED_FIELDS})
    nodes = int(options.budgets.max()) + 1
    tree: dict[str, np.ndarray] = {}
    for name, scope, shape, dtype, _ in SAVED_FIELDS:
        if scope != "node":
            tree[name] = _array(data[name], f"tree.{name}", (games, *shape), dtype)
    phase, kind, sim, count = tree["phase"], tree["kind"], tree["sim"], tree["num_nodes"]
    _require((phase == NEED_ROOT) | (phase == SEARCHING), "tree.phase", "phases 0 or 1")
    _require((kind >= 0) & (kind < len(options.budgets)), "tree.kind", "budgets of the config")
    searching = phase == SEARCHING
    budget = options.budgets[np.clip(kind, 0, len(options.budgets) - 1)]
    _require(((sim >= 0) & (sim <= options.budgets.max())), "tree.sim", "simulation counts")
    _require(
        ~searching | ((sim < budget) & (count >= 1) & (count <= sim + 1)),
        "tree.num_nodes",
        "at most one node per simulation done in each search in progress",
    )
    _require((count >= 0) & (count <= nodes), "tree.num_nodes", f"counts in 0..{nodes}")
    for name, low, high in (
        ("pending", -1, nodes - 1),
        ("eval_row", -1, games - 1),
        ("logit_row", -1, games - 1),
        ("victim", -1, -1),  # no opponent: no victim-play
        ("raw_move", 0, 1),
        ("eval_flag", 0, 2),
        ("refill", 0, 1),
        ("victim_leaf", 0, 1),
    ):
        ok = (tree[name] >= low) & (tree[name] <= high)
        _require(ok, f"tree.{name}", f"values in {low}..{high}")
    _require(np.isfinite(tree["gumbel"]), "tree.gumbel", "finite numbers")
    check_state_rows(tree["game_state"])
    ongoing = [engine.status(state, max_moves) == ONGOING for state in tree["game_state"]]
    _require(ongoing, "tree.game_state", f"games under way (under {max_moves} moves)")
    # the nodes of the searches in progress, one game's after the other's
    sizes = np.where(searching, count, 0)
    total = int(sizes.sum())
    for name, scope, shape, dtype, _ in SAVED_FIELDS:
        if scope == "node":
            tree[name] = _array(data[name], f"tree.{name}", (total, *shape), dtype)
    index = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)  # within its tree
    size = np.repeat(sizes, sizes)
    parent = tree["node_parent"]
    _require(
        np.where(index == 0, parent == -1, (parent >= 0) & (parent < index)),
        "tree.node_parent",
        "-1 at a root and an earlier node elsewhere",
    )
    children = tree["node_children"]
    _require((children >= 0) & (children <= SLOTS), "tree.node_children", f"counts in 0..{SLOTS}")
    listed = np.arange(SLOTS)[None, :] < children[:, None]
    child, action = tree["child_node"], tree["child_action"]
    _require(
        ~listed | (child == -1) | ((child > index[:, None]) & (child < size[:, None])),
        "tree.child_node",
        "-1 or a later node of the same tree",
    )
    _require(
        ~listed | ((action >= 0) & (action < N_ACTIONS)),
        "tree.child_action",
        f"actions in 0..{N_ACTIONS - 1}",
    )
    for name in ("node_terminal", "node_policy"):
        _require((tree[name] == 0) | (tree[name] == 1), f"tree.{name}", "0 or 1")
    for name in ("node_value_sum", "node_raw", "child_logit"):
        _require(np.isfinite(tree[name]), f"tree.{name}", "finite numbers")
    _require(tree["node_visits"] >= 0, "tree.node_visits", "counts >= 0")
    check_state_rows(tree["node_state"])
    roots = (np.cumsum(sizes) - sizes)[searching]
    _require(
        tree["node_state"][roots] == tree["game_state"][searching],
        "tree.node_state",
        "each search's game position at its root",
    )
    _check_children(tree, max_moves)
    return {name: array.copy() for name, array in tree.items()}


def _check_children(tree: dict[str, np.ndarray], max_moves: int) -> None:
    """Each saved node's children as the search lists them: none at a node where the game
    is over (and only there is it marked terminal), else none yet or exactly the legal
    actions of its position in id order (all of them where it holds its logits): the
    kernels play these actions unchecked."""
    work = engine.new_work()
    mask = np.zeros(N_ACTIONS, np.int8)
    for i, state in enumerate(tree["node_state"]):
        over = engine.status(state, max_moves) != ONGOING
        n = int(tree["node_children"][i])
        if over:
            _require(
                bool(tree["node_terminal"][i]) and n == 0,
                "tree.node_terminal",
                "1 exactly where the game is over, with no children",
            )
            continue
        _require(tree["node_terminal"][i] == 0, "tree.node_terminal", "0 where the game goes on")
        mask[:] = 0
        legal = engine.fill_legal_mask(state, mask, work)
        _require(
            (n == 0 and tree["node_policy"][i] == 0)
            or (n == legal and np.array_equal(tree["child_action"][i, :n], np.flatnonzero(mask))),
            "tree.child_action",
            "the legal actions of each node's position",
        )


def _check_trajectories(data: Any, games: int, max_moves: int) -> list[Trajectory]:
    data = _mapping(data, "trajectories", set(TRAJECTORY_FIELDS), retired="value")
    lengths = _array(data["lengths"], "trajectories.lengths", (games,), np.int32)
    _require((lengths >= 0) & (lengths <= max_moves), "trajectories.lengths", f"0..{max_moves}")
    n = int(lengths.sum())
    states = _array(data["states"], "trajectories.states", (n, STATE_LEN), np.int32)
    n_legal = _array(data["n_legal"], "trajectories.n_legal", (n,), np.int32)
    _require((n_legal >= 1) & (n_legal <= SLOTS), "trajectories.n_legal", f"counts in 1..{SLOTS}")
    entries = int(n_legal.sum())
    actions = _array(data["actions"], "trajectories.actions", (entries,), np.int16)
    policy = _array(data["policy"], "trajectories.policy", (entries,), np.float32)
    full = _array(data["full"], "trajectories.full", (n,), np.bool_)
    if "value" in data:
        value = _array(data["value"], "trajectories.value", (n,), np.float32)
        _require(np.abs(value) <= 1, "trajectories.value", "values in -1..1")
    _require((actions >= 0) & (actions < N_ACTIONS), "trajectories.actions", "action ids")
    _require((policy >= 0) & (policy <= 1), "trajectories.policy", "probabilities")
    check_state_rows(states)
    starts = np.concatenate([[0], np.cumsum(n_legal)])
    positions = [
        (
            states[i].copy(),
            actions[starts[i] : starts[i + 1]].copy(),
            policy[starts[i] : starts[i + 1]].copy(),
            bool(full[i]),
        )
        for i in range(n)
    ]
    ends = np.cumsum(lengths)
    return [positions[end - length : end] for length, end in zip(lengths, ends, strict=True)]


def restore_tree(tree: Tree, checked: dict[str, np.ndarray]) -> None:
    """Put a checked tree (`check_games`'s) into `tree`'s arrays in place; the nodes not
    saved, and the scratch rows, take their initial values."""
    for name, scope, _, _, fill in TREE_FIELDS:
        if scope != "node":
            target = getattr(tree, name)
            target[...] = checked[name] if scope == "game" else fill
    used = searched_nodes(tree)
    for name, scope, _, _, fill in TREE_FIELDS:
        if scope == "node":
            target = getattr(tree, name)
            target[...] = fill
            target[used] = checked[name]
