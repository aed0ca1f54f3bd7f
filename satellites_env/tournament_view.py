"""A tournament in the terminal: `satellites evaluate`'s progress bars and result tables.

[`TournamentView`][satellites_env.tournament_view.TournamentView] is the
[`Reporter`][satellites_env.tournament.Reporter] that `satellites evaluate` hands to
[`tournament.play`][satellites_env.tournament.play]: a progress bar while the games and
replay pages are made, then the pairs' results (`results_table`) and the Elo ratings
(`elo_table`).
"""

from __future__ import annotations

from rich.markup import escape
from rich.progress import Progress
from rich.table import Table
from rich.text import Text

from .arena import TournamentResult, rate_with_interval
from .terminal import console, errors, progress_bar, say
from .tournament import Reporter


def results_table(result: TournamentResult, title: str) -> Table:
    """Each pair's games, wins, draws and win rates with their 95% intervals."""
    table = Table(title=title)
    for column in (
        "a",
        "b",
        "games",
        "a wins",
        "draws",
        "b wins",
        "a win rate (95% CI)",
        "b win rate (95% CI)",
    ):
        # names fold onto more lines rather than lose their ends: two `az:` agents whose
        # paths differ only at the end must not look alike
        table.add_column(
            column,
            justify="left" if column in ("a", "b") else "right",
            overflow="fold" if column in ("a", "b") else "ellipsis",
        )
    for pair in result.pairs:
        table.add_row(
            Text(pair.a),
            Text(pair.b),
            str(pair.games),
            str(pair.a_wins),
            str(pair.draws),
            str(pair.b_wins),
            *(
                (
                    rate_with_interval(pair.a_wins, pair.games),
                    rate_with_interval(pair.b_wins, pair.games),
                )
                if pair.games
                else ("-", "-")
            ),
        )  # a pair not reached before Ctrl-C
    return table


def elo_title(result: TournamentResult) -> str:
    """Names the agent whose rating is fixed (the shipped scale's anchor, or the first)."""
    from .rating import anchor_text

    anchor = result.elo_anchor or result.agents[0]
    return f"Elo, {anchor_text(anchor, result.elo.get(anchor, 0.0))}"


def elo_table(result: TournamentResult) -> Table:
    """The agents' Elo ratings, best first."""
    table = Table(title=Text(elo_title(result)))
    table.add_column("agent", overflow="fold")
    table.add_column("Elo", justify="right")
    for agent, elo in sorted(result.elo.items(), key=lambda item: -item[1]):
        table.add_row(Text(agent), f"{elo:+.0f}")
    return table


class TournamentView(Reporter):
    """`evaluate`'s view of a tournament: a progress bar, tables and one line per notice.

    Args:
        title: The title of the results table.
    """

    def __init__(self, title: str):
        self.title = title
        self.bar: Progress | None = None

    def _show(self, name: str, done: int, total: int) -> None:
        if self.bar is None or self.bar.tasks[0].description != name:
            self.close()
            self.bar = progress_bar(transient=True)
            self.bar.add_task(name)
            self.bar.start()
        self.bar.update(self.bar.task_ids[0], completed=done, total=total)

    def close(self) -> None:
        """Take the progress bar off the screen, if one is shown."""
        if self.bar is not None:
            self.bar, bar = None, self.bar
            bar.stop()

    def games(self, done: int, total: int) -> None:
        self._show("games", done, total)

    def pages(self, done: int, total: int) -> None:
        self._show("replays", done, total)

    def ended(self, result: TournamentResult) -> None:
        self.close()
        played, total = len(result.finished), len(result.records)
        if result.complete:
            console.print(results_table(result, self.title))
            console.print(elo_table(result))
        elif played:
            console.print(
                results_table(result, f"{self.title}: interrupted, {played} of {total} games")
            )

    def message(self, text: str) -> None:
        self.close()
        say(text)

    def problem(self, text: str) -> None:
        errors.print(f"[red]error:[/red] {escape(text)}")
