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
  node mixed with the prior-weighted q of the visited children; q are min-max rescaled to
  [0, 1] over the node's children; ``sigma(q) = (c_visit + max_b N(b)) * c_scale * q``.
* improved policy target: ``softmax(logits + sigma(completed q))`` over the legal actions.
* interior nodes: argmax of ``softmax(logits + sigma(completed q)) - N(a) / (1 + sum N)``.

Values: the player to move can stay the same (the push of a displacement, grace moves), so a
node's value sum is kept from the view of the player to move *at that node*, and the sign
flips on the way up only where the player to move changes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from satellites_env.core.board import (END_CONNECTED, N_ACTIONS, N_CELLS, N_PUSH_ACTIONS,
                                       PUSH_BASE)
from satellites_env.core.engine import (DRAW, ONGOING, STATE_LEN, apply_unchecked,
                                        count_connected, fill_legal_mask, game_status, new_work,
                                        winner_code)
from satellites_env.core.state import GRACE, MOVES, PASSES, PENDING_TARGET, TO_MOVE
from satellites_env.observation import N_PLANES, fill_observation

SLOTS = 256  # child slots per node: more than the most legal actions (12 x 8 x at most 4 = 240)
NEED_ROOT, SEARCHING = 0, 1
NEG = -1e30
# The search's settings, one float64 array handed to the kernels.
C_VISIT, C_SCALE, RESCALE, WIN_CHECK = 0, 1, 2, 3
# R16 ends the game at END_CONNECTED connected satellites; one move connects at most 10 more
# (the moved satellite and its 4 orthogonal neighbours, the pushed one of a displacement and
# its 4), so with fewer than END_CONNECTED - 10 connected no move can end the game by R16
WIN_CHECK_CONNECTED = END_CONNECTED - 10


# --------------------------------------------------------------------------- schedules


def considered_visits(max_considered: int, simulations: int) -> list[int]:
    """Sequential halving as in mctx: for each simulation, the visit count an action must have
    to be visited by it (``get_sequence_of_considered_visits``)."""
    if max_considered <= 1:
        return list(range(simulations))
    log2max = int(math.ceil(math.log2(max_considered)))
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


# --------------------------------------------------------------------------- the trees


