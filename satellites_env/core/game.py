"""`Game`: a position with its legal-move cache, checked moves, history and scoring.

This is the object the environment, the agents and the tools share. It wraps the state
array and the numba kernels of `satellites_env.core.rules`.
"""

from __future__ import annotations

import numpy as np

from .board import (
    DEFAULT_MAX_MOVES,
    END_CONNECTED,
    N_ACTIONS,
    N_CELLS,
    N_MOVE_ACTIONS,
    PASS_ACTION,
    PUSH_BASE,
    RAY,
    Player,
    check_max_moves,
    decode_move_action,
    decode_push_action,
    direction_between,
    move_action,
    push_action,
)
from .checks import check_seed, quoted
from .engine import (
    ONGOING,
    TERMINATED,
    TRUNCATED,
    IllegalActionError,
    Score,
    apply_unchecked,
    count_connected,
    fill_legal_mask,
    game_status,
    new_work,
)
from .explain import explain_illegal
from .notation import (
    SQUARE_NAMES,
    NotationError,
    move_text,
    parse_move_text,
    parse_spn,
    square_name,
    to_spn,
)
from .outcome import Outcome, Termination
from .scoring import score
from .state import (
    GRACE,
    MOVES,
    NO_GRACE,
    PASSES,
    PENDING_FROM,
    PENDING_PIECE,
    PENDING_TARGET,
    TO_MOVE,
    check_rng,
    check_state,
    initial_state,
    is_pending,
)


