"""One game against an agent, as the play page sees it: framework-free, so it is tested without
a server (`satellites_env.web.server` puts it behind HTTP).

A `PlaySession` holds a [`Game`][satellites_env.core.Game], the human's color and the
agent. Every request is checked by the engine: `PlaySession.move` plays a whole move
(an action id, the two actions of a displacement, or notation) or raises
[`IllegalActionError`][satellites_env.core.engine.IllegalActionError] / ``NotationError`` /
`RequestError` with the reason and changes nothing; then the agent replies.
`PlaySession.state` is what the page draws: the SVG layer, the SPN, the legal moves by
square, the move list and the result.
"""

from __future__ import annotations

import secrets
import threading
import time
from html import escape
from typing import TypeGuard

from satellites_env.agents import Agent, make_agent
from satellites_env.core.board import (
    COLOR_NAMES,
    DEFAULT_MAX_MOVES,
    N_MOVE_ACTIONS,
    PASS_ACTION,
    RAY,
    decode_move_action,
    decode_push_action,
)
from satellites_env.core.checks import quoted
from satellites_env.core.game import Game
from satellites_env.core.notation import square_name
from satellites_env.record import GameRecord
from satellites_env.render.svg import svg_document, svg_layer

from .pages import document
from .result import result_summary

HUMAN = "human"


class RequestError(ValueError):
    """A request the page should not send: a malformed body, a move out of turn, ..."""