class Trees:
    """Array storage of B search trees and of the B games they search for."""

    def __init__(self, games: int, budgets: list[int], considered: list[int]):
        b, m = games, max(budgets) + 1
        self.games = games
        self.budgets = np.asarray(budgets, dtype=np.int32)
        self.considered = np.asarray(considered, dtype=np.int32)
        self.table = visit_table(max(considered), list(budgets))
        self.revisits = revisit_table(self.table, budgets)
        self.node_state = np.zeros((b, m, STATE_LEN), dtype=np.int32)
        self.node_parent = np.full((b, m), -1, dtype=np.int32)
        self.node_visits = np.zeros((b, m), dtype=np.int32)
        self.node_value_sum = np.zeros((b, m), dtype=np.float32)
        self.node_raw = np.zeros((b, m), dtype=np.float32)
        self.node_terminal = np.zeros((b, m), dtype=np.int8)
        self.node_policy = np.zeros((b, m), dtype=np.int8)  # 1: child_logit holds its logits
        self.node_children = np.zeros((b, m), dtype=np.int32)
        self.child_action = np.zeros((b, m, SLOTS), dtype=np.int16)
        self.child_logit = np.zeros((b, m, SLOTS), dtype=np.float32)
        self.child_node = np.full((b, m, SLOTS), -1, dtype=np.int32)
        self.num_nodes = np.zeros(b, dtype=np.int32)
        # per game
        self.game_state = np.zeros((b, STATE_LEN), dtype=np.int32)
        self.phase = np.full(b, NEED_ROOT, dtype=np.int32)
        self.kind = np.zeros(b, dtype=np.int32)
        self.sim = np.zeros(b, dtype=np.int32)
        self.pending = np.full(b, -1, dtype=np.int32)
        self.gumbel = np.zeros((b, SLOTS), dtype=np.float32)
        # 1: the search's move is the root's most likely action under the network's prior (the
        # raw policy's move), not the search's choice; its improved policy is computed as ever
        self.raw_move = np.zeros(b, dtype=np.int8)
        self.eval_row = np.full(b, -1, dtype=np.int32)
        self.logit_row = np.full(b, -1, dtype=np.int32)  # -1: evaluated for its value only
        self.refill = np.zeros(b, dtype=np.int8)  # 1: pending is evaluated for its logits only
        self.refills = 0  # refills so far (sequential halving makes them rare or absent)
        self.obs = np.zeros((b, N_CELLS, N_PLANES), dtype=np.float32)
        self.mask = np.zeros((b, N_ACTIONS), dtype=np.int8)
        self.work = np.stack([new_work() for _ in range(b)])
        self.win_state = np.zeros((b, 2, STATE_LEN), dtype=np.int32)  # win check's scratch
        self.win_mask = np.zeros((b, 2, N_ACTIONS), dtype=np.int8)
        self.sigma = np.zeros((b, SLOTS), dtype=np.float32)
        # one finished search per game and step
        self.out_ready = np.zeros(b, dtype=np.int8)
        self.out_state = np.zeros((b, STATE_LEN), dtype=np.int32)
        self.out_action = np.zeros(b, dtype=np.int32)
        self.out_count = np.zeros(b, dtype=np.int32)
        self.out_actions = np.zeros((b, SLOTS), dtype=np.int16)
        self.out_policy = np.zeros((b, SLOTS), dtype=np.float32)
        self.out_value = np.zeros(b, dtype=np.float32)  # root value after the search
        self.out_kind = np.zeros(b, dtype=np.int32)
        self.out_searched = np.zeros(b, dtype=np.int8)  # 0: only one legal action, no search
        self.out_done = np.zeros(b, dtype=np.int8)
        self.out_winner = np.zeros(b, dtype=np.int32)
        self.out_surprise = np.zeros(b, dtype=np.float32)  # KL(improved policy || prior)

    def arrays(self):
        return (self.node_state, self.node_parent, self.node_visits, self.node_value_sum,
                self.node_raw, self.node_terminal, self.node_policy, self.node_children,
                self.child_action, self.child_logit, self.child_node, self.num_nodes)


# --------------------------------------------------------------------------- kernels


@njit(cache=True)
def _terminal_value(state, work):
    """The final result from the view of the player to move in `state` (+1, -1, 0)."""
    code = winner_code(state[:N_CELLS], work)
    if code == DRAW:
        return 0.0
    return 1.0 if code == state[TO_MOVE] else -1.0


@njit(cache=True)
def _may_end_at_once(state, max_moves):
    """False only when no single move (push included) can end the game: fewer than
    WIN_CHECK_CONNECTED satellites connected, no grace moves running, no pass just made and
    the move cap more than one move away."""
    if state[GRACE] >= 0 or state[PASSES] > 0 or state[MOVES] + 1 >= max_moves:
        return True
    red, blue = count_connected(state[:N_CELLS])
    return red + blue >= WIN_CHECK_CONNECTED


@njit(cache=True)
def wins_at_once(state, max_moves, scratch, masks, work):
    """True when the player to move in `state` has a move (a displacement with one of its
    pushes) that ends the game at once with their win: exact, two plies of the rules."""
    if not _may_end_at_once(state, max_moves):
        return False
    me = state[TO_MOVE]
    fill_legal_mask(state, masks[0], work)
    for a in range(N_ACTIONS):
        if not masks[0, a]:
            continue
        scratch[0, :] = state
        apply_unchecked(scratch[0], np.int64(a), work)
        if scratch[0, PENDING_TARGET] >= 0:  # a displacement: its push completes the move
            fill_legal_mask(scratch[0], masks[1], work)
            for p in range(PUSH_BASE, PUSH_BASE + N_PUSH_ACTIONS):
                if masks[1, p]:
                    scratch[1, :] = scratch[0]
                    apply_unchecked(scratch[1], np.int64(p), work)
                    if (game_status(scratch[1], max_moves) != ONGOING
                            and winner_code(scratch[1, :N_CELLS], work) == me):
                        return True
        elif (game_status(scratch[0], max_moves) != ONGOING
              and winner_code(scratch[0, :N_CELLS], work) == me):
            return True
    return False


