"""The generator pool with `backend: local` and `thread` (no Ray needed): shares, worker
order, the same batches in threads, batch tags accepted once, the PPO generator behind the
interface, and the `distributed:` config keys."""

from __future__ import annotations

import functools
import sys
from types import SimpleNamespace

import pytest
from test_training import TINY, tiny_config

from satellites_env.placement import Placement
from training.common.config import ConfigError, config_from_dict
from training.distributed.generator import Generator, SampleBatch, split, worker_seed
from training.distributed.pool import GeneratorPool, PoolError
from training.ppo.selfplay import SelfPlayGenerator, make_generator
from training.ppo.trainer import PPOTrainer


def ppo_pool(
    workers: int, envs: int = 5, seed: int = 0, backend: str = "local"
) -> tuple[GeneratorPool, PPOTrainer]:
    config = tiny_config(selfplay={**TINY["selfplay"], "envs": envs})
    trainer_like = PPOTrainer.__new__(PPOTrainer)  # only for its weights payload
    trainer_like.config = config
    from training.common.network import PolicyValueNet

    trainer_like.net = PolicyValueNet(8, 1)
    trainer_like.snapshots, trainer_like.snapshots_added = [], 0
    factory = functools.partial(make_generator, config.selfplay, trainer_like.net.shape, workers)
    kind = {"local": "local", "thread": "threads"}[backend]
    return GeneratorPool(factory, Placement(kind, workers), seed), trainer_like


def test_split_and_seeds():
    assert split(10, 3) == [4, 3, 3] and split(2, 4) == [1, 1, 0, 0] and sum(split(99, 7)) == 99
    assert worker_seed(5, 0) == 5  # one worker plays exactly the single-generator run
    seeds = {worker_seed(5, k, i) for k in range(4) for i in range(3)}
    assert len(seeds) == 12


def test_local_pool_splits_games_and_samples_and_tags_batches_in_worker_order():
    pool, trainer = ppo_pool(workers=2, envs=5)
    assert [m.generator.envs for m in pool.members] == [3, 2]
    assert isinstance(pool.members[0].generator, Generator)
    pool.set_weights(trainer.weights(), version=7)
    for sequence in range(2):
        batches = pool.generate(41)
        assert [b.tag for b in batches] == [(0, 0, sequence), (1, 0, sequence)]
        assert [b.count >= share for b, share in zip(batches, split(41, 2), strict=False)] == [
            True,
            True,
        ]
        assert all(b.version == 7 and b.count == sum(len(t) for t in b.samples) for b in batches)
        assert all(
            set(b.counters) == {"env_steps", "games", "truncated", "game_moves"} for b in batches
        )
    assert (pool.stats.delivered, pool.stats.refused, pool.stats.dropped) == (4, 0, 0)


def test_a_thread_pool_gives_the_batches_of_a_local_one_and_ends_its_threads():
    runs, weights = {}, None
    for backend in ("local", "thread"):
        pool, trainer = ppo_pool(workers=2, envs=5, seed=3, backend=backend)
        weights = weights or trainer.weights()  # the same (random) network for both
        pool.set_weights(weights, version=1)
        runs[backend] = [pool.generate(30) for _ in range(2)]
        assert pool.stats.delivered == 4
        if backend == "thread":
            threads = pool._threads
            pool.close()
            assert pool._threads is None and threads._shutdown
    for local, threaded in zip(runs["local"], runs["thread"], strict=False):
        assert [b.tag for b in local] == [b.tag for b in threaded]
        for a, b in zip(local, threaded, strict=False):
            assert [t.actions for t in a.samples] == [t.actions for t in b.samples]


def test_a_thread_pool_refuses_numbas_workqueue_layer(monkeypatch):
    import numba

    monkeypatch.setattr(numba, "threading_layer", lambda: "workqueue")
    with pytest.raises(PoolError, match="needs numba's omp or tbb threading layer"):
        GeneratorPool(lambda worker, seed: None, Placement("threads", 2), 0)


def test_a_batch_is_accepted_once_and_in_turn():
    pool, trainer = ppo_pool(workers=2)
    pool.set_weights(trainer.weights(), 0)
    first = pool.members[0].generate(5)
    assert pool._accept(first)
    assert not pool._accept(first)  # the same batch again: refused
    skipped = SampleBatch([], 0, worker=1, sequence=1)  # sequence 0 never came
    assert not pool._accept(skipped)
    stale = SampleBatch([], 0, worker=0, incarnation=1, sequence=1)  # no such actor yet
    assert not pool._accept(stale)
    assert pool.stats.refused == 3 and pool.stats.delivered == 1


def test_generator_states_restore_the_same_games():
    pool, trainer = ppo_pool(workers=2)
    pool.set_weights(trainer.weights(), 0)
    states = pool.states()
    first = pool.generate(30)
    pool.restore(states)
    pool.restart_games()
    again = pool.generate(30)
    for a, b in zip(first, again, strict=False):
        assert [t.actions for t in a.samples] == [t.actions for t in b.samples]
    with pytest.raises(ValueError, match="1 generator states for 2 workers"):
        pool.restore(states[:1])


def test_one_local_worker_is_the_single_generator():
    config = tiny_config()
    pool, trainer = ppo_pool(workers=1, envs=config.selfplay.envs, seed=11)
    pool.set_weights(trainer.weights(), 0)
    (batch,) = pool.generate(50)
    direct = SelfPlayGenerator(config.selfplay, trainer.net, seed=11).collect(50)
    assert [t.actions for t in batch.samples] == [t.actions for t in direct]


