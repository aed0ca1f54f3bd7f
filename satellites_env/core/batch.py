"""The batched engine: N games in one (N, STATE_LEN) int32 array, played by parallel kernels.

Row i of the state array is game i, in the layout of `satellites_env.core.state`; the
kernels below are the same rules kernels as for one game (`satellites_env.core.rules`, the R21-R23
result from `satellites_env.core.scoring`), run over the rows with ``numba.prange``. Hot loops
(self-play, search, benchmarks) call them straight or through
[`BatchedEngine`][satellites_env.core.batch.BatchedEngine].

Threads and work memory. Every parallel kernel splits the N games into ``scratch.shape[0]``
contiguous chunks and hands each chunk its own work rows ``scratch[c]`` (the rules kernels'
scratch, [`rules.new_scratch`][satellites_env.core.rules.new_scratch]), so threads never share
memory and no kernel allocates. [`new_batch_scratch`][satellites_env.core.batch.new_batch_scratch]
sizes it for the numba thread pool (a few chunks per thread, so that a slow chunk does not hold up
the others). The number of threads is numba's: ``numba.set_num_threads`` or the
``NUMBA_NUM_THREADS`` environment variable. Entry points call `configure_threads` so that
idle threads sleep; importing this module changes no setting.

Seeds. The set-up of episode ``e`` of game ``i`` (``e`` = 0 after ``reset``, then 1, 2, ...
for each automatic reset of that game) is a pure function of ``(seed, i, e)``: the R4
shuffles draw from a SplitMix64 stream keyed by those three numbers
(`setup_state`). So a batch is reproducible from its seed whatever the number of
threads, and game i's games do not depend on how long the other games last.

Auto-reset ([`step_autoreset`][satellites_env.core.batch.step_autoreset],
[`BatchedEngine.step`][satellites_env.core.batch.BatchedEngine.step]). The step that ends game i
(terminated by R16/R18/R19, or truncated at the move cap R20) returns game i's final rewards and its
flag, stores the finished position in ``final_states[i]`` and, in the same call, replaces row i by
the next episode's set-up; the legal mask (and observation) that follow that step are the new game's
first. Rewards are +1/-1/0 (red, blue) on that step only (R24: a game ended by the cap is scored
too) and 0 on every other step.
"""

from __future__ import annotations

import os

import numba
import numpy as np
from numba import njit, prange

from .board import (
    COPIES_PER_VALUE,
    DEFAULT_MAX_MOVES,
    N_ACTIONS,
    N_CELLS,
    PASS_ACTION,
    PUSH_BASE,
    SATELLITES_PER_PLAYER,
    SIZE,
    check_max_moves,
)
from .checks import check_int, check_seed
from .planes import N_PLANES, observe_states
from .rules import (
    N_SCRATCH_ROWS,
    ONGOING,
    TERMINATED,
    TRUNCATED,
    IllegalActionError,
    apply_status,
    apply_unchecked,
    fill_legal_mask,
    game_status,
)
from .scoring import DRAW, winner_code
from .state import (
    GRACE,
    NO_GRACE,
    NO_PENDING,
    PENDING_FROM,
    PENDING_TARGET,
    STATE_LEN,
    TO_MOVE,
    check_state_rows,
)

__all__ = [
    "MAX_NUM_GAMES",
    "BatchedEngine",
    "apply_actions",
    "configure_threads",
    "final_rewards",
    "legal_masks",
    "new_batch_scratch",
    "random_legal_actions",
    "random_legal_actions_of",
    "reset_states",
    "setup_state",
    "statuses",
    "step_autoreset",
]