@njit(cache=True)
def _list_children(b, node, node_state, node_children, child_action, child_node, mask, work):
    count = fill_legal_mask(node_state[b, node], mask[b], work[b])
    n = 0
    for a in range(N_ACTIONS):
        if mask[b, a]:
            child_action[b, node, n] = a
            child_node[b, node, n] = -1
            n += 1
    node_children[b, node] = n
    return count


@njit(cache=True)
def _backup(b, leaf, value, node_state, node_parent, node_visits, node_value_sum):
    node = leaf
    v = value
    while True:
        node_visits[b, node] += 1
        node_value_sum[b, node] += v
        parent = node_parent[b, node]
        if parent < 0:
            return
        if node_state[b, parent, TO_MOVE] != node_state[b, node, TO_MOVE]:
            v = -v
        node = parent


@njit(cache=True)
def completed_sigma(b, node, node_state, node_visits, node_value_sum, node_raw, node_children,
                    child_logit, child_node, params, sigma):
    """sigma(completed q) of every child of `node` into sigma[b, :n]; returns the total visits
    of the children. q is from the view of the player to move at `node`."""
    n = node_children[b, node]
    me = node_state[b, node, TO_MOVE]
    top = NEG
    for i in range(n):
        if child_logit[b, node, i] > top:
            top = child_logit[b, node, i]
    z = 0.0
    for i in range(n):
        z += math.exp(child_logit[b, node, i] - top)
    total = 0
    max_visits = 0
    weight = 0.0
    weighted_q = 0.0
    for i in range(n):
        c = child_node[b, node, i]
        if c >= 0 and node_visits[b, c] > 0:
            visits = node_visits[b, c]
            q = node_value_sum[b, c] / visits
            if node_state[b, c, TO_MOVE] != me:
                q = -q
            sigma[b, i] = q
            p = max(math.exp(child_logit[b, node, i] - top) / z, 1e-30)
            weight += p
            weighted_q += p * q
            total += visits
            if visits > max_visits:
                max_visits = visits
    mixed = node_raw[b, node]
    if total > 0:
        mixed = (node_raw[b, node] + total * weighted_q / weight) / (total + 1)
    low = 1e30
    high = -1e30
    for i in range(n):
        c = child_node[b, node, i]
        if not (c >= 0 and node_visits[b, c] > 0):
            sigma[b, i] = mixed
        if sigma[b, i] < low:
            low = sigma[b, i]
        if sigma[b, i] > high:
            high = sigma[b, i]
    scale = (params[C_VISIT] + max_visits) * params[C_SCALE]
    if params[RESCALE] != 0.0:  # mctx's min-max rescaling of the completed q to [0, 1]
        scale /= max(high - low, 1e-8)
    else:  # q kept on its own scale, [-1, 1]: small differences stay small
        low = 0.0
    for i in range(n):
        sigma[b, i] = (sigma[b, i] - low) * scale
    return total


@njit(cache=True)
def _visits_of(b, node, i, child_node, node_visits):
    c = child_node[b, node, i]
    return node_visits[b, c] if c >= 0 else 0


