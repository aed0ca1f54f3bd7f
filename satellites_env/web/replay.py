"""The HTML replay of a game record, and the index page of a folder of records.

`replay_html(record)` is one self-contained page (inline SVG, style and script; nothing from
the network, opens from disk): the board at every step, a step slider, play/pause,
first/last (Home, End), the arrow keys, the move list in notation (click a move to go there)
and the result with the colonies that decided it. Each step's board is drawn by
[`render.svg_layer`][satellites_env.render.svg_layer] here in Python; the page only shows them. The
element showing the board, ``#board``, carries ``data-spn`` (the SPN of the position shown) and
``data-step``.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from satellites_env.core.board import COLOR_NAMES
from satellites_env.files import write_output
from satellites_env.record import GameRecord
from satellites_env.render.svg import svg_document, svg_layer

from .pages import document, packed_json
from .result import result_summary


def _icon(name: str, path: str) -> str:
    return f'<svg class="i-{name}" viewBox="0 0 16 16" aria-hidden="true"><path d="{path}"/></svg>'


# The control buttons' icons (drawn, so that no font needs media symbols).
ICONS = {
    name: _icon(name, path)
    for name, path in {
        "first": "M2 3h2v10H2zM9 3v10L4 8zM15 3v10l-5-5z",
        "prev": "M3 3h2v10H3zM13 3v10L6 8z",
        "play": "M4 2.5v11l9.5-5.5z",
        "pause": "M4 3h3v10H4zM9 3h3v10H9z",
        "next": "M3 3v10l7-5zM11 3h2v10h-2z",
        "last": "M1 3v10l5-5zM7 3v10l5-5zM12 3h2v10h-2z",
    }.items()
}


def _players(record: GameRecord) -> dict[str, str]:
    return {color: record.players.get(color, "?") for color in COLOR_NAMES}


def replay_data(record: GameRecord, source: str = "game record") -> tuple[dict, dict]:
    """(data, packed) of a replay page: the moves, movers, players and result, and the
    per-step SVG layers and SPNs (to be packed). Raises RecordError if the record does not
    replay."""
    positions = record.replay(source)
    layers = [svg_layer(game) for game in positions]  # each highlights its last move
    spns = [game.to_spn() for game in positions]
    movers = [COLOR_NAMES[game.to_move] for game in positions[:-1]]
    data = {
        "players": _players(record),
        "moves": list(record.moves),
        "movers": movers,
        "start_spn": record.start_spn,
        "max_moves": record.max_moves,
        "record_result": record.result,
        "result": result_summary(positions[-1], record.result),
    }
    return data, {"layers": layers, "spns": spns}


def _title(record: GameRecord) -> str:
    players = _players(record)
    return f"Satellites: {players['red']} (red) vs {players['blue']} (blue)"


def replay_html(record: GameRecord, source: str = "game record") -> str:
    """The replay page of `record` as one HTML document (a string)."""
    data, steps = replay_data(record, source)
    players = data["players"]
    start = svg_document(steps["layers"][0])
    body = f"""<div class="app">