def test_a_replaced_worker_takes_a_fresh_stream_by_the_shared_rule():
    """The pool replaces a worker by `satellites_env.distributed.ActorSlots`: the next
    incarnation, a fresh seed, the current weights, at most max_replacements in all."""
    seeds = []

    def factory(worker, seed):
        seeds.append((worker, seed))
        return SimpleNamespace(set_weights=lambda weights, version: None)

    pool = GeneratorPool(factory, Placement("local", 2), 7, max_replacements=1)
    pool.set_weights({}, 0)
    pool._replace(1, "it sent a batch out of turn")
    assert pool.incarnations == [0, 1] and pool.stats.replaced == 1
    assert seeds[-1] == (1, worker_seed(7, 1, 1)) and len(pool.members) == 2
    with pytest.raises(PoolError, match=r"generator worker 0 failed \(hung\).*giving up"):
        pool._replace(0, "hung")


def test_ray_backend_without_ray_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    from satellites_env.distributed import RayUnavailableError

    with pytest.raises(RayUnavailableError, match="install the 'ray' extra"):
        GeneratorPool(lambda worker, seed: None, Placement("ray"), 0)
    with pytest.raises(ValueError, match="not in worker processes"):
        GeneratorPool(lambda worker, seed: None, Placement("processes", 2), 0)


@pytest.mark.parametrize(
    "section, message",
    [
        ({"backend": "dask"}, "distributed.backend must be one of local, thread, ray, got 'dask'"),
        (
            {"address": "auto"},
            "distributed.address 'auto' is set but distributed.backend is 'local'",
        ),
        ({"backend": "ray", "address": "a b"}, "distributed.address must not contain spaces"),
        ({"workers": 0}, r"distributed.workers must be in \[1, 1024\]"),
        ({"workers": 5}, r"distributed.workers \(5\) must be <= {games} \(4\)"),
        ({"cpus_per_worker": 0}, r"distributed.cpus_per_worker must be in \(0, 256\]"),
        ({"gpus_per_worker": -1}, r"distributed.gpus_per_worker must be in \[0, 64\]"),
        ({"timeout": float("inf")}, "distributed.timeout must be a finite number"),
        ({"max_replacements": -1}, r"distributed.max_replacements must be in \[0, "),
        ({"worker": 2}, "unknown config key distributed.worker"),
        ({"workers": "2"}, "distributed.workers must be an integer"),
        ([], "distributed must be a mapping"),
    ],
)
@pytest.mark.parametrize("learner", ["ppo", "alphazero"])
def test_bad_distributed_keys_are_named_alike_for_both_learners(learner, section, message):
    from training.alphazero.config import AZConfig

    if learner == "ppo":
        with pytest.raises(ConfigError, match=message.format(games="selfplay.envs")):
            config_from_dict({**TINY, "distributed": section})
    else:
        with pytest.raises(ConfigError, match=message.format(games="search.games")):
            AZConfig.from_dict({"search": {"games": 4}, "distributed": section})


def test_distributed_keys_may_change_on_resume(tmp_path):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    trainer.iterate()
    trainer.save()
    two = tiny_config(distributed={"workers": 2, "timeout": 60.0})
    resumed = PPOTrainer(two, tmp_path / "run", resume=True)
    assert resumed.new_changes == {
        "distributed.workers": [1, 2],
        "distributed.timeout": [600.0, 60.0],
    }
    resumed.iterate()  # two fresh generator streams (the saved one was for one worker)
    assert len(resumed.generator_states()) == 2
    assert resumed.counters.iterations == 2


def test_segments_cross_the_object_store_small_and_exact():
    import pickle

    import numpy as np

    from training.ppo.prior import PriorNet

    config = tiny_config(
        model={"channels": 8, "blocks": 1, "lookahead": 2.0},
        selfplay={**TINY["selfplay"], "baseline_opponent": "random"},
    )
    generator = SelfPlayGenerator(config.selfplay, PriorNet(8, 1, 2.0), seed=4)
    segments = generator.collect(120)
    data = pickle.dumps(segments, protocol=5)
    assert len(data) < 3000 * sum(len(s) for s in segments)  # ~25 KB a decision unpacked
    for before, after in zip(segments, pickle.loads(data), strict=False):
        for name in ("observations", "masks", "lookaheads", "states"):
            assert len(getattr(after, name)) == len(before)
            for a, b in zip(getattr(before, name), getattr(after, name), strict=False):
                assert a.dtype == b.dtype and np.array_equal(a, b), name
        assert (after.actions, after.log_probs, after.potentials, after.outcome, after.done) == (
            before.actions,
            before.log_probs,
            before.potentials,
            before.outcome,
            before.done,
        )
        assert (after.bootstrap_observation is None) == (before.bootstrap_observation is None)


def test_an_address_where_no_cluster_listens_is_refused_at_once():
    import socket
    import time

    from satellites_env.distributed import RayUnavailableError, _probe

    with socket.socket() as closed:  # a port that nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(RayUnavailableError, match=f"no Ray cluster answers at '127.0.0.1:{port}'"):
        _probe(f"127.0.0.1:{port}")
    assert time.monotonic() - started < 10
    _probe("auto")  # resolved by Ray itself
