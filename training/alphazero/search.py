"""Batched Gumbel MCTS (Danihelka et al., ICLR 2022) with the trees in arrays and the tree
operations in numba.

B searches run side by side, one per game in flight. Each simulation step is:

1. ``prepare`` (numba, parallel over games): every game either starts a new search (its root
   needs a network evaluation) or descends its tree to a leaf, applies the leaf's action on the
   engine and writes the leaf's observation planes into row b of one (B, 100, 22) buffer. A
   leaf that ends the game is valued exactly by the rules and backed up at once (no network).
2. one batched forward pass of the network over the rows that need it (Python, torch); the
   policy heads (a quarter of az_quick's forward pass at batch 64) run only on the rows whose
   logits the search will read (below);
3. ``finish`` (numba): expand those leaves with the network's logits over their legal actions,
   back up the value; every search that has spent its budget picks its move (and the improved
   policy target), plays it on its game, and resets its tree.

A leaf's logits are read only if the search descends from it again. Sequential halving fixes
how often each root action is visited (``revisits``: the most visited one gets
``max(table) + 1``), and a node at depth d is descended from only when its root action gets
more than d visits, so a leaf with d >= that number needs its value alone: with 64 simulations
over 64 considered actions, every leaf of a full search. Should a search ever descend from a
node without logits anyway, it first evaluates that node again for them (a *refill*, which
spends a step but no simulation), so the search is the same either way.

So each game progresses on its own (a search that ends starts the next one at the next
step), and every step's forward pass is full. Playout-cap randomisation (KataGo) gives each
search its own budget (``kind``: full or cheap).

The maths follow mctx's ``gumbel_muzero_policy``:

* root: Gumbel-top-k: the first m = min(num legal, max_considered) simulations visit the m
  actions with the largest ``g(a) + logits(a)``, then sequential halving (mctx's table of
  considered visits) keeps the better half by ``g + logits + sigma(completed q)`` until the
  budget is spent; the move is the best of the most visited considered actions. Evaluation
  uses g = 0 (deterministic).
* completed q: visited children keep q; unvisited ones get v_mix, the network value of the
  node mixed with the prior-weighted q of the visited children;
  ``sigma(q) = (c_visit + max_b N(b)) * c_scale * q``. Unlike mctx, q is not min-max rescaled
  to [0, 1]: it stays on the game-result scale [-1, 1], so that small differences between
  moves make small differences in the targets.
* improved policy target: ``softmax(logits + sigma(completed q))`` over the legal actions.
* interior nodes: argmax of ``softmax(logits + sigma(completed q)) - N(a) / (1 + sum N)``.

Data: the B trees and their games live in one record of arrays, `Tree` (a named tuple
that numba takes as one argument; its arrays are allocated from ``TREE_FIELDS``, so a new
per-node quantity is a line there and its typed name in `Tree`), the settings in one
`SearchOptions`, and each finished search lands in one `Finished` record. The rules are
reached through the engine API ([`satellites_env.core.engine`][satellites_env.core.engine]).

Victim-play (A-MCTS-S of Wang et al., "Adversarial Policies Beat Superhuman Go AIs", ICML
2023): an exploiter's search may model its frozen target by the target's own network. A game
whose ``victim`` is a colour routes each node by its player to move: where that colour is to
move, the node's prior (logits over its legal moves) is the target network's, and the move
descended to is the target's (``_victim_choice``: its prior alone, no q); every leaf's value
still comes from the searching network. So a step evaluates, besides the searcher's rows, the
target's nodes whose logits the search reads, all of them in one call of the target's
evaluator (``victim_leaf`` marks them; such a leaf's value is the searcher's row as ever).

Values: the player to move can stay the same (the push of a displacement, grace moves), so a
node's value sum is kept from the view of the player to move *at that node*, and the sign
flips on the way up only where the player to move changes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from satellites_env.core.engine import (
    DRAW,
    N_ACTIONS,
    N_CELLS,
    ONGOING,
    STATE_LEN,
    TO_MOVE,
    apply_unchecked,
    fill_legal_mask,
    game_status,
    new_work,
    winner_code,
)
from satellites_env.observation import N_PLANES, fill_observation

SLOTS = 256  # child slots per node: more than the most legal actions (12 x 8 x at most 4 = 240)
# a game's phase: its next step starts a search, continues one, or leaves the game alone
NEED_ROOT, SEARCHING, IDLE = 0, 1, 2
NEG = -1e30
WORK_SHAPE = new_work().shape


# --------------------------------------------------------------------------- schedules


def considered_visits(max_considered: int, simulations: int) -> list[int]:
    """Sequential halving as in mctx: for each simulation, the visit count an action must have
    to be visited by it (``get_sequence_of_considered_visits``)."""
    if max_considered <= 1:
        return list(range(simulations))
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(sequence) < simulations:
        extra = max(1, int(simulations / (log2max * considered)))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return sequence[:simulations]


def considered_for(max_considered: int, budget: int) -> int:
    """Root actions a search of `budget` simulations samples: max_considered when the budget
    visits each of them at least once; a smaller budget samples half of it (at least 2), so
    that sequential halving still has a round to halve in."""
    if budget >= max_considered:
        return max(1, max_considered)
    return max(1, min(max_considered, max(2, budget // 2)))


def visit_table(max_considered: int, budgets: list[int]) -> np.ndarray:
    """table[kind, m, i]: considered visit count at simulation i of a search of budget
    budgets[kind] with m considered actions."""
    width = max(max(budgets), 1)
    table = np.zeros((len(budgets), max_considered + 1, width), dtype=np.int32)
    for kind, budget in enumerate(budgets):
        for m in range(max_considered + 1):
            table[kind, m, :budget] = considered_visits(m, budget)
    return table


def revisit_table(table: np.ndarray, budgets: list[int]) -> np.ndarray:
    """revisits[kind, m]: the visits of the most visited root action in a search of budget
    budgets[kind] with m considered actions (the schedule fixes the visit counts, not which
    actions get them). A node at depth d is descended from only if its root action gets more
    than d visits."""
    revisits = np.zeros(table.shape[:2], dtype=np.int32)
    for kind, budget in enumerate(budgets):
        if budget > 0:
            revisits[kind] = table[kind, :, :budget].max(axis=1) + 1
    return revisits


# --------------------------------------------------------------------------- records


#: The network call of a search: (obs, policy rows) -> (logits, values), as `BatchedSearch`
#: says; [`BatchedInference`][training.common.network.BatchedInference] is one.
Evaluate = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class SearchOptions(NamedTuple):
    """The settings of a search: sigma's constants, the move cap of the games searched (R20),
    and the schedule of each budget (``kind``): its simulations, considered root actions,
    sequential-halving table and revisit depth."""

    c_visit: float
    c_scale: float
    max_moves: int
    budgets: np.ndarray
    considered: np.ndarray
    table: np.ndarray
    revisits: np.ndarray


def search_options(
    budgets: list[int],
    max_considered: int = 16,
    c_visit: float = 50.0,
    c_scale: float = 0.1,
    max_moves: int = 400,
) -> SearchOptions:
    """The options record of searches with these budgets (simulations per kind of search)."""
    considered = [considered_for(max_considered, budget) for budget in budgets]
    table = visit_table(max(considered), list(budgets))
    return SearchOptions(
        float(c_visit),
        float(c_scale),
        int(max_moves),
        np.asarray(budgets, dtype=np.int32),
        np.asarray(considered, dtype=np.int32),
        table,
        revisit_table(table, list(budgets)),
    )


#: Every array of the B trees and their games: (name, scope, trailing shape, dtype, initial
#: value). "node" arrays are (B, nodes, ...), "game" and "scratch" arrays (B, ...); a
#: "scratch" array is written by a step before the step reads it, so a checkpoint's games in
#: flight (`inflight`) leave it out and every other row in. A new quantity is a row here and
#: its typed name in `Tree` (a test checks that they agree); the allocation follows.
TREE_FIELDS = (
    # per node
    ("node_state", "node", (STATE_LEN,), np.int32, 0),  # the position at the node
    ("node_parent", "node", (), np.int32, -1),
    ("node_visits", "node", (), np.int32, 0),
    ("node_value_sum", "node", (), np.float32, 0),  # for the player to move at the node
    ("node_raw", "node", (), np.float32, 0),  # its network value (exact at a terminal node)
    ("node_terminal", "node", (), np.int8, 0),
    ("node_policy", "node", (), np.int8, 0),  # 1: child_logit holds its logits
    ("node_children", "node", (), np.int32, 0),  # legal actions listed in child_action
    ("child_action", "node", (SLOTS,), np.int16, 0),
    ("child_logit", "node", (SLOTS,), np.float32, 0),
    ("child_node", "node", (SLOTS,), np.int32, -1),  # -1: not created yet
    # per game: its position, the state of its search, the network's rows
    ("game_state", "game", (STATE_LEN,), np.int32, 0),  # the root of the next search
    ("num_nodes", "game", (), np.int32, 0),
    ("phase", "game", (), np.int32, NEED_ROOT),  # NEED_ROOT, SEARCHING or IDLE
    ("kind", "game", (), np.int32, 0),  # which budget the search has
    ("sim", "game", (), np.int32, 0),  # simulations done
    ("pending", "game", (), np.int32, -1),  # the node waiting for the network
    ("gumbel", "game", (SLOTS,), np.float32, 0),  # root noise per child slot (0: none)
    ("raw_move", "game", (), np.int8, 0),  # 1: play the prior's most likely action
    ("eval_flag", "game", (), np.int8, 0),  # 1: value and logits, 2: value alone
    ("refill", "game", (), np.int8, 0),  # 1: pending is evaluated for its logits only
    ("eval_row", "game", (), np.int32, -1),  # its row of the network's batch
    ("logit_row", "game", (), np.int32, -1),  # its row of the logits (-1: none)
    # victim-play: the colour whose nodes take the target's policy (-1: none), and 1 where
    # the node evaluated this step is such a node and needs its logits
    ("victim", "game", (), np.int32, -1),
    ("victim_leaf", "game", (), np.int8, 0),
    # per game: scratch
    ("obs", "scratch", (N_CELLS, N_PLANES), np.float32, 0),
    ("mask", "scratch", (N_ACTIONS,), np.int8, 0),
    ("work", "scratch", WORK_SHAPE, np.int32, 0),
    ("sigma", "scratch", (SLOTS,), np.float32, 0),
)


class Tree(NamedTuple):
    """The arrays of B trees and their games, one per `TREE_FIELDS` row, in its order."""

    node_state: np.ndarray
    node_parent: np.ndarray
    node_visits: np.ndarray
    node_value_sum: np.ndarray
    node_raw: np.ndarray
    node_terminal: np.ndarray
    node_policy: np.ndarray
    node_children: np.ndarray
    child_action: np.ndarray
    child_logit: np.ndarray
    child_node: np.ndarray
    game_state: np.ndarray
    num_nodes: np.ndarray
    phase: np.ndarray
    kind: np.ndarray
    sim: np.ndarray
    pending: np.ndarray
    gumbel: np.ndarray
    raw_move: np.ndarray
    eval_flag: np.ndarray
    refill: np.ndarray
    eval_row: np.ndarray
    logit_row: np.ndarray
    victim: np.ndarray
    victim_leaf: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    work: np.ndarray
    sigma: np.ndarray


#: One finished search per game and step (``ready[b]``): the position searched, the move
#: played, the improved policy over its legal actions, the root value after the search, its
#: kind, whether it searched at all (0: one legal action), and the game's end.
FINISHED_FIELDS = (
    ("ready", (), np.int8),
    ("state", (STATE_LEN,), np.int32),
    ("action", (), np.int32),
    ("n_legal", (), np.int32),
    ("actions", (SLOTS,), np.int16),
    ("policy", (SLOTS,), np.float32),
    ("value", (), np.float32),
    ("kind", (), np.int32),
    ("searched", (), np.int8),
    ("done", (), np.int8),
    ("winner", (), np.int32),
)


class Finished(NamedTuple):
    """The arrays of the finished searches, one per `FINISHED_FIELDS` row, in its order."""

    ready: np.ndarray
    state: np.ndarray
    action: np.ndarray
    n_legal: np.ndarray
    actions: np.ndarray
    policy: np.ndarray
    value: np.ndarray
    kind: np.ndarray
    searched: np.ndarray
    done: np.ndarray
    winner: np.ndarray


def new_tree(games: int, nodes: int) -> Tree:
    """The arrays of `games` trees of `nodes` nodes each (a search of n simulations needs
    n + 1)."""
    return Tree(
        *(
            np.full(
                (games, nodes, *shape) if scope == "node" else (games, *shape), fill, dtype=dtype
            )
            for _, scope, shape, dtype, fill in TREE_FIELDS
        )
    )


def new_finished(games: int) -> Finished:
    return Finished(
        *(np.zeros((games, *shape), dtype=dtype) for _, shape, dtype in FINISHED_FIELDS)
    )


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _terminal_value(state, work):
    """The final result from the view of the player to move in `state` (+1, -1, 0)."""
    code = winner_code(state[:N_CELLS], work)
    if code == DRAW:
        return 0.0
    return 1.0 if code == state[TO_MOVE] else -1.0


@njit(cache=True)
def _list_children(t, b, node):
    """List the legal actions of `node` as its children (none created yet)."""
    fill_legal_mask(t.node_state[b, node], t.mask[b], t.work[b])
    n = 0
    for a in range(N_ACTIONS):
        if t.mask[b, a]:
            t.child_action[b, node, n] = a
            t.child_node[b, node, n] = -1
            n += 1
    t.node_children[b, node] = n


@njit(cache=True)
def _backup(t, b, leaf, value):
    node = leaf
    v = value
    while True:
        t.node_visits[b, node] += 1
        t.node_value_sum[b, node] += v
        parent = t.node_parent[b, node]
        if parent < 0:
            return
        if t.node_state[b, parent, TO_MOVE] != t.node_state[b, node, TO_MOVE]:
            v = -v
        node = parent


@njit(cache=True)
def _visits_of(t, b, node, i):
    c = t.child_node[b, node, i]
    return t.node_visits[b, c] if c >= 0 else 0


@njit(cache=True)
def _softmax_scale(score, n):
    """The largest of score[:n] and z, the sum of exp(score - largest): softmax(score)(a) is
    exp(score[a] - largest) / z, without overflow."""
    top = NEG
    for i in range(n):
        if score[i] > top:
            top = score[i]
    z = 0.0
    for i in range(n):
        z += math.exp(score[i] - top)
    return top, z


@njit(cache=True)
def completed_sigma(t, b, node, options):
    """sigma(completed q) of every child of `node` into t.sigma[b, :n]; returns the total
    visits of the children. q is from the view of the player to move at `node`."""
    n = t.node_children[b, node]
    me = t.node_state[b, node, TO_MOVE]
    logit, sigma = t.child_logit[b, node], t.sigma[b]
    top, z = _softmax_scale(logit, n)
    total = 0
    max_visits = 0
    weight = 0.0
    weighted_q = 0.0
    for i in range(n):
        c = t.child_node[b, node, i]
        if c >= 0 and t.node_visits[b, c] > 0:
            visits = t.node_visits[b, c]
            q = t.node_value_sum[b, c] / visits
            if t.node_state[b, c, TO_MOVE] != me:
                q = -q
            sigma[i] = q
            p = max(math.exp(logit[i] - top) / z, 1e-30)
            weight += p
            weighted_q += p * q
            total += visits
            if visits > max_visits:
                max_visits = visits
    mixed = t.node_raw[b, node]
    if total > 0:
        mixed = (t.node_raw[b, node] + total * weighted_q / weight) / (total + 1)
    for i in range(n):
        c = t.child_node[b, node, i]
        if not (c >= 0 and t.node_visits[b, c] > 0):
            sigma[i] = mixed
    scale = (options.c_visit + max_visits) * options.c_scale
    for i in range(n):
        sigma[i] = sigma[i] * scale
    return total


@njit(cache=True)
def _root_choice(t, b, considered_visit, options):
    """The root action slot whose visit count is `considered_visit` with the best
    g + logits + sigma(completed q) (mctx's score_considered)."""
    completed_sigma(t, b, 0, options)
    n = t.node_children[b, 0]
    logit, sigma, gumbel = t.child_logit[b, 0], t.sigma[b], t.gumbel[b]
    top = NEG
    for i in range(n):
        if logit[i] > top:
            top = logit[i]
    best = -1
    best_score = NEG
    fallback = 0
    fallback_score = NEG
    for i in range(n):
        score = max(-1e9, gumbel[i] + logit[i] - top + sigma[i])
        if score > fallback_score:
            fallback, fallback_score = i, score
        if _visits_of(t, b, 0, i) == considered_visit and score > best_score:
            best, best_score = i, score
    return best if best >= 0 else fallback


@njit(cache=True)
def _interior_choice(t, b, node, options):
    total = completed_sigma(t, b, node, options)
    n = t.node_children[b, node]
    logit, sigma = t.child_logit[b, node], t.sigma[b]
    for i in range(n):
        sigma[i] = logit[i] + sigma[i]
    return _proportional_choice(t, b, node, sigma, total)


@njit(cache=True)
def _victim_choice(t, b, node):
    """The target's move at one of its nodes (victim-play): argmax of prior(a) - N(a) / (1 +
    sum N), the target's prior alone. The target plays its own policy, not what the
    exploiter's values say is best for it, so the exploiter's q has no say here; this is the
    interior rule without sigma(q): deterministic, and each move's visits track its prior
    (the visit counts A-MCTS-S's sampled moves have in expectation)."""
    total = 0
    for i in range(t.node_children[b, node]):
        total += _visits_of(t, b, node, i)
    return _proportional_choice(t, b, node, t.child_logit[b, node], total)


@njit(cache=True)
def _proportional_choice(t, b, node, score, total):
    """The child slot with the largest softmax(score)(a) - N(a) / (1 + total): the visits
    follow the distribution softmax(score)."""
    n = t.node_children[b, node]
    top, z = _softmax_scale(score, n)
    best = 0
    best_score = NEG
    for i in range(n):
        value = math.exp(score[i] - top) / z - _visits_of(t, b, node, i) / (1.0 + total)
        if value > best_score:
            best, best_score = i, value
    return best


@njit(cache=True)
def _is_victim(t, b, node):
    """Whether the target is to move at `node` (victim-play): its prior is the target's."""
    return t.victim[b] >= 0 and t.node_state[b, node, TO_MOVE] == t.victim[b]


@njit(cache=True)
def _observe(t, b, node, max_moves):
    """The node's observation planes into row b of the network's input."""
    fill_observation(
        t.node_state[b, node], t.node_state[b, node, TO_MOVE], max_moves, t.obs[b], t.work[b]
    )


@njit(cache=True)
def _new_node(t, b, parent, slot):
    """Create the child in `slot` of `parent` (its state: the parent's after the action)."""
    child = t.num_nodes[b]
    t.num_nodes[b] += 1
    t.child_node[b, parent, slot] = child
    t.node_state[b, child, :] = t.node_state[b, parent]
    apply_unchecked(t.node_state[b, child], np.int64(t.child_action[b, parent, slot]), t.work[b])
    t.node_parent[b, child] = parent
    t.node_visits[b, child] = 0
    t.node_value_sum[b, child] = 0.0
    t.node_policy[b, child] = 0
    return child


# The parallel kernels run one function per game: numba loses writes made through a record's
# fields directly in a prange body, not those made in a function it calls.
# nogil: with `overlap: true` the learner's gradient steps run in another thread meanwhile.
@njit(parallel=True, cache=True, nogil=True)
def prepare(t, options):
    """Step 1: new roots, or one selection down to a leaf, per game; obs rows of the nodes
    that need the network: eval_flag[b] = 1 for value and logits, 2 for the value alone (a
    leaf that is never descended from), and refill[b] = 1 where a node is evaluated again
    only for its logits; victim_leaf[b] = 1 where those logits are the target's
    (victim-play: the target is to move at the node)."""
    for b in prange(t.node_state.shape[0]):
        _prepare_game(t, b, options)


@njit(cache=True)
def _prepare_game(t, b, options):
    _select(t, b, options)
    t.victim_leaf[b] = 0
    if t.eval_flag[b] == 1:
        node = 0 if t.phase[b] == NEED_ROOT else t.pending[b]
        if _is_victim(t, b, node):
            t.victim_leaf[b] = 1


@njit(cache=True)
def _select(t, b, options):
    max_moves = options.max_moves
    t.eval_flag[b] = 0
    t.refill[b] = 0
    if t.phase[b] == IDLE:
        return
    if t.phase[b] == NEED_ROOT:
        t.node_state[b, 0, :] = t.game_state[b]
        t.node_parent[b, 0] = -1
        t.node_visits[b, 0] = 0
        t.node_value_sum[b, 0] = 0.0
        t.node_terminal[b, 0] = 0
        t.node_policy[b, 0] = 0
        t.num_nodes[b] = 1
        _list_children(t, b, 0)
        _observe(t, b, 0, max_moves)
        t.eval_flag[b] = 1
        return
    kind = t.kind[b]
    m = min(options.considered[kind], t.node_children[b, 0])
    node = 0
    depth = 0
    while True:
        if t.node_terminal[b, node]:
            _backup(t, b, node, t.node_raw[b, node])
            t.sim[b] += 1
            break
        if t.node_policy[b, node] == 0:  # a value-only leaf after all: its logits first
            _list_children(t, b, node)
            _observe(t, b, node, max_moves)
            t.pending[b] = node
            t.refill[b] = 1
            t.eval_flag[b] = 1
            break
        if node == 0:
            slot = _root_choice(t, b, options.table[kind, m, t.sim[b]], options)
        elif _is_victim(t, b, node):
            slot = _victim_choice(t, b, node)
        else:
            slot = _interior_choice(t, b, node, options)
        depth += 1
        child = t.child_node[b, node, slot]
        if child >= 0:
            node = child
            continue
        child = _new_node(t, b, node, slot)
        if game_status(t.node_state[b, child], max_moves) != ONGOING:
            # the game is over there: valued exactly, no network call
            t.node_terminal[b, child] = 1
            t.node_children[b, child] = 0
            t.node_raw[b, child] = _terminal_value(t.node_state[b, child], t.work[b])
            _backup(t, b, child, t.node_raw[b, child])
            t.sim[b] += 1
        else:
            t.node_terminal[b, child] = 0
            if depth < options.revisits[kind, m]:  # it may be descended from: its moves
                _list_children(t, b, child)
                t.eval_flag[b] = 1
            else:
                t.node_children[b, child] = 0
                t.eval_flag[b] = 2
            _observe(t, b, child, max_moves)
            t.pending[b] = child
        break


@njit(cache=True)
def _finish_search(t, b, options, searched, out):
    """The search of game b is over: improved policy, the move, play it, reset the tree."""
    n = t.node_children[b, 0]
    completed_sigma(t, b, 0, options)
    logit, sigma, gumbel = t.child_logit[b, 0], t.sigma[b], t.gumbel[b]
    top = NEG
    max_visits = 0
    for i in range(n):
        s = logit[i] + sigma[i]
        if s > top:
            top = s
        v = _visits_of(t, b, 0, i)
        if v > max_visits:
            max_visits = v
    z = 0.0
    for i in range(n):
        z += math.exp(logit[i] + sigma[i] - top)
    best = 0
    best_score = NEG
    logit_top = NEG
    logit_best = 0  # the prior's most likely action (the lowest id among equals)
    for i in range(n):
        if logit[i] > logit_top:
            logit_top, logit_best = logit[i], i
    for i in range(n):
        out.actions[b, i] = t.child_action[b, 0, i]
        out.policy[b, i] = math.exp(logit[i] + sigma[i] - top) / z
        if _visits_of(t, b, 0, i) == max_visits:
            score = max(-1e9, gumbel[i] + logit[i] - logit_top + sigma[i])
            if score > best_score:
                best, best_score = i, score
    if t.raw_move[b]:  # the raw policy's move, as the raw-policy agent's argmax takes it
        best = logit_best
    action = t.child_action[b, 0, best]
    out.ready[b] = 1
    out.state[b, :] = t.node_state[b, 0]
    out.action[b] = action
    out.n_legal[b] = n
    out.value[b] = t.node_value_sum[b, 0] / max(t.node_visits[b, 0], 1)
    out.kind[b] = t.kind[b]
    out.searched[b] = searched
    apply_unchecked(t.game_state[b], np.int64(action), t.work[b])
    t.num_nodes[b] = 1
    t.phase[b] = NEED_ROOT
    if game_status(t.game_state[b], options.max_moves) != ONGOING:
        out.done[b] = 1
        out.winner[b] = winner_code(t.game_state[b, :N_CELLS], t.work[b])


@njit(parallel=True, cache=True, nogil=True)
def finish(t, options, logits, values, out):
    """Step 3: expand and back up the evaluated leaves (logits from row logit_row[b], -1 for
    none; the value from row eval_row[b]); finish the searches that are done (their move is
    played on game_state, the search lands in `out`)."""
    for b in prange(t.node_state.shape[0]):
        _finish_game(t, b, options, logits, values, out)


@njit(cache=True)
def _finish_game(t, b, options, logits, values, out):
    out.ready[b] = 0
    out.done[b] = 0
    if t.eval_flag[b]:
        row = t.eval_row[b]
        node = 0 if t.phase[b] == NEED_ROOT else t.pending[b]
        n = t.node_children[b, node]
        lrow = t.logit_row[b]
        if lrow >= 0:
            for i in range(n):
                t.child_logit[b, node, i] = logits[lrow, t.child_action[b, node, i]]
            t.node_policy[b, node] = 1
        if t.refill[b]:  # only the logits were missing: no new value, no simulation
            return
        t.node_raw[b, node] = values[row]
        _backup(t, b, node, values[row])
        if t.phase[b] == NEED_ROOT:
            t.phase[b] = SEARCHING
            t.sim[b] = 0
            if n == 1:  # one legal action: nothing to search
                _finish_search(t, b, options, 0, out)
                return
        else:
            t.sim[b] += 1
    if t.phase[b] == SEARCHING and t.sim[b] >= options.budgets[t.kind[b]]:
        _finish_search(t, b, options, 1, out)


# --------------------------------------------------------------------------- driver


class BatchedSearch:
    """B Gumbel searches over B games; `step(evaluate)` runs one simulation step.

    `evaluate(obs, policy_rows)` takes (R, 10, 10, 22) float32 planes and the indices of the
    rows whose logits the search needs, and returns (logits, values (R,)) as float32 numpy
    arrays, the logits either of those rows (len(policy_rows), 3217) or of every row (R, 3217).
    With `victim` (an evaluator), the logits of the nodes where `tree.victim[b]` is to move
    come from it (victim-play, the module docstring).
    The caller sets each new search up in `tree` (rows where `phase == NEED_ROOT`, see
    `needs_root`): `kind[b]` picks its budget from `options.budgets` (playout caps),
    `gumbel[b]` holds its root noise (zeros: deterministic), `raw_move[b]` (1: play the
    prior's most likely action instead of the search's choice) and `victim[b]` (the colour
    whose nodes take the victim evaluator's policy; -1, the default: none). After a step,
    `finished` holds the searches that ended in it.
    """

    def __init__(self, games: int, options: SearchOptions):
        self.options = options
        self.tree = new_tree(games, int(max(options.budgets)) + 1)
        self.finished = new_finished(games)
        self.timers = {"tree+engine": 0.0, "network": 0.0}
        self.evaluations = 0
        self.policy_evaluations = 0  # rows whose logits were asked for
        self.victim_evaluations = 0  # rows the target's network evaluated (victim-play)
        self.refills = 0  # refills so far (sequential halving makes them rare or absent)
        self.steps = 0

    @property
    def max_moves(self) -> int:
        return self.options.max_moves

    def needs_root(self) -> np.ndarray:
        return np.flatnonzero(self.tree.phase == NEED_ROOT)

    def step(self, evaluate: Evaluate, victim: Evaluate | None = None) -> None:
        """One simulation step of every search; `evaluate` as the class docstring says.
        `victim`: the target's evaluator (victim-play, where `tree.victim` marks a colour): it
        gives the logits of the nodes where that colour is to move, all of them in one call,
        while the values of every leaf still come from `evaluate`."""
        t = self.tree
        tick = time.perf_counter()
        prepare(t, self.options)
        rows = np.flatnonzero(t.eval_flag)
        target = rows[t.victim_leaf[rows] == 1]  # leaves that need the target's logits
        if len(target) and victim is None:
            raise ValueError("tree.victim marks the target's nodes, but no victim evaluator")
        own = rows
        if len(target):  # a target's node evaluated again for its logits needs no value
            own = rows[(t.victim_leaf[rows] == 0) | (t.refill[rows] == 0)]
        t.eval_row[:] = -1
        t.eval_row[own] = np.arange(len(own), dtype=np.int32)
        # positions within `own` whose logits are the network's own
        policy = np.flatnonzero((t.eval_flag[own] == 1) & (t.victim_leaf[own] == 0))
        self.refills += int(t.refill.sum())
        middle = time.perf_counter()
        t.logit_row[:] = -1
        if len(own):
            obs = t.obs[own].reshape(len(own), 10, 10, N_PLANES)
            logits, values = evaluate(obs, policy)
            if len(logits) == len(own) and not len(target):  # the logits of every row
                t.logit_row[own[policy]] = policy
            elif len(logits) in (len(own), len(policy)):
                if len(logits) != len(policy):
                    logits = logits[policy]
                t.logit_row[own[policy]] = np.arange(len(policy), dtype=np.int32)
            else:
                raise ValueError(
                    f"evaluate returned {len(logits)} rows of logits for "
                    f"{len(own)} positions and {len(policy)} policy rows"
                )
        else:
            logits = np.zeros((0, N_ACTIONS), dtype=np.float32)
            values = np.zeros(0, dtype=np.float32)
        if len(target):
            assert victim is not None  # checked above, before any evaluation
            obs = t.obs[target].reshape(len(target), 10, 10, N_PLANES)
            target_logits, _ = victim(obs, np.arange(len(target)))
            if len(target_logits) != len(target):
                raise ValueError(
                    f"the victim evaluator returned {len(target_logits)} rows of logits "
                    f"for {len(target)} positions"
                )
            t.logit_row[target] = len(logits) + np.arange(len(target), dtype=np.int32)
            logits = np.concatenate([np.asarray(logits, np.float32), target_logits])
        after = time.perf_counter()
        finish(
            t,
            self.options,
            np.ascontiguousarray(logits, np.float32),
            np.ascontiguousarray(values, np.float32),
            self.finished,
        )
        done = time.perf_counter()
        self.timers["tree+engine"] += (middle - tick) + (done - after)
        self.timers["network"] += after - middle
        self.evaluations += len(own)
        self.policy_evaluations += len(policy)
        self.victim_evaluations += len(target)
        self.steps += 1
