"""The leaderboard page of a rating ladder: ratings with their 95% interval bars, the
head-to-head matrix, and each agent's games linked to their replay pages.

`write_leaderboard(ladder, folder)` writes `folder/index.html` and one replay page per game in
`folder/games/` (a single self-contained file each, as every page of this package), each
written by `satellites_env.files` (atomically; never over a special file or a link).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from satellites_env.files import write_output

from .pages import document
from .replay import write_replay

if TYPE_CHECKING:
    from satellites_env.ladder import Ladder


def standings(ladder: Ladder) -> dict:
    """The ladder's table as plain data: agents sorted by rating (name, spec, Elo, interval,
    games, score, likelihood of superiority over the next), the head-to-head scores, the
    anchor."""
    agents = ladder.agents()
    ratings = ladder.ratings(agents)
    scores, games = ladder.results(agents)
    order = sorted(range(len(agents)), key=lambda k: -ratings.elo[k])
    rows = []
    for position, k in enumerate(order):
        entry = agents[k]
        low, high = ratings.interval(entry.name)
        below = agents[order[position + 1]].name if position + 1 < len(order) else None
        played = int(games[k].sum())
        rows.append(
            {
                "rank": position + 1,
                "name": entry.name,
                "spec": entry.spec,
                "key": entry.key,
                "elo": round(float(ratings.elo[k]), 1),
                "low": round(low, 1),
                "high": round(high, 1),
                "games": played,
                "score": round(float(scores[k].sum()) / played, 4) if played else None,
                "los_next": None
                if below is None
                else round(ratings.superiority(entry.name, below), 4),
            }
        )
    matrix = {
        agents[i].name: {
            agents[j].name: {"score": float(scores[i, j]), "games": int(games[i, j])}
            for j in order
            if games[i, j]
        }
        for i in order
    }
    return {
        "anchor": ratings.anchor,
        "anchor_elo": ratings.anchor_elo,
        "seed": ladder.seed,
        "max_moves": ladder.max_moves,
        "games": ladder.games_count(),
        "agents": rows,
        "matrix": matrix,
    }


def leaderboard_html(
    table: dict,
    games: dict[str, list[tuple[int, dict]]] | None = None,
    title: str = "Satellites ladder",
) -> str:
    """The page of a `standings` table; `games` maps an agent's name to its games as
    (game id, summary with `red`, `blue`, `winner`, `moves`), each linked to games/ID.html."""
    rows = table["agents"]
    lows = [r["low"] for r in rows] or [0.0]
    highs = [r["high"] for r in rows] or [1.0]
    left: float = min([*lows, 0.0])
    right: float = max([*highs, 1.0])
    span = max(right - left, 1.0)

    def x(value: float) -> float:
        return round(100 * (value - left) / span, 2)

    body_rows = []
    for r in rows:
        bar = (
            f'<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" '
            f'aria-label="{r["low"]:+.0f} to {r["high"]:+.0f}">'
            f'<rect x="{x(r["low"])}" y="3" width="{max(x(r["high"]) - x(r["low"]), 0.5)}" '
            f'height="4" class="interval"/><rect x="{x(r["elo"]) - 0.4}" y="1" width="0.8" '
            f'height="8" class="point"/></svg>'
        )
        los = "" if r["los_next"] is None else f"{100 * r['los_next']:.1f}%"
        score = "" if r["score"] is None else f"{100 * r['score']:.1f}%"
        body_rows.append(
            f'<tr data-name="{escape(r["name"])}"><td class="num">{r["rank"]}</td>'
            f'<td><a href="#agent-{r["rank"]}">{escape(r["name"])}</a></td>'
            f'<td class="num elo">{r["elo"]:+.0f}</td>'
            f'<td class="num">[{r["low"]:+.0f}, {r["high"]:+.0f}]</td><td>{bar}</td>'
            f'<td class="num played">{r["games"]}</td><td class="num">{score}</td>'
            f'<td class="num">{los}</td></tr>'
        )
    names = [r["name"] for r in rows]
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    matrix_rows = []
    for a in names:
        cells = []
        for b in names:
            cell = table["matrix"].get(a, {}).get(b)
            cells.append(
                "<td></td>"
                if cell is None
                else f'<td class="num" title="{cell["games"]} games">'
                f"{100 * cell['score'] / cell['games']:.0f}%</td>"
            )
        matrix_rows.append(f"<tr><th>{escape(a)}</th>{''.join(cells)}</tr>")
    sections = []
    for r in rows:
        items = []
        for game_id, summary in (games or {}).get(r["name"], []):
            result = summary.get("winner") or "draw"
            items.append(
                f'<li><a href="games/{game_id}.html">game {game_id}</a>: '
                f"{escape(str(summary.get('red')))} (red) v "
                f"{escape(str(summary.get('blue')))} (blue), {escape(result)}, "
                f"{summary.get('moves')} moves</li>"
            )
        sections.append(
            f'<details id="agent-{r["rank"]}"><summary>{escape(r["name"])} '
            f"({len(items)} games) <code>{escape(r['spec'])}</code></summary>"
            f'<ul class="games">{"".join(items)}</ul></details>'
        )
    style = (
        "<style>table.ratings,table.matrix{width:auto;justify-self:start;"
        "align-self:flex-start}"
        "table.ratings td,table.ratings th{white-space:nowrap;padding:.2em .6em}"
        ".bar{width:16em;height:1em;display:block}.interval{fill:#7aa6d8}"
        ".point{fill:#f0c419}table.matrix td,table.matrix th{padding:0 .4em}</style>"
    )
    body = f"""{style}<div class="app index">
<header class="top"><h1>{escape(title)}</h1>
<p class="muted">Bradley&ndash;Terry ratings, {escape(table["anchor"])} =
{table.get("anchor_elo", 0.0):+.0f}, 95% intervals;
{table["games"]} games &middot; seed {table["seed"]} &middot; move cap {table["max_moves"]}</p>
</header>
<table class="ratings"><caption>Ratings</caption><thead><tr><th>#</th><th>agent</th>
<th>Elo</th><th>95% interval</th><th></th><th>games</th><th>score</th>
<th>superiority over the next</th></tr></thead><tbody>{"".join(body_rows)}</tbody></table>
<table class="matrix"><caption>Head to head (score of the row against the column)</caption>
<thead><tr><th></th>{head}</tr></thead><tbody>{"".join(matrix_rows)}</tbody></table>
<section class="agents"><h2>Games</h2>{"".join(sections)}</section></div>"""
    return document(title, body, data={"standings": table})


def write_leaderboard(ladder: Ladder, folder: str | Path, title: str = "Satellites ladder") -> Path:
    """Write the ladder's page to `folder/index.html` and every game's replay page to
    `folder/games/ID.html`; returns the index's path."""
    folder = Path(folder)
    (folder / "games").mkdir(parents=True, exist_ok=True)
    table = standings(ladder)
    names = {e.id: e.name for e in ladder.agents(roster_only=False)}
    roster = {e.name for e in ladder.agents()}
    games: dict[str, list] = {}
    for game_id, a, b, record in ladder.game_rows():
        write_replay(record, folder / "games" / f"{game_id}.html", f"ladder game {game_id}")
        summary = {
            "red": record.players.get("red"),
            "blue": record.players.get("blue"),
            "winner": record.result.get("winner"),
            "moves": len(record.moves),
        }
        for agent in (names[a], names[b]):
            if agent in roster:
                games.setdefault(agent, []).append((game_id, summary))
    return write_output(
        folder / "index.html", leaderboard_html(table, games, title), "leaderboard page"
    )
