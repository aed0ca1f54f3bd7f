"""The Gumbel AlphaZero run configuration (`learner: alphazero`): its sections and their
checks.

Every key is a [`setting`][training.common.config.setting] with its bounds and documentation; the
loading and checking are the common config system's
([`training.common.config`][training.common.config]).
"""

from __future__ import annotations

from dataclasses import dataclass

from training.common.config import (
    MAX_MOVES,
    NORMS,
    Config,
    ConfigError,
    EvalConfig,
    section,
    setting,
)

#: the trees of one self-play search hold search.games x (full_simulations + 1) nodes of
#: about 3 KB each: this bounds them to about 3 GB
MAX_TREE_NODES = 1_000_000


@dataclass
class AZModelConfig:
    """`model:` the residual CNN (training/common/network.py)."""

    channels: int = setting(32, 8, 1024, doc="width of the residual CNN (a multiple of 8)")
    blocks: int = setting(2, 1, 64, doc="residual blocks in the trunk")
    landing_values: bool = setting(
        False, doc="one landing-cell logit map per value of the moving satellite (else one map)"
    )
    norm: str = setting(
        "group",
        choices=NORMS,
        doc="group: GroupNorm; none: SkipInit (biases and a zero-initialised "
        "residual gain), faster on a CPU",
    )


@dataclass
class AZSearchConfig:
    """`search:` self-play's Gumbel searches (training/alphazero/search.py); `az:` agents of
    the run search with max_considered, c_visit and c_scale."""

    games: int = setting(
        128, 1, 4096, doc="self-play games in flight (one batched forward pass per simulation step)"
    )
    max_moves: int = setting(
        400, 1, MAX_MOVES, doc="move cap of self-play games (R20); capped games are still scored"
    )
    full_simulations: int = setting(
        32, 1, 1024, doc="simulations of a full search (its improved policy is a policy target)"
    )
    cheap_simulations: int = setting(
        8, 1, 1024, doc="simulations of a cheap search (its position is a value target only)"
    )
    full_fraction: float = setting(
        0.25, 0.0, 1.0, doc="playout-cap randomisation: the share of full searches"
    )
    max_considered: int = setting(
        16, 1, 256, doc="Gumbel-top-k: root actions sampled for sequential halving"
    )
    c_visit: float = setting(50.0, 0.0, 1e6, doc="sigma(q) = (c_visit + max visits) x c_scale x q")
    c_scale: float = setting(0.1, 0.0, 1e6, low_open=True, doc="(see c_visit)")
    dagger: float = setting(
        0.0,
        0.0,
        1.0,
        doc="share of games in which one colour plays the raw policy's "
        "move instead of its search's choice, its positions searched "
        "and stored as ever (DAgger)",
    )
    opponent: str = setting(
        "",
        doc="an agent spec: every self-play game is against this "
        "frozen agent, the network playing one colour (either, "
        "at random) and learning from its own moves alone: an "
        "exploiter of that agent (`satellites exploit`); empty: "
        "self-play",
        spec=True,
    )
    victim_play: bool = setting(
        False,
        doc="victim-play (A-MCTS-S): where the opponent is to move inside the "
        "search, its moves follow its own network's policy (an `az:` "
        "opponent's raw policy, not its search), the values still the "
        "network's; an opponent without a network is searched as ever",
    )


@dataclass
class AZReplayConfig:
    """`replay:` the buffer of searched positions (training/alphazero/replay.py)."""

    capacity: int = setting(
        50_000,
        1,
        4_000_000,
        doc="positions kept (a ring buffer: the oldest are overwritten; 1.5 KB each)",
    )
    replay_ratio: float = setting(
        4.0, 0.0, 1000.0, low_open=True, doc="positions trained on per new position"
    )
    batch_size: int = setting(256, 1, 65_536, doc="positions per gradient step")
    min_positions: int = setting(
        2_000, 1, 4_000_000, doc="no training until the buffer holds this many"
    )


@dataclass
class AZOptimConfig:
    """`optim:` the gradient steps."""

    learning_rate: float = setting(1e-3, 0.0, 1.0, low_open=True, doc="AdamW step size")
    weight_decay: float = setting(1e-4, 0.0, 1.0, doc="decoupled weight decay")
    value_coef: float = setting(
        1.0, 0.0, 1000.0, doc="weight of the value loss (mean squared error)"
    )
    max_grad_norm: float = setting(
        5.0, 0.0, 1e6, low_open=True, doc="gradient clipping (global L2 norm)"
    )