def _is_action_id(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class PlaySession:
    """A game between the human (`color`) and the agent of `opponent` (an agent spec), from
    the R4 set-up of `seed` or from the position `spn`."""

    def __init__(
        self,
        opponent: str,
        color: str = "red",
        seed: int | None = None,
        spn: str | None = None,
        max_moves: int = DEFAULT_MAX_MOVES,
        agent: Agent | None = None,
    ):
        if color not in COLOR_NAMES:
            raise RequestError(f"color must be 'red' or 'blue', got {quoted(color)}")
        self.id = secrets.token_hex(8)
        self.opponent = opponent
        self.human = COLOR_NAMES.index(color)
        seed = secrets.randbits(32) if seed is None else seed
        self.game = Game.from_spn(spn, max_moves) if spn else Game.new(seed, max_moves=max_moves)
        self.start_spn = self.game.to_spn()
        self.agent = agent if agent is not None else make_agent(opponent, seed=seed)
        self.movers: list[str] = []  # who made each whole move in game.history
        self.last_reply: list[str] = []  # the agent's moves after the human's last one
        self.lock = threading.Lock()  # one request at a time changes this game
        self.touched = time.monotonic()
        self._reply()

    @property
    def color(self) -> str:
        return COLOR_NAMES[self.human]

    # ------------------------------------------------------------------ playing

    def _play(self, action: int) -> None:
        mover = COLOR_NAMES[self.game.to_move]
        before = len(self.game.history)
        self.game.play(action)
        if len(self.game.history) > before:
            self.movers.append(mover)

    def _reply(self) -> None:
        """The agent plays until the human is to move again (its push, its grace moves)."""
        self.last_reply = []
        while not self.game.is_over and self.game.to_move != self.human:
            before = len(self.game.history)
            self._play(self.agent.act(self.game))
            self.last_reply += self.game.history[before:]

    def _actions(self, request: dict) -> list[int]:
        """The action ids of a move request, checked against the game (nothing is played)."""
        if not isinstance(request, dict):
            raise RequestError(
                'a move is a JSON object: {"action": id}, '
                '{"actions": [move, push]} or {"move": "c10-c7"}'
            )
        keys = set(request) & {"action", "actions", "move"}
        if len(keys) != 1 or set(request) - keys:
            raise RequestError(
                "a move request has exactly one of 'action' (an action id), "
                "'actions' (a displacement's move and push ids) or 'move' "
                f"(notation); got keys {quoted(sorted(map(str, request)))}"
            )
        if self.game.is_over:
            raise RequestError("the game is over; start a new game")
        if self.game.to_move != self.human:
            raise RequestError(f"it is {COLOR_NAMES[self.game.to_move]}'s turn, not yours")
        if "move" in request:
            if not isinstance(request["move"], str):
                raise RequestError(
                    f"'move' must be a string in notation such as 'c10-c7', "
                    f"got {quoted(request['move'])}"
                )
            return self.game.actions_of(request["move"])
        actions = [request["action"]] if "action" in request else request["actions"]
        if (
            not isinstance(actions, list)
            or not 1 <= len(actions) <= 2
            or not all(_is_action_id(a) for a in actions)
        ):
            raise RequestError(
                f"'actions' must be a list of one or two action ids, got "
                f"{quoted(request.get('actions'))}"
                if "actions" in request
                else f"'action' must be an integer action id, got {quoted(request['action'])}"
            )
        return actions

    def move(self, request: dict) -> None:
        """Play the human's whole move, then the agent's reply. An illegal or malformed
        request raises (IllegalActionError, NotationError or RequestError) and changes
        nothing."""
        actions = self._actions(request)
        trial = self.game.clone()  # a displacement's push is checked before anything changes
        for action in actions:
            trial.play(action)
        if trial.pending_push is not None:
            raise RequestError(
                f"{self.game.describe(actions[0])} is a displacement: send its push too"
            )
        for action in actions:
            self._play(action)
        self._reply()

    def preview(self, action: object) -> dict:
        """The position after a displacement's first step, with its legal pushes: what the
        page shows while the human picks a push cell (the game itself does not change)."""
        if not _is_action_id(action):
            raise RequestError(f"'action' must be an integer action id, got {quoted(action)}")
        if self.game.to_move != self.human or self.game.is_over:
            raise RequestError("it is not your turn")
        if not self.game.is_displacement(action):
            raise RequestError(f"action {action} is not a displacement")
        trial = self.game.clone()
        trial.play(action)
        target = trial.pending_push
        pushes = []
        for push in trial.legal_actions():
            direction, distance = decode_push_action(int(push))
            pushes.append(
                {
                    "to": square_name(int(RAY[target, direction, distance - 1])),
                    "action": int(push),
                    "move": self.game.describe(action) + trial.describe(int(push)),
                }
            )
        return {
            "layer": svg_layer(trial, last_move=""),
            "pushes": pushes,
            "move": self.game.describe(action),
        }

    # ------------------------------------------------------------------ what the page shows

    def legal_by_square(self) -> dict[str, list[dict]]:
        """The human's legal moves: square -> [{"to", "action", "displacement"}]."""
        legal: dict[str, list[dict]] = {}
        if self.game.is_over or self.game.to_move != self.human:
            return legal
        for action in self.game.legal_actions():
            action = int(action)
            if action >= N_MOVE_ACTIONS:
                continue
            source, direction, k = decode_move_action(action)
            target = int(RAY[source, direction, k - 1])
            legal.setdefault(square_name(source), []).append(
                {
                    "to": square_name(target),
                    "action": action,
                    "displacement": bool(self.game.is_displacement(action)),
                }
            )
        return legal

    def state(self) -> dict:
        """Everything the page draws, as JSON-ready data."""
        game = self.game
        mask = game.legal_mask()
        your_turn = not game.is_over and game.to_move == self.human
        return {
            "id": self.id,
            "you": self.color,
            "opponent": self.opponent,
            "turn": COLOR_NAMES[game.to_move],
            "your_turn": your_turn,
            "over": game.is_over,
            "spn": game.to_spn() if game.pending_push is None else None,
            "layer": svg_layer(game),
            "moves": list(game.history),
            "movers": list(self.movers),
            "legal": self.legal_by_square(),
            "pass_action": PASS_ACTION if your_turn and mask[PASS_ACTION] else None,
            "reply": list(self.last_reply),
            "result": result_summary(game),
            "max_moves": game.max_moves,
        }

    def record(self) -> GameRecord:
        """The game so far as a record (`satellites replay` reads it)."""
        players = {self.color: HUMAN, COLOR_NAMES[1 - self.human]: self.opponent}
        return GameRecord.of(self.start_spn, self.game, players)


def play_page(opponent: str) -> str:
    """The play page: the board frame (click targets included), the controls and play.js,
    which talks to the server's /api/games routes."""
    board = svg_document("", interactive=True)
    body = f"""<div class="app">
<header class="top"><h1>Satellites</h1>
<p class="players muted">you against <strong>{escape(opponent)}</strong></p></header>
<main class="layout">
<section class="board-wrap"><div id="board" data-busy="true" data-version="0">{board}</div>
</section>
<aside class="panel">
<div id="status" class="status">starting a game&hellip;</div>
<div id="message" class="message info" role="status"></div>
<div class="row"><button id="pass" disabled title="pass: legal only when no move is (R19)">
Pass</button><a id="download" href="#" download>download the record</a></div>
<div class="row"><label for="color">new game as</label><select id="color">
<option value="red">red (moves first)</option><option value="blue">blue</option></select>
<button id="new" class="primary">New game</button></div>
<div id="result" class="result"></div>
<h2>Moves</h2>
<ol id="moves" class="moves"></ol>
<p class="keys">click one of your satellites to see where it can go, then a target; a
displacement then shows its orange push cells. Esc cancels.</p>
</aside></main></div>"""
    return document(f"Satellites against {opponent}", body, "play.js", {"opponent": opponent})
