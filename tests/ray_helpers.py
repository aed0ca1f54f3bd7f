"""Shared helpers for the tests that run on a local Ray (the `ray` marker): the module's Ray,
and an actor killed mid-generation."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray with 2 CPUs for the importing test module (import it there)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


class KillOnFirstWait:
    """Ray, except that a generator pool's first wait for batches kills one actor first: its
    batch in flight is lost, as when a node dies mid-generation. Install it as `pool._ray`."""

    def __init__(self, ray, victim):
        self.ray, self.victim, self.killed = ray, victim, False

    def wait(self, *args, **kwargs):
        if not self.killed:
            self.ray.kill(self.victim, no_restart=True)
            self.killed = True
        return self.ray.wait(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.ray, name)


def kill_worker_0_mid_generation(pool, step) -> list:
    """Record every batch `pool` accepts (the list returned, growing as the caller goes on);
    call `step()` (one learner update) once as usual, then once while worker 0's actor dies
    mid-generation: it is replaced and its share played again."""
    import ray

    delivered = []
    accept = pool._accept
    pool._accept = lambda batch: accept(batch) and (delivered.append(batch) or True)
    step()
    pool._ray = KillOnFirstWait(ray, pool.members[0])
    step()
    assert (pool.stats.dropped, pool.stats.replaced, pool.stats.refused) == (1, 1, 0)
    assert pool.incarnations == [1, 0]
    return delivered


def assert_each_batch_once(delivered: list, updates: int, workers: int = 2) -> None:
    """Every update took one batch per worker, none twice, and the lost batch never came."""
    tags = [batch.tag for batch in delivered]
    assert len(tags) == len(set(tags)) == workers * updates
    assert (0, 1, 0) in tags and (0, 0, 1) not in tags