@dataclass
class AZEvalConfig(EvalConfig):
    """`eval:` the raw policy during and after the run, and its search at the end."""

    search_simulations: int = setting(
        0,
        0,
        1024,
        doc="the search agent az:PATH:N with N simulations plays "
        "the final games too; 0: the raw policy alone",
    )
    search_final: dict[str, int] = setting(
        {},
        0,
        100_000,
        doc="the search agent's final table: agent spec -> games against it "
        "(colours balanced); empty: the games of eval.final, as the raw policy",
    )
    search_games: int = setting(
        0,
        0,
        100_000,
        doc="games of the search agent (search_simulations) against the "
        "first of opponents at each evaluation, on the learning curve "
        "(an exploiter's target); 0: none",
    )


@dataclass
class AZConfig(Config, learner="alphazero"):
    """Gumbel AlphaZero (training/alphazero/): learns from the rules alone, observation planes
    in, search policies and final results (R21-R23) as targets."""

    learner: str = setting("alphazero", doc="the learner that reads this file")
    total_positions: int = setting(
        50_000, 1, 10**12, doc="self-play moves searched in the whole run"
    )
    positions_per_iteration: int = setting(
        1_024, 1, 1 << 20, doc="self-play moves between training phases"
    )
    overlap: bool = setting(
        False,
        doc="self-play runs while the learner trains on the previous "
        "iteration's positions (one iteration stale; threads "
        "must be 1)",
    )
    device: str = setting(
        "auto",
        doc="the network's device: auto (cuda when torch sees one, "
        "else cpu), cpu, cuda or cuda:N; trees and engine stay on "
        "the CPU",
    )
    init: str = setting(
        "",
        doc="start from this network instead of a random one: a "
        "checkpoint file or pretrained (its shape must be model:'s); "
        "empty: a random network",
    )
    model: AZModelConfig = section(AZModelConfig)
    search: AZSearchConfig = section(AZSearchConfig)
    replay: AZReplayConfig = section(AZReplayConfig)
    optim: AZOptimConfig = section(AZOptimConfig)
    eval: AZEvalConfig = section(AZEvalConfig)

    TOTAL = "total_positions"
    FINAL_TABLES = ("final", "search_final")
    RESUMABLE = (
        *Config.RESUMABLE,
        "eval.search_simulations",
        "eval.search_final",
        "eval.search_games",
    )
    GAMES = "search.games"

    def agent_specs(self) -> list[tuple[str, str]]:
        specs = super().agent_specs()
        specs += [(f"eval.search_final[{spec!r}]", spec) for spec in self.eval.search_final]
        if self.search.opponent:
            specs.insert(0, ("search.opponent", self.search.opponent))
        return specs

    def check_files(self, allow_pickle: bool = False, typed: tuple[str, ...] = ()) -> None:
        super().check_files(allow_pickle, typed)
        if self.init:
            from ..common.checkpoint import load_network
            from ..common.network import network_for

            try:  # the network the trainer starts from
                shape = load_network(self.init).shape
            except ValueError as error:
                raise ConfigError(f"init: {error}") from None
            wanted = network_for(self.model).shape
            if shape != wanted:
                raise ConfigError(
                    f"init: {self.init} holds a network of shape {shape}, but "
                    f"model: asks for {wanted}"
                )

    def check(self) -> None:
        super().check()
        s = self.search
        if s.cheap_simulations > s.full_simulations:
            raise ConfigError(
                f"search.cheap_simulations ({s.cheap_simulations}) must be <= "
                f"search.full_simulations ({s.full_simulations})"
            )
        if s.games * (s.full_simulations + 1) > MAX_TREE_NODES:
            raise ConfigError(
                f"search.games x (search.full_simulations + 1) must be <= {MAX_TREE_NODES:,} "
                f"tree nodes (about 3 GB), got {s.games} x {s.full_simulations + 1}"
            )
        if self.model.channels % 8:
            raise ConfigError(
                f"model.channels must be a multiple of 8 (GroupNorm groups), got "
                f"{self.model.channels}"
            )
        if not (
            self.device in ("auto", "cpu", "cuda")
            or (self.device.startswith("cuda:") and self.device[5:].isdigit())
        ):
            raise ConfigError(f"device must be auto, cpu, cuda or cuda:N, got {self.device!r}")
        if self.eval.search_final and not self.eval.search_simulations:
            raise ConfigError(
                "eval.search_final needs eval.search_simulations > 0 (the search that plays it)"
            )
        if self.eval.search_games and not self.eval.search_simulations:
            raise ConfigError(
                "eval.search_games needs eval.search_simulations > 0 (the search that plays them)"
            )
        if s.victim_play and not s.opponent:
            raise ConfigError(
                "search.victim_play models the target of an exploiter inside its search: "
                "it needs search.opponent"
            )
        if self.overlap and self.threads != 1:
            raise ConfigError(
                f"overlap: true runs self-play and the gradient steps on one "
                f"torch thread each; set threads: 1 (got {self.threads})"
            )