@njit(cache=True)
def _root_choice(b, considered_visit, node_state, node_visits, node_value_sum, node_raw,
                 node_children, child_logit, child_node, gumbel, params, sigma):
    """The root action slot whose visit count is `considered_visit` with the best
    g + logits + sigma(completed q) (mctx's score_considered)."""
    completed_sigma(b, 0, node_state, node_visits, node_value_sum, node_raw, node_children,
                    child_logit, child_node, params, sigma)
    n = node_children[b, 0]
    top = NEG
    for i in range(n):
        if child_logit[b, 0, i] > top:
            top = child_logit[b, 0, i]
    best = -1
    best_score = NEG
    fallback = 0
    fallback_score = NEG
    for i in range(n):
        score = max(-1e9, gumbel[b, i] + child_logit[b, 0, i] - top + sigma[b, i])
        if score > fallback_score:
            fallback, fallback_score = i, score
        if _visits_of(b, 0, i, child_node, node_visits) == considered_visit and score > best_score:
            best, best_score = i, score
    return best if best >= 0 else fallback


@njit(cache=True)
def _interior_choice(b, node, node_state, node_visits, node_value_sum, node_raw,
                     node_children, child_logit, child_node, params, sigma):
    total = completed_sigma(b, node, node_state, node_visits, node_value_sum, node_raw,
                            node_children, child_logit, child_node, params, sigma)
    n = node_children[b, node]
    top = NEG
    for i in range(n):
        s = child_logit[b, node, i] + sigma[b, i]
        sigma[b, i] = s
        if s > top:
            top = s
    z = 0.0
    for i in range(n):
        z += math.exp(sigma[b, i] - top)
    best = 0
    best_score = NEG
    for i in range(n):
        score = (math.exp(sigma[b, i] - top) / z
                 - _visits_of(b, node, i, child_node, node_visits) / (1.0 + total))
        if score > best_score:
            best, best_score = i, score
    return best


# nogil: with `overlap: true` the learner's gradient steps run in another thread meanwhile.
@njit(parallel=True, cache=True, nogil=True)
def prepare(node_state, node_parent, node_visits, node_value_sum, node_raw, node_terminal,
            node_policy, node_children, child_action, child_logit, child_node, num_nodes,
            game_state, phase, kind, sim, pending, gumbel, table, revisits, eval_flag, refill,
            obs, mask, work, sigma, max_moves, params, considered, win_state, win_mask):
    """Step 1: new roots, or one selection down to a leaf, per game; obs rows of the nodes
    that need the network: eval_flag[b] = 1 for value and logits, 2 for the value alone (a
    leaf that is never descended from), and refill[b] = 1 where a node is evaluated again
    only for its logits. With params[WIN_CHECK], a new leaf whose player to move can end the
    game at once with a win is valued +1 exactly, like a terminal node (no network call)."""
    for b in prange(node_state.shape[0]):
        eval_flag[b] = 0
        refill[b] = 0
        if phase[b] == NEED_ROOT:
            node_state[b, 0, :] = game_state[b]
            node_parent[b, 0] = -1
            node_visits[b, 0] = 0
            node_value_sum[b, 0] = 0.0
            node_terminal[b, 0] = 0
            node_policy[b, 0] = 0
            num_nodes[b] = 1
            _list_children(b, 0, node_state, node_children, child_action, child_node, mask, work)
            fill_observation(node_state[b, 0], node_state[b, 0, TO_MOVE], max_moves, obs[b],
                             work[b])
            eval_flag[b] = 1
            continue
        m = min(considered[kind[b]], node_children[b, 0])
        node = 0
        depth = 0
        while True:
            if node_terminal[b, node]:
                _backup(b, node, node_raw[b, node], node_state, node_parent, node_visits,
                        node_value_sum)
                sim[b] += 1
                break
            if node_policy[b, node] == 0:  # a value-only leaf after all: its logits first
                _list_children(b, node, node_state, node_children, child_action, child_node,
                               mask, work)
                fill_observation(node_state[b, node], node_state[b, node, TO_MOVE], max_moves,
                                 obs[b], work[b])
                pending[b] = node
                refill[b] = 1
                eval_flag[b] = 1
                break
            if node == 0:
                slot = _root_choice(b, table[kind[b], m, sim[b]], node_state, node_visits,
                                    node_value_sum, node_raw, node_children, child_logit,
                                    child_node, gumbel, params, sigma)
            else:
                slot = _interior_choice(b, node, node_state, node_visits, node_value_sum,
                                        node_raw, node_children, child_logit, child_node,
                                        params, sigma)
            depth += 1
            child = child_node[b, node, slot]
            if child >= 0:
                node = child
                continue
            child = num_nodes[b]
            num_nodes[b] += 1
            child_node[b, node, slot] = child
            node_state[b, child, :] = node_state[b, node]
            apply_unchecked(node_state[b, child], np.int64(child_action[b, node, slot]), work[b])
            node_parent[b, child] = node
            node_visits[b, child] = 0
            node_value_sum[b, child] = 0.0
            node_policy[b, child] = 0
            over = game_status(node_state[b, child], max_moves) != ONGOING
            if over or (params[WIN_CHECK] != 0.0
                        and wins_at_once(node_state[b, child], max_moves, win_state[b],
                                         win_mask[b], work[b])):
                # the game is over, or (win check) its player to move wins with one move:
                # valued exactly, no network call
                node_terminal[b, child] = 1
                node_children[b, child] = 0
                node_raw[b, child] = (_terminal_value(node_state[b, child], work[b]) if over
                                      else 1.0)
                _backup(b, child, node_raw[b, child], node_state, node_parent, node_visits,
                        node_value_sum)
                sim[b] += 1
            else:
                node_terminal[b, child] = 0
                if depth < revisits[kind[b], m]:  # it may be descended from: list its moves
                    _list_children(b, child, node_state, node_children, child_action,
                                   child_node, mask, work)
                    eval_flag[b] = 1
                else:
                    node_children[b, child] = 0
                    eval_flag[b] = 2
                fill_observation(node_state[b, child], node_state[b, child, TO_MOVE], max_moves,
                                 obs[b], work[b])
                pending[b] = child
            break


