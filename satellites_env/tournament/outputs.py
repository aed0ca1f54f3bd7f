"""A tournament's outputs: the records folder's file names, the settings that make two
tournaments one, the error of outputs that cannot be used, and the `Reporter` told of them."""

from __future__ import annotations

from ..arena import (
    TournamentResult,
)
from ..files import (
    OutputError,
)

#: the records folder's manifest: the results, and which record and replay is which game
MANIFEST = "tournament.json"
#: the records folder's index page: every game, linked to its replay
INDEX = "index.html"
#: the largest results file (`out`) read back to continue a tournament
MAX_RESULTS_BYTES = 256 * 1024 * 1024
#: the settings that make two tournaments the same one (the keys of a results file)
SETTINGS = ("agents", "games_per_pairing", "seed", "max_moves")


class TournamentError(OutputError):
    """A tournament's outputs cannot be used as given (a records folder of another
    tournament, a damaged unfinished results file), or could only be saved elsewhere."""


def record_name(k: int) -> str:
    """The file name of scheduled game `k`'s record in a records folder."""
    return f"game_{k:04d}.json"


def replay_name(k: int) -> str:
    """The file name of scheduled game `k`'s replay page in a records folder."""
    return f"game_{k:04d}.html"


class Reporter:
    """What [`play`][satellites_env.tournament.play] tells its caller as it goes. Every
    method does nothing here: override the ones to show."""

    def message(self, text: str) -> None:
        """A notice: a tournament continued, a file written, how to continue after Ctrl-C."""

    def problem(self, text: str) -> None:
        """An output that could not be written after Ctrl-C (where it went instead)."""

    def games(self, done: int, total: int) -> None:
        """`done` of the tournament's `total` games are finished."""

    def ended(self, result: TournamentResult) -> None:
        """The games are over (`result.complete`) or stopped by Ctrl-C; called before the
        results are written, with Ctrl-C held until they are."""

    def pages(self, done: int, total: int) -> None:
        """`done` of `total` replay pages are written."""