def configure_threads() -> None:
    """Let numba's idle threads sleep: set ``OMP_WAIT_POLICY=PASSIVE`` unless the user set a
    policy. Entry points call it (the `satellites` CLI, the trainer), before their first
    parallel kernel; a process that trains with torch calls it after importing torch.

    numba's default threading layer on Linux is OpenMP, whose idle threads spin between
    parallel regions. On a machine shared with other processes (tests, a trainer, torch's own
    threads) the spinning threads fight for the cores: measured here, 64 games stepped 6.6x
    slower than with sleeping threads. OpenMP reads the variable once, when it is loaded
    (numba loads it at its first parallel kernel), so setting it before any kernel runs is
    enough. torch's own OpenMP reads it when torch is imported, and under PASSIVE every
    operator of a multi-threaded gradient step has to wake its helper threads: the learner's
    steps took about 1.5 times as long. Hence torch first, then this. (torch's OpenMP library
    has the same name as the system's: loaded after numba's, it is numba's, policy included.)
    Child processes inherit the setting.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# The most games one BatchedEngine (or SatellitesVectorEnv) holds: about 4 KB of engine
# buffers per game, 13 KB with a vector env's observations, so 1.7 GB at the ceiling; a batch
# that does not fit in memory is a ValueError naming its size, not a MemoryError.
MAX_NUM_GAMES = 2**17

_HALF_EDGE = SATELLITES_PER_PLAYER // 2  # 6 satellites per edge (R4)
_FIRST_ALONG = 2  # R4: the 6 central cells of an edge are 2..7

# --------------------------------------------------------------------------- random numbers
# SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and good enough to key one stream per
# (seed, game, episode). numba turns mixed uint64/int64 arithmetic into float64, so every
# constant is a uint64.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(cache=True)
def _mix(z):
    """The SplitMix64 output function (a bijection of uint64)."""
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


@njit(cache=True)
def _stream_key(seed, game, episode):
    """The start of the random stream of one episode of one game (see the module docstring)."""
    key = _mix(np.uint64(seed) + _GOLDEN)
    key = _mix(key ^ (np.uint64(game) + _GOLDEN))
    return _mix(key ^ (np.uint64(episode) + _GOLDEN))


@njit(cache=True)
def _shuffled_values(key, values):
    """Fisher-Yates shuffle of the 12 values 1,1,1,2,2,2,...,4 into `values`; return the key.

    `x % (i + 1)` on 64-bit draws has a bias below 1e-17 for i < 12: uniform for any use.
    """
    for i in range(SATELLITES_PER_PLAYER):
        values[i] = i // COPIES_PER_VALUE + 1
    for i in range(SATELLITES_PER_PLAYER - 1, 0, -1):
        key += _GOLDEN
        j = np.int64(_mix(key) % np.uint64(i + 1))
        values[i], values[j] = values[j], values[i]
    return key


@njit(cache=True)
def setup_state(state, seed, game, episode):
    """Write into `state` the R4 set-up of episode `episode` of game `game` of a batch seeded
    with `seed` (a pure function of the three numbers)."""
    state[:] = 0
    state[GRACE] = NO_GRACE
    state[PENDING_TARGET] = NO_PENDING
    state[PENDING_FROM] = NO_PENDING
    key = _stream_key(seed, game, episode)
    values = np.empty(SATELLITES_PER_PLAYER, dtype=np.int32)
    for player in range(2):
        key = _shuffled_values(key, values)
        sign = 1 - 2 * player
        for i in range(SATELLITES_PER_PLAYER):
            value = values[i]
            along = _FIRST_ALONG + i % _HALF_EDGE
            depth = 1 if value <= 2 else 0  # R4: values 1 and 2 sit one cell inward
            line = depth if i < _HALF_EDGE else SIZE - 1 - depth
            if player == 0:  # red: north edge (row 0) then south edge (row 9)
                cell = line * SIZE + along
            else:  # blue: west edge (col 0) then east edge (col 9)
                cell = along * SIZE + line
            state[cell] = sign * value


# --------------------------------------------------------------------------- work memory


def new_batch_scratch(num_chunks: int | None = None) -> np.ndarray:
    """Work rows for the batched kernels: (chunks, N_SCRATCH_ROWS, 100) int32, one chunk of
    games per slice. Default: 4 chunks per numba thread (NUMBA_NUM_THREADS, the pool's size),
    so it stays valid after ``numba.set_num_threads``."""
    if num_chunks is None:
        # numba.config sets its settings at import from the environment: they are not typed.
        num_chunks = 4 * numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    num_chunks = check_int("num_chunks", num_chunks, 1, MAX_NUM_GAMES)
    return np.zeros((num_chunks, N_SCRATCH_ROWS, N_CELLS), dtype=np.int32)


# --------------------------------------------------------------------------- pure kernels
# Every kernel: `for c in prange(chunks)`, games lo..hi of chunk c with work rows scratch[c].


@njit(cache=True)
def _chunk(c, n_games, n_chunks):
    return c * n_games // n_chunks, (c + 1) * n_games // n_chunks


@njit(cache=True, parallel=True)
def reset_states(states, seed, episodes):
    """Write into every row i the set-up of episode episodes[i] of game i (see setup_state)."""
    for i in prange(states.shape[0]):
        setup_state(states[i], seed, i, episodes[i])


@njit(cache=True, parallel=True)
def statuses(states, max_moves, out):
    """out[i] = ONGOING, TERMINATED or TRUNCATED for every game (rules.game_status)."""
    for i in prange(states.shape[0]):
        out[i] = game_status(states[i], max_moves)


@njit(cache=True, parallel=True)
def legal_masks(states, max_moves, masks, counts, scratch):
    """Exact action masks of every game into masks (N, 3217) int8 and the number of legal
    actions into counts; a finished game gets an all-zero mask and count 0."""
    n = states.shape[0]
    n_chunks = scratch.shape[0]
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n, n_chunks)
        work = scratch[c]
        for i in range(lo, hi):
            if game_status(states[i], max_moves) == ONGOING:
                counts[i] = fill_legal_mask(states[i], masks[i], work)
            else:
                masks[i, :] = 0
                counts[i] = 0


@njit(cache=True, parallel=True)
def apply_actions(states, actions, scratch):
    """Play actions[i] in game i, for every game (unchecked: legality is the caller's
    promise; a negative action leaves that game as it is)."""
    n = states.shape[0]
    n_chunks = scratch.shape[0]
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n, n_chunks)
        work = scratch[c]
        for i in range(lo, hi):
            if actions[i] >= 0:
                apply_unchecked(states[i], actions[i], work)


@njit(cache=True)
def _result_into(board, work, rewards_row):
    """rewards_row = (red, blue) +1/-1/0 by R21-R23 on `board` (R24)."""
    code = winner_code(board, work)
    if code == DRAW:
        rewards_row[0] = 0.0
        rewards_row[1] = 0.0
    else:
        rewards_row[code] = 1.0
        rewards_row[1 - code] = -1.0


@njit(cache=True, parallel=True)
def final_rewards(states, status, rewards, scratch):
    """rewards[i] = (red, blue) result of game i (+1 win, -1 loss, 0 draw; R21-R24) where
    status[i] is not ONGOING, zeros where it is."""
    n = states.shape[0]
    n_chunks = scratch.shape[0]
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n, n_chunks)
        work = scratch[c]
        for i in range(lo, hi):
            if status[i] == ONGOING:
                rewards[i, 0] = 0.0
                rewards[i, 1] = 0.0
            else:
                _result_into(states[i, :N_CELLS], work, rewards[i])


@njit(cache=True, parallel=True)
def step_autoreset(
    states,
    actions,
    max_moves,
    seed,
    episodes,
    rewards,
    terminated,
    truncated,
    final_states,
    masks,
    counts,
    scratch,
):
    """One agent step in every game, in one parallel pass (the hot loop of self-play).

    Per game i: play actions[i] (unchecked); set terminated[i] / truncated[i] and rewards[i]
    (the result on the step that ends the game, zeros otherwise); if the game ended, copy it
    to final_states[i], add 1 to episodes[i] and write that episode's set-up into row i; then
    the legal mask and count of the position now in row i.
    """
    n = states.shape[0]
    n_chunks = scratch.shape[0]
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n, n_chunks)
        work = scratch[c]
        for i in range(lo, hi):
            state = states[i]
            status = apply_status(state, actions[i], work, max_moves)
            terminated[i] = status == TERMINATED
            truncated[i] = status == TRUNCATED
            if status == ONGOING:
                rewards[i, 0] = 0.0
                rewards[i, 1] = 0.0
            else:
                _result_into(state[:N_CELLS], work, rewards[i])
                final_states[i, :] = state
                episodes[i] += 1
                setup_state(state, seed, i, episodes[i])
            counts[i] = fill_legal_mask(state, masks[i], work)


_BLOCK = 32  # actions of one source cell: ((cell * 8) + direction) * 4 + k - 1


@njit(cache=True, parallel=True)
def random_legal_actions(masks, counts, seed, step, out):
    """out[i] = a uniformly random legal action of game i (from masks[i], which has counts[i]
    ones), drawn from a SplitMix64 stream keyed by (seed, i, step); -1 where counts[i] == 0.

    For random play in benchmarks and examples. It sums the mask in blocks of 32 bytes (a
    fixed-length int32 sum vectorises; 2.6x faster than a byte walk) and walks bytes only
    inside the block that holds the pick.
    """
    n, width = masks.shape
    full = width - width % _BLOCK
    for i in prange(n):
        pick = _random_pick(seed, i, step, counts[i])
        if pick < 0:
            out[i] = -1
            continue
        row = masks[i]
        start = 0
        while start < full:
            ones = _block_ones(row, start)
            if pick < ones:
                break
            pick -= ones
            start += _BLOCK
        out[i] = _nth_set(row, start, pick)


@njit(cache=True)
def _random_pick(seed, i, step, count):
    """Which of game i's `count` legal actions to play at `step`: uniform in [0, count), from
    the SplitMix64 stream keyed by (seed, i, step); -1 when count <= 0."""
    if count <= 0:
        return np.int64(-1)
    return np.int64(_mix(_stream_key(seed, i, step)) % np.uint64(count))


@njit(cache=True)
def _block_ones(row, start):
    """The number of nonzero bytes in row[start:start + _BLOCK] (a fixed-length int32 sum,
    which vectorises)."""
    ones = np.int32(0)
    for j in range(_BLOCK):
        ones += np.int32(row[start + j])
    return ones


@njit(cache=True)
def _nth_set(row, start, pick):
    """The index of the (pick + 1)-th nonzero byte of row[start:] (it must exist)."""
    a = start
    while True:
        if row[a]:
            if pick == 0:
                return a
            pick -= 1
        a += 1


@njit(cache=True, parallel=True)
def random_legal_actions_of(states, masks, counts, seed, step, out):
    """`random_legal_actions` when masks[i] is the legal mask of states[i] (as in
    BatchedEngine): the same action, found faster. Only the 32-action blocks of the mover's
    own satellites (and the push actions during a displacement) can hold legal moves, so it
    sums at most 12 blocks instead of the whole mask; when the pick lies past them the one
    legal action left is the pass (R19)."""
    n = masks.shape[0]
    for i in prange(n):
        pick = _random_pick(seed, i, step, counts[i])
        if pick < 0:
            out[i] = -1
            continue
        row = masks[i]
        state = states[i]
        if state[PENDING_TARGET] != NO_PENDING:
            out[i] = _nth_set(row, PUSH_BASE, pick)
            continue
        sign = 1 - 2 * state[TO_MOVE]
        a = PASS_ACTION
        for c in range(N_CELLS):
            if state[c] * sign <= 0:
                continue
            start = c * _BLOCK
            ones = _block_ones(row, start)
            if pick < ones:
                a = _nth_set(row, start, pick)
                break
            pick -= ones
        out[i] = a


# --------------------------------------------------------------------------- the object


class BatchedEngine:
    """N independent games stepped together, with automatic reset (module docstring).

    ``states`` (N, STATE_LEN) int32 is the batch; ``step`` returns the engine's own
    ``rewards`` (N, 2) float32 (red, blue), ``terminated`` and ``truncated`` (N,) bool
    buffers, overwritten by the next step (copy them to keep them). Finished positions are in
    ``final_states`` on the step that ends them.

    >>> engine = BatchedEngine(4, seed=0)
    >>> masks = engine.legal_action_mask()
    >>> actions = masks.argmax(axis=1)  # the first legal action of each game
    >>> rewards, terminated, truncated = engine.step(actions)
    >>> rewards.shape, terminated.shape, int(engine.states[0, 103])
    ((4, 2), (4,), 1)
    """

    def __init__(
        self,
        num_games: int,
        max_moves: int = DEFAULT_MAX_MOVES,
        seed: int | None = None,
        num_chunks: int | None = None,
    ):
        n = check_int("num_games", num_games, 1, MAX_NUM_GAMES)
        self.num_games = n
        self.max_moves = check_max_moves(max_moves)
        if num_chunks is not None:
            num_chunks = min(check_int("num_chunks", num_chunks, 1, MAX_NUM_GAMES), n)
        seed = check_seed(seed)
        try:
            self.states = np.zeros((n, STATE_LEN), dtype=np.int32)
            self.final_states = np.zeros((n, STATE_LEN), dtype=np.int32)
            self.episodes = np.zeros(n, dtype=np.int64)
            self.masks = np.zeros((n, N_ACTIONS), dtype=np.int8)
            self.counts = np.zeros(n, dtype=np.int32)
            self.rewards = np.zeros((n, 2), dtype=np.float32)
            self.terminated = np.zeros(n, dtype=np.bool_)
            self.truncated = np.zeros(n, dtype=np.bool_)
            self.scratch = new_batch_scratch(num_chunks)
            self._rows = np.arange(n)
        except MemoryError:
            raise ValueError(f"num_games={n}: not enough memory for the batch") from None
        self.seed = 0
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start every game afresh: game i plays episode 0 of the batch seeded with `seed`
        (0 .. 2**64 - 1, or None for a fresh random seed; it is kept in ``.seed``)."""
        seed = check_seed(seed)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.seed = seed
        self.episodes[:] = 0
        reset_states(self.states, np.uint64(self.seed), self.episodes)
        legal_masks(self.states, self.max_moves, self.masks, self.counts, self.scratch)
        self.rewards[:] = 0.0
        self.terminated[:] = False
        self.truncated[:] = False

    def load(self, i: int, state: np.ndarray) -> None:
        """Put the position `state` (e.g. from ``notation.parse_spn``) into game i, for
        search roots and tests; it must not be over. Auto-reset then continues from
        game i's current episode number."""
        i = check_int("i", i, 0, self.num_games - 1)
        state = np.asarray(state)
        if state.shape != (STATE_LEN,):
            raise ValueError(f"a state has shape ({STATE_LEN},), got {state.shape}")
        check_state_rows(state[None])  # the kernels read it without bounds checks
        state = state.astype(np.int32)
        if game_status(state, self.max_moves) != ONGOING:
            raise ValueError("the position is over (terminated or at the move cap)")
        self.states[i] = state
        self.counts[i] = fill_legal_mask(self.states[i], self.masks[i], self.scratch[0])

    def legal_action_mask(self) -> np.ndarray:
        """(N, 3217) int8 exact masks of the positions in ``states`` (the engine's buffer,
        updated by every step: copy it to keep it)."""
        return self.masks

    def current_player(self) -> np.ndarray:
        """(N,) int32: 0 red, 1 blue, the player who acts next in each game."""
        return self.states[:, TO_MOVE].copy()

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        """`actions` as an (N,) int64 array; raise IllegalActionError naming the first game
        whose action is out of range or not legal (no game is changed)."""
        try:
            actions = np.asarray(actions)
        except (ValueError, TypeError, OverflowError):  # ragged lists and the like
            actions = np.asarray(None)
        if actions.shape != (self.num_games,) or not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(
                f"actions must be an integer array of shape ({self.num_games},), got "
                f"{actions.dtype} {actions.shape}"
            )
        actions = actions.astype(np.int64, copy=False)
        in_range = (actions >= 0) & (actions < N_ACTIONS)
        legal = in_range & (self.masks[self._rows, np.where(in_range, actions, 0)] != 0)
        if not legal.all():
            i = int(np.flatnonzero(~legal)[0])
            a = int(actions[i])
            why = (
                f"out of range 0..{N_ACTIONS - 1}"
                if not in_range[i]
                else f"not legal ({int(self.counts[i])} legal actions)"
            )
            raise IllegalActionError(f"game {i}: action {a} is {why}; no game was changed")
        return actions

    def step(
        self, actions: np.ndarray, check: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play actions[i] in game i; return (rewards, terminated, truncated).

        Finished games are reset in the same call (module docstring), so ``states`` and the
        masks describe the next position of each game: the new game's first where one ended.
        With ``check`` (the default) an illegal action raises IllegalActionError before any
        game moves; without it, legality is the caller's promise.
        """
        if check:
            actions = self.check_actions(actions)
        step_autoreset(
            self.states,
            actions,
            self.max_moves,
            np.uint64(self.seed),
            self.episodes,
            self.rewards,
            self.terminated,
            self.truncated,
            self.final_states,
            self.masks,
            self.counts,
            self.scratch,
        )
        return self.rewards, self.terminated, self.truncated

    def observe(
        self, out: np.ndarray | None = None, states: np.ndarray | None = None
    ) -> np.ndarray:
        """Observation planes of every game for the player to move into `out`: (N, 100, 22)
        or (N, 10, 10, 22) float32 (a new (N, 10, 10, 22) array when None). `states` defaults
        to ``.states`` (``final_states`` rows give the finished games' last positions)."""
        states = self.states if states is None else states
        n = states.shape[0]
        if out is None:
            out = np.empty((n, SIZE, SIZE, N_PLANES), dtype=np.float32)
        if out.dtype != np.float32 or not out.flags.c_contiguous or out.shape[0] != n:
            raise ValueError("out must be a C-contiguous float32 array with one row per game")
        observe_states(states, self.max_moves, out.reshape(n, N_CELLS, -1), self.scratch)
        return out

    def random_actions(self, step: int, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per game, reproducible from (seed, game, step)."""
        if out is None:
            out = np.empty(self.num_games, dtype=np.int64)
        random_legal_actions_of(
            self.states, self.masks, self.counts, np.uint64(self.seed), step, out
        )
        return out