<header class="top"><h1>Satellites replay</h1>
<p class="players"><span class="dot red"></span>{escape(players["red"])}
<span class="vs">vs</span><span class="dot blue"></span>{escape(players["blue"])}
<span class="muted">&middot; {len(record.moves)} moves</span></p></header>
<main class="layout">
<section class="board-wrap"><div id="board" data-spn="{escape(steps["spns"][0])}"
data-step="0">{start}</div></section>
<aside class="panel">
<div class="controls" role="toolbar" aria-label="replay controls">
<button id="first" title="first position (Home)" aria-label="first">{ICONS["first"]}</button>
<button id="prev" title="back one move (&larr;)" aria-label="back">{ICONS["prev"]}</button>
<button id="play" title="play / pause (Space)" aria-label="play">
{ICONS["play"]}{ICONS["pause"]}</button>
<button id="next" title="forward one move (&rarr;)" aria-label="forward">{ICONS["next"]}</button>
<button id="last" title="last position (End)" aria-label="last">{ICONS["last"]}</button>
<select id="speed" title="seconds per move" aria-label="speed">
<option value="2000">2 s</option><option value="1000">1 s</option>
<option value="500" selected>0.5 s</option><option value="200">0.2 s</option>
<option value="80">0.08 s</option></select></div>
<input type="range" id="slider" min="0" max="{len(record.moves)}" value="0" step="1"
aria-label="step">
<div id="where" class="where">start</div>
<div id="result" class="result"></div>
<h2>Moves</h2>
<ol id="moves" class="moves"></ol>
<p class="keys">&larr; &rarr; step &middot; Home / End &middot; Space play / pause &middot;
click a move to go there</p>
</aside></main></div>"""
    return document(_title(record), body, "replay.js", data, packed_json(steps))


def write_replay(record: GameRecord, path: str | Path, source: str = "game record") -> Path:
    """Write the replay page of `record` to `path` (the folder must exist), atomically; a
    folder, special file or symbolic link at `path` is refused (`satellites_env.files`)."""
    return write_output(path, replay_html(record, source), "replay page")


def index_html(manifest: dict, title: str = "Satellites tournament") -> str:
    """The index page of a records folder: the tournament's results, then every game
    (agents, colors, result, length) with a link to its replay (`game["replay"]`)."""
    rows = []
    for number, game in enumerate(manifest.get("games", [])):
        winner = game.get("winner")
        result = (
            "draw"
            if winner is None and game.get("end") in ("terminated", "truncated")
            else (winner or "no result")
        )
        link = game.get("replay")
        replay = f'<a href="{escape(link)}">replay</a>' if link else ""
        record = game.get("record")
        raw = f'<a class="muted" href="{escape(record)}">json</a>' if record else ""
        rows.append(
            f'<tr><td>{number}</td><td><span class="dot red"></span>{escape(str(game.get("red")))}'
            f'</td><td><span class="dot blue"></span>{escape(str(game.get("blue")))}</td>'
            f'<td class="win-{escape(str(winner))}">{escape(result)}</td>'
            f"<td>{escape(str(game.get('end', '')))}</td>"
            f'<td class="num">{escape(str(game.get("moves", "")))}</td>'
            f'<td class="reason">{escape(str(game.get("reason", "")))}</td>'
            f"<td>{replay} {raw}</td></tr>"
        )
    pairs = "".join(
        f'<tr><td>{escape(p["a"])}</td><td>{escape(p["b"])}</td><td class="num">{p["games"]}</td>'
        f'<td class="num">{p["a_wins"]}</td><td class="num">{p["draws"]}</td>'
        f'<td class="num">{p["b_wins"]}</td></tr>'
        for p in manifest.get("pairs", [])
    )
    ratings = manifest.get("elo", {})
    rated = sorted(
        ((agent, value) for agent, value in ratings.items() if value is not None),
        key=lambda item: -item[1],
    )
    elo = "".join(
        f'<tr><td>{escape(agent)}</td><td class="num">{value:+.0f}</td></tr>'
        for agent, value in rated
    ) + "".join(  # no chain of games links it to the anchor
        f'<tr><td>{escape(agent)}</td><td class="num">unrated</td></tr>'
        for agent, value in ratings.items()
        if value is None
    )
    anchor = manifest.get("elo_anchor") or ""
    anchor_elo = ratings.get(anchor) or 0.0
    body = f"""<div class="app index">
<header class="top"><h1>{escape(title)}</h1>
<p class="muted">{manifest.get("games_per_pairing", "?")} games per pairing &middot; seed
{manifest.get("seed", "?")} &middot; move cap {manifest.get("max_moves", "?")}</p></header>
<section class="tables">
<table><caption>Pairings</caption><thead><tr><th>a</th><th>b</th><th>games</th><th>a wins</th>
<th>draws</th><th>b wins</th></tr></thead><tbody>{pairs}</tbody></table>
<table><caption>Elo ({escape(anchor)} = {anchor_elo:+.0f})</caption><thead><tr><th>agent</th>
<th>Elo</th></tr></thead><tbody>{elo}</tbody></table></section>
<table class="games"><caption>Games</caption><thead><tr><th>#</th><th>red</th><th>blue</th>
<th>winner</th><th>end</th><th>moves</th><th>reason</th><th></th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>"""
    return document(title, body)