def _action_id(action: object) -> int:
    """`action` as an int when it is an integer (not a bool) in 0..N_ACTIONS - 1; otherwise
    IllegalActionError, the one error of every method that takes an action id."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise IllegalActionError(
            f"action must be an integer in 0..{N_ACTIONS - 1}, got {quoted(action)}"
        )
    if not 0 <= action < N_ACTIONS:
        raise IllegalActionError(f"action {quoted(action)} is out of range 0..{N_ACTIONS - 1}")
    return int(action)


class Game:
    """A Satellites game in progress.

    >>> game = Game.new(seed=0)
    >>> game.to_move, game.moves, game.is_over
    (0, 0, False)
    """

    def __init__(self, state: np.ndarray, max_moves: int = DEFAULT_MAX_MOVES):
        """A game over `state` (an int32 array, kept, not copied; ValueError naming the state
        and its first problem when it is not a position the kernels can read)."""
        self.state = check_state(state)
        self.max_moves = check_max_moves(max_moves)
        self.history: list[str] = []  # completed moves in notation
        self.actions: list[int] = []  # every action id played (a displacement is two)
        self._scratch = new_work()
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)
        self._mask_fresh = False
        self._status = int(game_status(state, self.max_moves))

    # ------------------------------------------------------------------ construction

    @classmethod
    def new(
        cls,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        max_moves: int = DEFAULT_MAX_MOVES,
    ) -> Game:
        """A game from the R4 random set-up (from `rng`, or a generator seeded with `seed`:
        None or an integer from 0 to 2**64 - 1)."""
        rng = check_rng(rng) if rng is not None else np.random.default_rng(check_seed(seed))
        return cls(initial_state(rng), max_moves)

    @classmethod
    def from_spn(cls, spn: str, max_moves: int = DEFAULT_MAX_MOVES) -> Game:
        """A game from any legal SPN position."""
        return cls(parse_spn(spn), max_moves)

    def clone(self, light: bool = False) -> Game:
        """An independent copy (state, history and cache). A `light` copy (a replayed game's
        positions) keeps only the last move of the history and no actions, and shares this
        game's scratch memory (use it in the same thread): copying a game of n moves then
        costs the same at any n, so a game's n positions cost O(n), not O(n^2)."""
        other = Game.__new__(Game)
        other.state = self.state.copy()
        other.max_moves = self.max_moves
        other.history = self.history[-1:] if light else list(self.history)
        other.actions = [] if light else list(self.actions)
        other._scratch = self._scratch if light else new_work()
        other._mask = self._mask.copy()
        other._mask_fresh = self._mask_fresh
        other._status = self._status
        return other

    def __repr__(self) -> str:
        return f"Game({self.to_spn()!r}, max_moves={self.max_moves})"

    def __eq__(self, other: object) -> bool:
        """Same position (board, counters, a pending push) and the same move cap."""
        if not isinstance(other, Game):
            return NotImplemented
        return self.max_moves == other.max_moves and np.array_equal(self.state, other.state)

    # A game changes as it is played. typeshed types `__hash__` as a method, but None is
    # Python's way to mark a class unhashable.
    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ state

    @property
    def to_move(self) -> int:
        """0 red, 1 blue: the player whose action comes next."""
        return int(self.state[TO_MOVE])

    @property
    def turn(self) -> Player:
        """The player whose action comes next, as a `Player`."""
        return Player(int(self.state[TO_MOVE]))

    @property
    def moves(self) -> int:
        return int(self.state[MOVES])

    @property
    def grace(self) -> int | None:
        """Grace moves left for the player to move, or None when no player is done."""
        g = int(self.state[GRACE])
        return None if g == NO_GRACE else g

    @property
    def passes(self) -> int:
        return int(self.state[PASSES])

    @property
    def pending_push(self) -> int | None:
        """Cell the displaced satellite waits to be pushed from, or None."""
        target = int(self.state[PENDING_TARGET])
        return None if target < 0 else target

    @property
    def pending_piece(self) -> int:
        """Signed code of the satellite waiting to be pushed (0 when none)."""
        return int(self.state[PENDING_PIECE])

    @property
    def board(self) -> np.ndarray:
        """The 100 board cells (read-only view): +v red, -v blue, 0 empty."""
        view = self.state[:N_CELLS]
        view.flags.writeable = False
        return view

    @property
    def connected_counts(self) -> tuple[int, int]:
        red, blue = count_connected(self.state[:N_CELLS])
        return int(red), int(blue)

    @property
    def status(self) -> int:
        """ONGOING, TERMINATED (end by the rules) or TRUNCATED (move cap only)."""
        return self._status

    @property
    def is_over(self) -> bool:
        return self._status != ONGOING

    @property
    def terminated(self) -> bool:
        return self._status == TERMINATED

    @property
    def truncated(self) -> bool:
        return self._status == TRUNCATED

    def to_spn(self) -> str:
        """The position in SPN (RULES.md section 7)."""
        return to_spn(self.state)

    def score(self) -> Score:
        """R21-R23 on the current board (meaningful at any time, final at the end)."""
        return score(self.state[:N_CELLS])

    def outcome(self) -> Outcome | None:
        """How the game ended (rule, winner, score), or None while it goes on."""
        if not self.is_over:
            return None
        red, blue = self.connected_counts
        if red + blue >= END_CONNECTED:
            termination = Termination.CONNECTED
        elif self.grace == 0:
            termination = Termination.GRACE
        elif self.passes >= 2:
            termination = Termination.PASSES
        else:
            termination = Termination.MOVE_CAP
        final = self.score()
        return Outcome(termination, None if final.winner is None else Player(final.winner), final)

    # ------------------------------------------------------------------ legal moves

    def legal_mask(self) -> np.ndarray:
        """The exact int8 action mask (shared cache: copy it before changing it)."""
        if not self._mask_fresh:
            if self._status == ONGOING:
                fill_legal_mask(self.state, self._mask, self._scratch)
            else:
                self._mask[:] = 0
            self._mask_fresh = True
        return self._mask

    def legal_actions(self) -> np.ndarray:
        """The legal action ids, in increasing order."""
        return np.flatnonzero(self.legal_mask())

    def legal_moves(self) -> list[str]:
        """Legal moves in notation (a displacement listed once per push)."""
        if self.is_over:
            return []
        if self.pending_push is not None:
            return [self.describe(a) for a in self.legal_actions()]
        texts: list[str] = []
        for action in self.legal_actions():
            if action < N_MOVE_ACTIONS and self.is_displacement(action):
                child = self.clone()
                child.play(int(action))
                texts.extend(
                    self.describe(int(action)) + child.describe(int(push))
                    for push in child.legal_actions()
                )
            else:
                texts.append(self.describe(int(action)))
        return texts

    # ------------------------------------------------------------------ playing

    def play(self, action: int) -> None:
        """Play one action (a move, a push or a pass); raise IllegalActionError if not legal."""
        action = self._check_action(action)
        source = target = -1
        if action < N_MOVE_ACTIONS:
            source, direction, k = decode_move_action(action)
            target = int(RAY[source, direction, k - 1])
        elif action < PASS_ACTION:
            source = int(self.state[PENDING_FROM])
            target = int(self.state[PENDING_TARGET])
        apply_unchecked(self.state, action, self._scratch)
        self.actions.append(action)
        self._mask_fresh = False
        if action == PASS_ACTION:
            self.history.append("pass")
        elif action >= PUSH_BASE:
            direction, distance = decode_push_action(action)
            push_to = int(RAY[target, direction, distance - 1])
            self.history.append(move_text(source, target, push_to))
        elif not is_pending(self.state):
            self.history.append(move_text(source, target))
        self._status = int(game_status(self.state, self.max_moves))

    def play_move(self, text: str) -> None:
        """Play a whole move in notation (`c10-c7`, `c10-f7>f9`, `pass`); an illegal move
        (its push included) raises IllegalActionError and leaves the game unchanged."""
        actions = self.actions_of(text)
        if len(actions) == 2:  # check the push on a copy before touching this game
            trial = self.clone()
            trial.play(actions[0])
            trial._check_action(actions[1])
        for action in actions:
            self.play(action)

    def actions_of(self, text: str) -> list[int]:
        """The action ids of a move in notation, checked against this position."""
        if not isinstance(text, str):
            raise NotationError(
                f"a move is a string in notation (e.g. 'c10-c7'), got {quoted(text)}"
            )
        parsed = parse_move_text(text)
        if parsed is None:
            return [PASS_ACTION]
        text = text.strip()  # a move in notation is short: the messages below quote it whole
        if self.pending_push is not None:
            raise IllegalActionError(
                f"{text!r}: a displacement is waiting for its push from "
                f"{square_name(self.pending_push)}; give the push as the next action"
            )
        source, target, landing = parsed
        line = direction_between(source, target)
        if line is None or line[1] > 4:
            raise IllegalActionError(
                f"{text!r}: {square_name(source)} to {square_name(target)} is not a straight "
                f"line of 1-4 cells in one of the 8 directions"
            )
        action = move_action(source, line[0], line[1])
        if landing is None:
            if self.is_displacement(action):
                raise IllegalActionError(
                    f"{text!r} lands on an opponent satellite: a displacement needs its push, "
                    f"e.g. '{text}>{self._example_landing(action)}'"
                )
            return [action]
        push = direction_between(target, landing)
        if push is None or push[1] > 2:
            raise IllegalActionError(
                f"{text!r}: the push {square_name(target)} to {square_name(landing)} is not a "
                f"straight line of 1-2 cells"
            )
        if not self.is_displacement(action):
            raise IllegalActionError(
                f"{text!r}: {square_name(target)} does not hold an opponent satellite, so there "
                f"is nothing to push"
            )
        return [action, push_action(*push)]

    def describe(self, action: int) -> str:
        """Notation of one action in this position: `c10-c7`, `c10-f7` (first step of a
        displacement), `>f9` (a push) or `pass`."""
        action = _action_id(action)
        if action == PASS_ACTION:
            return "pass"
        if action >= PUSH_BASE:
            target = self.pending_push
            direction, distance = decode_push_action(action)
            landing = -1 if target is None else int(RAY[target, direction, distance - 1])
            if landing < 0:
                return f"push {direction}x{distance}"
            return ">" + SQUARE_NAMES[landing]
        source, direction, k = decode_move_action(action)
        target = int(RAY[source, direction, k - 1])
        if target < 0:
            return f"{SQUARE_NAMES[source]}-(off board)"
        return move_text(source, target)

    # ------------------------------------------------------------------ helpers

    def is_displacement(self, action: int) -> bool:
        """True when move action `action` lands on an opponent's satellite (R15)."""
        if not 0 <= _action_id(action) < N_MOVE_ACTIONS:
            return False
        source, direction, k = decode_move_action(action)
        target = int(RAY[source, direction, k - 1])
        return target >= 0 and self.state[source] * self.state[target] < 0

    def _example_landing(self, action: int) -> str:
        if not self.legal_mask()[action]:
            return "?"
        child = self.clone()
        child.play(action)
        return child.describe(int(child.legal_actions()[0]))[1:]

    def _check_action(self, action: object) -> int:
        number = _action_id(action)
        if self.is_over:
            raise IllegalActionError(f"the game is over; no action is legal (action {number})")
        if not self.legal_mask()[number]:
            raise IllegalActionError(self._why_illegal(number))
        return number

    def _why_illegal(self, action: int) -> str:
        return (
            f"illegal action {action} ({self.describe(action)}): "
            f"{explain_illegal(self.state, action)}"
        )
