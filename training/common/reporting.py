"""What a run reports: its TensorBoard scalars and sample games, the progress line of a log
file, the final table, summary.json and the learning curve."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from satellites_env.arena import rate_with_interval, wilson_interval
from satellites_env.files import open_output, write_output
from satellites_env.rating import SCALE, SCALE_ANCHOR
from satellites_env.terminal import plain, printable

from ..distributed.pool import log_pool
from .learner import Learner
from .run_state import Evaluation
from .tensorboard import log_game

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter


class Reporting(Learner):
    """What the run reports (a part of the [`Trainer`][training.common.run.Trainer]):
    TensorBoard, a log file's progress lines, the final table, summary.json and the learning
    curve."""

    def _progress_line(self, losses: dict[str, float]) -> str:
        c, total, budget = self.counters, self.config.total, self.config.minutes
        cpu_budget = self.config.cpu_minutes
        if budget > 0:
            spent = (c.seconds + c.other_seconds) / 60
            done = (
                f"{self.progress:,} {self.UNIT}, {spent:.1f} of {budget:g} min "
                f"({min(spent / budget, 1):.0%}; the final table gets the rest)"
            )
        elif cpu_budget > 0:
            done = (
                f"{self.progress:,} {self.UNIT}, {c.cpu_seconds / 60:.1f} of {cpu_budget:g} "
                f"CPU min ({min(c.cpu_seconds / 60 / cpu_budget, 1):.0%})"
            )
        else:
            done = f"{self.progress:,}/{total:,} {self.UNIT} ({min(self.progress / total, 1):.0%})"
        line = (
            f"{self.ITERATION} {c.iterations}: {done}, {c.games:,} games, "
            f"{self.describe_throughput()}" + ("" if budget > 0 else f", {c.seconds / 60:.1f} min")
        )
        status = self.status(losses)
        if status:
            line += f", {status}"
        if self.history:
            line += f"; eval at {self.history[-1].progress:,}: {rates(self.history[-1])}"
        return line

    def _log(self, writer: SummaryWriter, losses: dict[str, float]) -> None:
        step = self.progress
        for key, value in losses.items():
            writer.add_scalar(f"loss/{key}", value, step)
        for key, value in self.throughput().items():
            writer.add_scalar(f"throughput/{key}", value, step)
        for key, value in self.log_scalars().items():
            writer.add_scalar(key, value, step)
        log_pool(writer, self._pool, step)

    def _log_evaluation(self, writer: SummaryWriter, evaluation: Evaluation) -> None:
        for key in evaluation.results:
            writer.add_scalar(
                f"eval/win_rate_vs_{key}", evaluation.win_rate(key), evaluation.progress
            )
        rating = evaluation.elo()
        if rating is not None:
            for name, value in zip(("elo", "elo_low", "elo_high"), rating, strict=False):
                writer.add_scalar(f"eval/{name}", value, evaluation.progress)
        if self.sample_game is not None:  # how the policy plays now, as an animation
            log_game(
                writer,
                f"eval/game_vs_{self.config.eval.opponents[-1]}",
                self.sample_game,
                evaluation.progress,
            )
            self.sample_game = None

    def _write_summary(
        self,
        final: Evaluation,
        session_progress: int,
        session_seconds: float,
        eval_seconds: float | None,
        write: bool = True,
    ) -> None:
        c = self.counters
        table = Table(
            title=f"Final evaluation after {self.progress:,} {self.UNIT} "
            f"({c.games:,} self-play games)"
        )
        for column in (
            "player",
            "opponent",
            "games",
            "wins",
            "draws",
            "losses",
            "win rate (95% CI)",
        ):
            table.add_column(
                column, justify="left" if column in ("player", "opponent") else "right"
            )
        keys = {p.key for p in self.players(True) if p.key}
        for key, r in final.results.items():
            player, _, opponent = key.partition(":")
            if player not in keys:  # the policy's results are keyed by the opponent alone
                player, opponent = "", key
            table.add_row(
                plain(player or "policy"),
                plain(opponent),
                str(r["games"]),
                str(r["a_wins"]),
                str(r["draws"]),
                str(r["b_wins"]),
                rate_with_interval(r["a_wins"], r["games"]),
            )
        if final.results:  # none when another command plays the final games (sweep)
            self.console.print(table)
        rating = final.elo()
        elo = (
            f"policy Elo {rating[0]:+.0f} [{rating[1]:+.0f}, {rating[2]:+.0f}] "
            f"({SCALE_ANCHOR[0]} = {SCALE_ANCHOR[1]:+.0f}); "
            if rating
            else ""
        )
        self.console.print(
            f"{elo}self-play: {self.describe_throughput()} "
            f"({c.seconds / 60:.1f} min training)"
            + (f"; final evaluation {eval_seconds:.0f} s" if eval_seconds is not None else "")
        )
        if not write:
            return
        summary = {
            "final": asdict(final),
            "counters": asdict(c),
            "throughput": self.throughput(),
            "session": {
                "progress": session_progress,
                "seconds": session_seconds,
                "final_eval_seconds": eval_seconds,
                # where this session's self-play ran (--ray or the config's distributed:)
                "placement": asdict(self.placement),
                # batches delivered, dropped with a dead actor, refused; actors
                # replaced
                "generators": vars(self._pool.stats) if self._pool else None,
            },
            "config": self.config.to_dict(),
            "config_changes": self.config_changes,
        }
        write_output(self.run_dir / "summary.json", json.dumps(summary, indent=1), "run file")

    def curve_keys(self) -> list[str]:
        """The evaluation results whose win rates the learning curve draws."""
        return list(self.config.eval.opponents)

    def plot(self) -> Path | None:
        return plot_learning_curve(
            self.history, self.curve_keys(), self.run_dir / "learning_curve.png", self.UNIT
        )


def rates(evaluation: Evaluation) -> str:
    """Each opponent's win rate, as rich markup (a name from a config is escaped, and its
    control characters shown escaped)."""
    return "  ".join(
        f"{escape(printable(o))} {evaluation.win_rate(o):.0%}" for o in evaluation.results
    )


def plot_learning_curve(
    history: list[Evaluation], opponents: list[str], path: str | Path, unit: str = "steps"
) -> Path | None:
    """learning_curve.png: the policy's Elo with its 95% band (left) and its win rate against
    each opponent with 95% Wilson bands (right), over the run's progress; None without
    evaluations."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    figure, (elo_axis, rate_axis) = plt.subplots(1, 2, figsize=(11, 4))
    rated = [(e.progress, elo) for e in history if (elo := e.elo()) is not None]
    if rated:
        xs = [x for x, _ in rated]
        elo_axis.plot(xs, [r[0] for _, r in rated], marker="o", color="tab:purple")
        elo_axis.fill_between(
            xs,
            [r[1] for _, r in rated],
            [r[2] for _, r in rated],
            color="tab:purple",
            alpha=0.2,
            label="95% interval",
        )
        rated_opponents = {o for e in history for o in e.results if o in SCALE}
        for name, rating in SCALE.items():
            if name not in rated_opponents:
                continue
            elo_axis.axhline(rating, color="grey", linewidth=0.8, linestyle="--")
            elo_axis.annotate(
                name,
                (xs[0], rating),
                fontsize=8,
                color="grey",
                textcoords="offset points",
                xytext=(2, 2),
            )
        elo_axis.legend(loc="lower right")
    elo_axis.set(
        xlabel=unit,
        ylabel=f"Elo ({SCALE_ANCHOR[0]} = {SCALE_ANCHOR[1]:+.0f})",
        title="policy (no search): Elo on the shipped scale",
    )
    for opponent in opponents:
        points = [
            (e.progress, e.results[opponent])
            for e in history
            if opponent in e.results and e.results[opponent]["games"]
        ]
        if not points:
            continue
        xs = [x for x, _ in points]
        bands = [wilson_interval(r["a_wins"], r["games"]) for _, r in points]
        player, _, against = (
            opponent.partition(":")
            if opponent.startswith("search:")
            else (
                "policy",
                "",
                opponent,
            )
        )
        (line,) = rate_axis.plot(
            xs,
            [r["a_wins"] / r["games"] for _, r in points],
            marker="o",
            label=f"{player} vs {against}",
        )
        rate_axis.fill_between(
            xs, [b[0] for b in bands], [b[1] for b in bands], color=line.get_color(), alpha=0.15
        )
    rate_axis.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    rate_axis.set(
        xlabel=unit,
        ylabel="win rate",
        ylim=(-0.02, 1.02),
        title="win rate (95% Wilson bands)",
    )
    rate_axis.legend(loc="lower right")
    thousands = FuncFormatter(lambda x, _: f"{x / 1e6:g} M" if x >= 1e6 else f"{x / 1e3:g} k")
    for axis in (elo_axis, rate_axis):
        axis.xaxis.set_major_formatter(thousands)
    figure.tight_layout()
    with open_output(path, "learning curve") as file:
        figure.savefig(file, dpi=110, format="png")
    plt.close(figure)
    return Path(path)