@njit(cache=True)
def _finish_search(b, node_state, node_visits, node_value_sum, node_raw, node_children,
                   child_action, child_logit, child_node, num_nodes, game_state, phase, kind,
                   gumbel, raw_move, sigma, work, max_moves, params, searched,
                   out_ready, out_state, out_action, out_count, out_actions, out_policy,
                   out_value, out_kind, out_searched, out_done, out_winner, out_surprise):
    """The search of game b is over: improved policy, the move, play it, reset the tree."""
    n = node_children[b, 0]
    completed_sigma(b, 0, node_state, node_visits, node_value_sum, node_raw, node_children,
                    child_logit, child_node, params, sigma)
    top = NEG
    max_visits = 0
    for i in range(n):
        s = child_logit[b, 0, i] + sigma[b, i]
        if s > top:
            top = s
        v = _visits_of(b, 0, i, child_node, node_visits)
        if v > max_visits:
            max_visits = v
    z = 0.0
    for i in range(n):
        z += math.exp(child_logit[b, 0, i] + sigma[b, i] - top)
    best = 0
    best_score = NEG
    logit_top = NEG
    logit_best = 0  # the prior's most likely action (the lowest id among equals)
    for i in range(n):
        if child_logit[b, 0, i] > logit_top:
            logit_top, logit_best = child_logit[b, 0, i], i
    # KL(improved policy || prior) = sum p sigma - log(sum e^(logit + sigma)) + log(sum e^logit)
    z_prior = 0.0
    p_sigma = 0.0
    for i in range(n):
        out_actions[b, i] = child_action[b, 0, i]
        out_policy[b, i] = math.exp(child_logit[b, 0, i] + sigma[b, i] - top) / z
        z_prior += math.exp(child_logit[b, 0, i] - logit_top)
        p_sigma += out_policy[b, i] * sigma[b, i]
        if _visits_of(b, 0, i, child_node, node_visits) == max_visits:
            score = max(-1e9, gumbel[b, i] + child_logit[b, 0, i] - logit_top + sigma[b, i])
            if score > best_score:
                best, best_score = i, score
    out_surprise[b] = max(0.0, p_sigma - top - math.log(z) + logit_top + math.log(z_prior))
    if raw_move[b]:  # the raw policy's move, as the raw-policy agent's argmax takes it
        best = logit_best
    action = child_action[b, 0, best]
    out_ready[b] = 1
    out_state[b, :] = node_state[b, 0]
    out_action[b] = action
    out_count[b] = n
    out_value[b] = node_value_sum[b, 0] / max(node_visits[b, 0], 1)
    out_kind[b] = kind[b]
    out_searched[b] = searched
    apply_unchecked(game_state[b], np.int64(action), work[b])
    num_nodes[b] = 1
    phase[b] = NEED_ROOT
    if game_status(game_state[b], max_moves) != ONGOING:
        out_done[b] = 1
        out_winner[b] = winner_code(game_state[b, :N_CELLS], work[b])


