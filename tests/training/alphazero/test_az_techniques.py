"""The learner techniques of issue 61, each off by default: the short-term value auxiliary
heads (training only: self-play's forward never calls them), BatchNorm folded
into the convolutions for inference and the late full-search budget; and a tiny run with all
of them on that resumes exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_az_training import TINY, quiet

from training.alphazero.config import AZConfig
from training.alphazero.replay import SHORT_VALUE, ReplayBuffer, make_batch, short_term_values
from training.alphazero.selfplay import CHEAP, FULL, LATE, SelfPlay
from training.alphazero.trainer import AZTrainer, policy_value_loss
from training.common.checkpoint import load_network
from training.common.config import ConfigError
from training.common.network import (
    BatchedInference,
    PolicyValueNet,
    TrainingHeads,
    build_network,
    fold_batch_norms,
)

ALL_ON = {
    **TINY,
    "total_positions": 240,
    "model": {"channels": 8, "blocks": 1, "norm": "batch"},
    "search": {**TINY["search"], "full_simulations_late": 6, "late_after": 0.3},
    "optim": {"short_value_weight": 1.0},
    "replay": {**TINY["replay"], "short_value_horizons": [2, 6]},
    "eval": {**TINY["eval"], "every": 100, "search_simulations": 0},
}


# ------------------------------------------------------------------ targets


def test_short_term_values_average_the_next_root_values_from_the_movers_view():
    # red, blue, red to move; root values from each mover's view; red wins (+1 for red)
    root = np.array([0.5, -0.2, 0.8])
    red = np.array([True, False, True])
    lam = 0.5
    (t,) = short_term_values(root, red, 1.0, [lam]).T
    # backwards in red's view: 0.5*0.8 + 0.5*1 = 0.9; 0.5*0.2 + 0.5*0.9 = 0.55 (blue: -0.55)
    assert t[2] == pytest.approx(0.9)
    assert t[1] == pytest.approx(-0.55)
    assert t[0] == pytest.approx(0.5 * 0.5 + 0.5 * 0.55)
    # lambda 0: the position's own root value; lambda near 1: the final result
    both = short_term_values(root, red, 1.0, [0.0, 1.0 - 1e-9])
    assert np.allclose(both[:, 0], root)
    assert np.allclose(both[:, 1], [1.0, -1.0, 1.0], atol=1e-6)
    assert short_term_values(root[:0], red[:0], 0.0, [0.5]).shape == (0, 1)


def test_a_buffer_with_short_values_stores_batches_and_checks_them():
    buffer = ReplayBuffer(8, short_values=2)
    selfplay = SelfPlay(AZConfig.from_dict(TINY).search, 0, (0.5, 0.8))
    buffer_plain = ReplayBuffer(8)
    with pytest.raises(ValueError, match="keeps 0 short-term values"):
        buffer_plain.add(*[np.zeros((1, 1))] * 5, short_value=np.zeros((1, 2)))
    selfplay.play(130, BatchedInference(build_network(8, 1, seed=0)), buffer)
    assert len(buffer) > 0 and np.abs(buffer.short_value[: len(buffer)]).max() <= 1
    rows = np.arange(len(buffer))
    batch = make_batch(buffer, rows, np.zeros(len(rows), np.int64), 30)
    assert batch[SHORT_VALUE].shape == (len(rows), 2)
    saved = buffer.state_dict()
    copy = ReplayBuffer(8, short_values=2)
    copy.load_state_dict(saved)
    assert np.array_equal(copy.short_value, buffer.short_value)
    with pytest.raises(ValueError, match="short_value"):
        copy.load_state_dict({k: v for k, v in saved.items() if k != SHORT_VALUE})
    damaged = {**saved, SHORT_VALUE: saved[SHORT_VALUE] * 3 + 2}
    with pytest.raises(ValueError, match=r"short_value must hold numbers in -1\.\.1"):
        copy.load_state_dict(damaged)


# ------------------------------------------------------------------ heads and norms


def test_training_heads_add_their_losses_and_gradients():
    torch.manual_seed(0)
    net = build_network(8, 1, seed=0)
    heads = TrainingHeads(8, short_values=2)
    config = AZConfig.from_dict(ALL_ON)
    buffer = ReplayBuffer(256, short_values=2)
    SelfPlay(config.search, 1, tuple(config.short_value_lambdas())).play(
        130, BatchedInference(net), buffer
    )
    assert len(buffer)
    rows = np.arange(min(len(buffer), 32))
    batch = make_batch(buffer, rows, np.zeros(len(rows), np.int64), 30)
    batch["policy_weight"][0] = 1.0  # at least one policy target
    plain, parts = policy_value_loss(net, batch, 1.0)
    loss, more = policy_value_loss(net, batch, 1.0, heads=heads, optim=config.optim)
    assert set(more) == {*parts, "short_value"}
    expected = plain + 1.0 * more["short_value"]
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    loss.backward()
    assert all(p.grad is not None for p in heads.parameters())


def test_batch_norm_folds_into_the_convolutions_with_the_same_outputs():
    torch.manual_seed(1)
    net = build_network(16, 2, norm="batch", landing_values=True)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    net.train()
    for _ in range(3):  # running statistics and affine parameters away from their start
        logits, values = net(torch.randn(32, 10, 10, 22))
        optimizer.zero_grad()
        (values.sum() + logits.mean()).backward()
        optimizer.step()
    net.eval()
    folded = fold_batch_norms(net)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in folded.modules())
    assert any(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())  # a copy
    obs = torch.randn(6, 10, 10, 22)
    with torch.no_grad():
        for a, b in zip(net(obs), folded(obs), strict=True):
            assert torch.allclose(a, b, atol=1e-4)
        logits, values = BatchedInference(net)(obs.numpy())
        assert np.allclose(logits, net(obs)[0].numpy(), atol=1e-4)
    plain = build_network(8, 1)
    assert fold_batch_norms(plain) is plain


def test_a_batch_norm_network_saves_plain_float32_and_loads():
    net = build_network(8, 1, norm="batch", seed=0)
    net.train()
    net(torch.randn(4, 10, 10, 22))
    weights = net.state_dict()
    assert all(v.dtype == torch.float32 for v in weights.values())
    copy = load_network({"model": dict(weights), "model_shape": net.shape})
    assert copy.norm == "batch"
    for key, value in weights.items():
        assert torch.equal(copy.state_dict()[key], value)


# ------------------------------------------------------------------ schedules and config


def test_the_late_budget_follows_the_runs_progress():
    config = AZConfig.from_dict(ALL_ON)
    assert not config.late_search(71) and config.late_search(72)  # 0.3 x 240
    off = AZConfig.from_dict(TINY)
    assert not off.late_search(10**6)
    assert off.short_value_lambdas() == []
    assert config.short_value_lambdas() == [0.5, pytest.approx(1 - 1 / 6)]


def test_late_searches_take_the_late_budget():
    selfplay = SelfPlay(AZConfig.from_dict(ALL_ON).search, 0)
    assert list(selfplay.search.options.budgets) == [2, 4, 6]
    for late, full in ((False, FULL), (True, LATE)):
        selfplay.late = late
        selfplay.restart_games()
        selfplay._new_roots()
        assert set(selfplay.search.tree.kind.tolist()) <= {CHEAP, full}
    net = build_network(8, 1, seed=0)
    buffer = ReplayBuffer(500)
    selfplay.play(40, BatchedInference(net), buffer)  # late full searches are policy targets
    assert selfplay.stats.full_searches > 0


def test_bad_technique_settings_are_refused():
    with pytest.raises(ConfigError, match="full_simulations_late"):
        AZConfig.from_dict({"search": {"full_simulations": 32, "full_simulations_late": 16}})
    with pytest.raises(ConfigError, match="short_value_horizons"):
        AZConfig.from_dict({"replay": {"short_value_horizons": [1]}})
    with pytest.raises(ConfigError, match="short_value_horizons"):
        AZConfig.from_dict({"replay": {"short_value_horizons": []}})


# ------------------------------------------------------------------ the learner


def test_defaults_add_no_head_field_or_schedule(tmp_path):
    trainer = AZTrainer(AZConfig.from_dict(TINY), tmp_path, console=quiet())
    assert trainer.heads is None and trainer.buffer.short_values == 0
    assert set(trainer.weights()) == {"model"}
    assert "training_heads" not in trainer.learner_payload()
    trainer.close()


def test_a_tiny_run_with_every_technique_trains_plays_and_resumes_exactly(tmp_path):
    config = AZConfig.from_dict(ALL_ON)
    trainer = AZTrainer(config, tmp_path, console=quiet())
    calls = []
    assert trainer.heads is not None
    trainer.heads.register_forward_hook(lambda *_: calls.append(1))
    losses: dict = {}
    while trainer.progress < 160:
        losses = trainer.iterate() or losses
    # the heads ran in the gradient steps alone, never in self-play's forward passes
    assert len(calls) == trainer.counters.train_steps > 0
    assert "short_value" in set(losses)
    assert trainer.weights()["late"] and trainer.generators.members[0].generator.selfplay.late
    trainer.save()
    trainer.close()
    # resume: the heads, the buffer's short-term targets and the schedules' state as saved
    resumed = AZTrainer(config, tmp_path, resume=True, console=quiet())
    for a, b in ((trainer.net, resumed.net), (trainer.heads, resumed.heads)):
        assert a is not None and b is not None
        for key, value in a.state_dict().items():
            assert torch.equal(b.state_dict()[key], value), key
    assert np.array_equal(trainer.buffer.short_value, resumed.buffer.short_value)
    assert resumed.counters == trainer.counters
    saved, loaded = trainer.optimizer.state_dict(), resumed.optimizer.state_dict()
    for key, state in saved["state"].items():
        for name, value in state.items():
            assert torch.equal(loaded["state"][key][name], value), (key, name)
    assert resumed.weights()["late"]
    resumed.iterate()
    resumed.save()
    resumed.close()
    # the network that plays is the plain one: no training head in it; its BatchNorm folded
    net = load_network(tmp_path / "checkpoint.pt")
    assert isinstance(net, PolicyValueNet) and net.norm == "batch"
    assert not any("short" in key for key in net.state_dict())
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in BatchedInference(net).net.modules())
