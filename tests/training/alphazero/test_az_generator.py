"""AlphaZero self-play behind the generator interface, with `backend: local` (no Ray): one
worker is exactly the run of a single `SelfPlay` (weights, counters, buffer, bit for bit), the
collector carries every argument of `ReplayBuffer.add`, two workers split the games, the
`distributed:` keys may change on resume, and checkpoints hold the generators' streams (older
ones that hold `rng.selfplay` still resume), and `backend: thread` plays the same run as two
local workers in turn. Bad `distributed:` keys are refused alike for both
learners: tests/training/test_generator_pool.py."""

from __future__ import annotations

import os
import time
from dataclasses import asdict

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_az_training import TINY, quiet

from training.alphazero.config import AZConfig
from training.alphazero.generator import AZGenerator, Collector, build_selfplay, make_generator
from training.alphazero.replay import FIELDS, ReplayBuffer
from training.alphazero.selfplay import SelfPlay
from training.alphazero.trainer import AZTrainer
from training.common.config import BACKENDS, ConfigError, DistributedConfig
from training.common.network import BatchedInference, build_network
from training.distributed.generator import Generator

#: wraps the ring buffer (capacity 100) and trains from the second iteration: every target
#: field and counter of the learner takes part
FINGERPRINT = {
    **TINY,
    "positions_per_iteration": 50,
    "model": {"channels": 8, "blocks": 1},
    "search": {"games": 5, "full_simulations": 4, "cheap_simulations": 2, "max_moves": 30},
    "replay": {"capacity": 100, "min_positions": 10, "batch_size": 16, "replay_ratio": 2.0},
}


def counters(trainer: AZTrainer) -> dict:
    data = asdict(trainer.counters)
    for key in ("seconds", "selfplay_seconds", "train_seconds"):
        del data[key]
    return data


def assert_same_run(a: AZTrainer, b: AZTrainer) -> None:
    assert counters(a) == counters(b)
    for key, value in a.net.state_dict().items():
        assert torch.equal(value, b.net.state_dict()[key]), key
    for name in FIELDS:
        assert np.array_equal(getattr(a.buffer, name), getattr(b.buffer, name)), name
    assert (a.buffer.added, a.buffer.cursor) == (b.buffer.added, b.buffer.cursor)
    assert a.train_rng.bit_generator.state == b.train_rng.bit_generator.state


def test_one_local_worker_is_exactly_the_run_of_one_selfplay(tmp_path):
    """The fingerprint of the learner before the generator pool: the same tiny run played by
    a straight `SelfPlay.play(n, BatchedInference(net), buffer)` loop, as the trainer did."""
    config = AZConfig.from_dict(FINGERPRINT)
    pooled = AZTrainer(config, tmp_path / "pool", console=quiet())
    for _ in range(7):
        pooled.iterate()
    straight = AZTrainer(config, tmp_path / "straight", console=quiet())
    selfplay = SelfPlay(config.search, config.seed)
    c = straight.counters
    for _ in range(7):
        before = (selfplay.stats.positions, selfplay.stats.games, selfplay.search.evaluations)
        torch.set_num_threads(1)
        added = selfplay.play(
            config.positions_per_iteration, BatchedInference(straight.net), straight.buffer
        )
        torch.set_num_threads(config.threads)
        c.positions += selfplay.stats.positions - before[0]
        c.games += selfplay.stats.games - before[1]
        c.evaluations += selfplay.search.evaluations - before[2]
        c.samples += added
        straight.train(added)
        c.iterations += 1
    assert straight.buffer.added > straight.buffer.capacity and c.train_steps > 0
    assert_same_run(pooled, straight)
    stats = pooled.selfplay_stats  # the learner's totals of its generator's stats
    assert (stats.positions, stats.games, list(stats.lengths)) == (
        selfplay.stats.positions,
        selfplay.stats.games,
        list(selfplay.stats.lengths),
    )


def test_the_collector_keeps_every_argument_of_add_by_name():
    class FutureBuffer(ReplayBuffer):  # a target field added later travels without a change
        def add(self, states, actions, policy, value, policy_weight, visits=None):
            self.visits = visits

    collector = Collector(FutureBuffer.add)
    rows = [np.full((n, 2), n) for n in (2, 3)]
    collector.add(rows[0], rows[0], rows[0], rows[0], rows[0], rows[0])
    collector.add(rows[1], rows[1], rows[1], rows[1], policy_weight=rows[1], visits=rows[1])
    samples = collector.samples()
    assert list(samples) == [*FIELDS, "visits"]
    assert all(np.array_equal(v, np.concatenate(rows)) for v in samples.values())
    buffer = FutureBuffer(10)
    buffer.add(**samples)
    assert np.array_equal(buffer.visits, np.concatenate(rows))
    with pytest.raises(ValueError, match="the same ones"):
        collector.add(rows[0], rows[0], rows[0], rows[0], rows[0])  # no visits this time
    with pytest.raises(TypeError):
        collector.add(rows[0], rows[0], rows[0], rows[0], rows[0], colour=rows[0])
    assert Collector().samples() == {}