@njit(parallel=True, cache=True, nogil=True)
def finish(node_state, node_parent, node_visits, node_value_sum, node_raw, node_terminal,
           node_policy, node_children, child_action, child_logit, child_node, num_nodes,
           game_state, phase, kind, sim, pending, gumbel, raw_move, budgets, eval_flag, refill,
           eval_row, logit_row, logits, values, work, sigma, max_moves, params,
           out_ready, out_state, out_action, out_count, out_actions, out_policy, out_value,
           out_kind, out_searched, out_done, out_winner, out_surprise):
    """Step 3: expand and back up the evaluated leaves (logits from row logit_row[b], -1 for
    none; the value from row eval_row[b]); finish the searches that are done (their move is
    played on game_state)."""
    for b in prange(node_state.shape[0]):
        out_ready[b] = 0
        out_done[b] = 0
        if eval_flag[b]:
            row = eval_row[b]
            if phase[b] == NEED_ROOT:
                node = 0
            else:
                node = pending[b]
            n = node_children[b, node]
            lrow = logit_row[b]
            if lrow >= 0:
                for i in range(n):
                    child_logit[b, node, i] = logits[lrow, child_action[b, node, i]]
                node_policy[b, node] = 1
            if refill[b]:  # only the logits were missing: no new value, no simulation
                continue
            node_raw[b, node] = values[row]
            _backup(b, node, values[row], node_state, node_parent, node_visits, node_value_sum)
            if phase[b] == NEED_ROOT:
                phase[b] = SEARCHING
                sim[b] = 0
                if n == 1:  # one legal action: nothing to search
                    _finish_search(b, node_state, node_visits, node_value_sum, node_raw,
                                   node_children, child_action, child_logit, child_node,
                                   num_nodes, game_state, phase, kind, gumbel, raw_move,
                                   sigma, work, max_moves, params, 0, out_ready, out_state,
                                   out_action, out_count, out_actions, out_policy, out_value,
                                   out_kind, out_searched, out_done, out_winner, out_surprise)
                    continue
            else:
                sim[b] += 1
        if phase[b] == SEARCHING and sim[b] >= budgets[kind[b]]:
            _finish_search(b, node_state, node_visits, node_value_sum, node_raw, node_children,
                           child_action, child_logit, child_node, num_nodes, game_state, phase,
                           kind, gumbel, raw_move, sigma, work, max_moves, params, 1,
                           out_ready, out_state, out_action, out_count, out_actions, out_policy,
                           out_value, out_kind, out_searched, out_done, out_winner, out_surprise)


# --------------------------------------------------------------------------- driver


class BatchedSearch:
    """B Gumbel searches over B games; `step(evaluate)` runs one simulation step.

    `evaluate(obs, policy_rows)` takes (R, 10, 10, 22) float32 planes and the indices of the
    rows whose logits the search needs, and returns (logits, values (R,)) as float32 numpy
    arrays, the logits either of those rows (len(policy_rows), 3217) or of every row (R, 3217).
    Per search, `kind[b]` picks its budget from `budgets` (playout caps); `gumbel[b]` holds its
    root noise (zeros: deterministic) and `raw_move[b]` (1: play the prior's most likely
    action instead of the search's choice), set by the caller before each new root (rows where
    `phase == NEED_ROOT`). `value_only_leaves=False` asks for the logits of every leaf (the
    search as it was before value-only leaves; `benchmarks/az_value_only.py` times both).
    """

    def __init__(self, games: int, budgets: list[int], max_considered: int = 16,
                 c_visit: float = 50.0, c_scale: float = 0.1, max_moves: int = 400,
                 rescale: bool = True, value_only_leaves: bool = True, win_check: bool = False):
        considered = [considered_for(max_considered, budget) for budget in budgets]
        self.trees = Trees(games, budgets, considered)
        if not value_only_leaves:
            self.trees.revisits[:] = np.iinfo(np.int32).max
        self.params = np.array([c_visit, c_scale, float(rescale), float(win_check)],
                               dtype=np.float64)
        self.max_moves = int(max_moves)
        self.eval_flag = np.zeros(games, dtype=np.int8)
        self.timers = {"tree+engine": 0.0, "network": 0.0}
        self.evaluations = 0
        self.policy_evaluations = 0  # rows whose logits were asked for
        self.steps = 0

    def needs_root(self) -> np.ndarray:
        return np.flatnonzero(self.trees.phase == NEED_ROOT)

    def step(self, evaluate) -> None:
        import time

        t = self.trees
        tick = time.perf_counter()
        prepare(*t.arrays(), t.game_state, t.phase, t.kind, t.sim, t.pending, t.gumbel, t.table,
                t.revisits, self.eval_flag, t.refill, t.obs, t.mask, t.work, t.sigma,
                self.max_moves, self.params, t.considered, t.win_state, t.win_mask)
        rows = np.flatnonzero(self.eval_flag)
        t.eval_row[:] = -1
        t.eval_row[rows] = np.arange(len(rows), dtype=np.int32)
        policy = np.flatnonzero(self.eval_flag[rows] == 1)  # positions within `rows`
        t.refills += int(t.refill.sum())
        middle = time.perf_counter()
        t.logit_row[:] = -1
        if len(rows):
            logits, values = evaluate(t.obs[rows].reshape(len(rows), 10, 10, N_PLANES), policy)
            if len(logits) == len(rows):  # the logits of every row
                t.logit_row[rows[policy]] = policy
            elif len(logits) == len(policy):
                t.logit_row[rows[policy]] = np.arange(len(policy), dtype=np.int32)
            else:
                raise ValueError(f"evaluate returned {len(logits)} rows of logits for "
                                 f"{len(rows)} positions and {len(policy)} policy rows")
        else:
            logits = np.zeros((0, N_ACTIONS), dtype=np.float32)
            values = np.zeros(0, dtype=np.float32)
        after = time.perf_counter()
        finish(*t.arrays(), t.game_state, t.phase, t.kind, t.sim, t.pending, t.gumbel,
               t.raw_move, t.budgets, self.eval_flag, t.refill, t.eval_row, t.logit_row,
               np.ascontiguousarray(logits, np.float32),
               np.ascontiguousarray(values, np.float32), t.work, t.sigma, self.max_moves,
               self.params, t.out_ready, t.out_state, t.out_action, t.out_count,
               t.out_actions, t.out_policy, t.out_value, t.out_kind, t.out_searched, t.out_done,
               t.out_winner, t.out_surprise)
        done = time.perf_counter()
        self.timers["tree+engine"] += (middle - tick) + (done - after)
        self.timers["network"] += after - middle
        self.evaluations += len(rows)
        self.policy_evaluations += len(policy)
        self.steps += 1