def test_the_generator_delivers_each_finished_game_once_with_its_counters():
    config = AZConfig.from_dict(FINGERPRINT)
    net = build_network(8, 1, seed=0)
    generator = make_generator(config, net.shape, 2, 1, 9)  # worker 1 of 2
    assert isinstance(generator, Generator) and generator.selfplay.config.games == 2
    generator.set_weights({"model": net.state_dict()}, 4)
    direct = build_selfplay(config, 9, games=2)
    buffer = ReplayBuffer(1000)
    total = 0
    for _ in range(4):
        batch = generator.generate(25)
        assert batch.version == 4 and batch.counters["positions"] >= 25
        assert batch.count == (len(batch.samples["states"]) if batch.count else 0)
        assert len(batch.counters["lengths"]) == batch.counters["games"]
        assert batch.counters["games"] == (
            batch.counters["red_wins"] + batch.counters["blue_wins"] + batch.counters["draws"]
        )
        if batch.count:
            buffer.add(**batch.samples)
        total += batch.count
    assert total == buffer.added > 0
    # the same positions, in the same order, as one SelfPlay playing into a buffer directly
    reference = ReplayBuffer(1000)
    for _ in range(4):
        direct.play(25, BatchedInference(generator.net), reference)
    for name in FIELDS:
        assert np.array_equal(getattr(buffer, name), getattr(reference, name)), name


def test_two_workers_split_the_games_and_repeat_exactly_in_turn_or_in_threads(tmp_path):
    runs = []
    for name, backend in (("a", "local"), ("b", "local"), ("c", "thread")):
        config = AZConfig.from_dict(
            {**FINGERPRINT, "distributed": {"workers": 2, "backend": backend}}
        )
        trainer = AZTrainer(config, tmp_path / name, console=quiet())
        pool = trainer.generators
        assert (pool._threads is not None) == (backend == "thread")
        assert [m.generator.selfplay.config.games for m in pool.members] == [3, 2]
        assert [isinstance(m.generator, AZGenerator) for m in pool.members] == [True, True]
        for _ in range(4):
            trainer.iterate()
        assert pool.stats.delivered == 8 and trainer.counters.samples == trainer.buffer.added
        runs.append(trainer)
        trainer.close()
        assert pool._threads is None  # closing the pool ends its threads
    assert_same_run(runs[0], runs[1])
    assert_same_run(runs[0], runs[2])  # side by side in threads: the same run, bit for bit
    one = AZTrainer(AZConfig.from_dict(FINGERPRINT), tmp_path / "one", console=quiet())
    for _ in range(4):
        one.iterate()
    # two workers: other streams (worker 0 keeps the seed, with fewer games), another run
    assert not np.array_equal(one.buffer.states, runs[0].buffer.states)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_generator_threads_run_torch_on_one_thread_without_an_openmp_team(tmp_path):
    """Each generator thread computes on one torch thread and starts no OpenMP helper: beside
    an idle helper in each, the learner's two-thread gradient steps ran about 1.5 times slower
    (training.distributed.pool.one_thread_each)."""
    config = AZConfig.from_dict({**FINGERPRINT, "distributed": {"workers": 2, "backend": "thread"}})
    trainer = AZTrainer(config, tmp_path / "run", console=quiet())
    trainer.iterate()
    pool = trainer.generators
    counts = list(pool._threads.map(lambda _: torch.get_num_threads(), range(8)))
    generators = {thread.native_id for thread in pool._threads._threads}

    def tasks() -> set[int]:
        return {int(t) for t in os.listdir("/proc/self/task")}

    alive = tasks()
    trainer.close()
    assert counts == [1] * 8

    deadline = time.monotonic() + 10  # a joined thread can stay listed for a moment
    while generators & tasks() and time.monotonic() < deadline:
        time.sleep(0.01)
    # the threads that end with the pool are its generator threads alone (an OpenMP helper of
    # a generator thread ends with it); threads started meanwhile elsewhere do not count
    assert alive - tasks() == generators


def test_distributed_keys_may_change_on_resume(tmp_path):
    trainer = AZTrainer(AZConfig.from_dict(TINY), tmp_path, console=quiet())
    trainer.iterate()
    trainer.save()
    two = AZConfig.from_dict({**TINY, "distributed": {"workers": 2, "timeout": 60.0}})
    resumed = AZTrainer(two, tmp_path, resume=True, console=quiet())
    assert resumed.config.distributed.workers == 2
    resumed.iterate()  # two fresh generator streams (the saved one was for one worker)
    assert len(resumed.generator_states()) == 2 and resumed.counters.iterations == 2
    resumed.save()
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert payload["config"]["distributed"]["workers"] == 2 and len(payload["generators"]) == 2


DISTRIBUTED_KEYS = sorted(asdict(DistributedConfig()))
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
    st.sampled_from(["local", "thread", "ray", "auto", "127.0.0.1:6379", " auto", ""]),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.dictionaries(
            st.sampled_from(DISTRIBUTED_KEYS) | st.text(max_size=8), values, max_size=5
        ),
        values,
    ),
    st.integers(1, 8),
)
def test_fuzz_the_distributed_section_raises_only_config_errors(section, games):
    try:
        config = AZConfig.from_dict({"search": {"games": games}, "distributed": section})
    except ConfigError:
        return
    d = config.distributed
    assert isinstance(d, DistributedConfig) and d.backend in BACKENDS
    assert 1 <= d.workers <= games and (d.backend == "ray" or not d.address)
    assert config.to_dict()["distributed"] == asdict(d)


def test_generators_run_where_their_process_has_the_configs_device(monkeypatch):
    """The learner's device where the process has it (the learner's own process, or a Ray
    actor given GPUs), else the CPU; the weights travel as CPU tensors."""
    from training.alphazero.generator import cpu_weights, generator_device

    for name in ("auto", "cpu", "cuda", "cuda:1"):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        assert generator_device(name) == torch.device("cpu")
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        expected = "cpu" if name == "cpu" else ("cuda" if name == "auto" else name)
        assert generator_device(name) == torch.device(expected)
    net = build_network(8, 1, seed=0)
    weights = cpu_weights(net)
    assert all(v.device.type == "cpu" for v in weights.values())
    assert all(torch.equal(weights[k], v) for k, v in net.state_dict().items())
