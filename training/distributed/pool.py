"""`GeneratorPool`: K generators placed as a [`Placement`][satellites_env.placement.Placement]
says: in this process, one after the other (`local`), side by side in threads (`threads`), or
as Ray actors (`ray`).

Each update the learner calls `set_weights(weights, version)` then `generate(n)`: the pool
splits `n` over its workers, and returns their batches in worker order, so the learner's
input is the same whichever worker finished first (a run without faults is reproducible with
any backend, and the three give the same run for the same worker count).

`thread` pays off where the generators' hot loops release the GIL (AlphaZero's: torch
operators and `nogil` numba kernels; see docs/training/alphazero.md); each of its threads runs
numba with one thread, and the pool refuses numba's `workqueue` layer, which aborts the
process when two threads launch parallel kernels at once.

Exactly once: every batch carries (worker, incarnation, sequence); the pool accepts the next
sequence number of the live actor of each slot and refuses anything else (counted in
`stats.refused`). An actor that dies or does not answer within `timeout` seconds is killed,
its batch in flight dropped (`stats.dropped`), and a new actor takes its slot
(`stats.replaced`, by the arena's rule: `satellites_env.distributed.ActorSlots`): a fresh
random stream (the slot's seed and incarnation), the current weights, the same share of the
work. Ray's own actor restarts are off (`max_restarts=0`):
a restarted actor would replay its constructor's random stream, and its retried task could
hand back samples already delivered; replacing the actor here keeps the accounting in one
place.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from satellites_env.core.batch import configure_threads
from satellites_env.distributed import ActorSlots
from satellites_env.placement import Placement

from .generator import Generator, GeneratorFactory, SampleBatch, split, worker_seed

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter


class PoolError(ValueError):
    """The pool cannot run as asked: Ray missing, a cluster without the resources, or more
    dead actors than `max_replacements` (a ValueError: the CLI reports it in one line)."""


@dataclass
class PoolStats:
    delivered: int = 0  # batches accepted
    dropped: int = 0  # batches lost with their actor (never delivered)
    refused: int = 0  # batches with an unexpected (worker, incarnation, sequence)
    replaced: int = 0  # actors started to replace dead ones


class Worker:
    """One generator and its batch numbering; the Ray actor class is this class."""

    def __init__(
        self,
        factory: GeneratorFactory,
        worker: int,
        incarnation: int,
        seed: int,
        threads: int | None = None,
    ):
        if threads:  # an actor's own process: its CPUs are its threads (the workers are the
            import torch  # parallelism); in the learner's process the learner decides

            torch.set_num_threads(threads)
            configure_threads()  # this process's entry point, after torch's import
        self.worker, self.incarnation = worker, incarnation
        self.generator: Generator = factory(worker, seed)
        self.sequence = 0

    def set_weights(self, weights: Any, version: int) -> None:
        self.generator.set_weights(weights, version)

    def generate(self, n: int) -> SampleBatch:
        batch = self.generator.generate(n)
        batch.worker, batch.incarnation, batch.sequence = (
            self.worker,
            self.incarnation,
            self.sequence,
        )
        self.sequence += 1
        return batch

    def state(self) -> dict:
        return self.generator.state()

    def restore(self, state: dict) -> None:
        self.generator.restore(state)

    def restart_games(self) -> None:
        self.generator.restart_games()

    def run(self, function, *args):
        return function(self.generator, *args)


def one_thread_each() -> None:
    """Run numba and torch with one thread each in the calling thread (a thread pool's
    initializer): a team of its own would spin-wait against the other threads.

    Both counts are per thread. A new thread's first torch operator runs with OpenMP's default
    team (all cores) unless torch's count is set before it, and that team's idle helper then
    stays for the thread's life. Beside two such idle helpers the learner's two-thread gradient
    steps ran slower (az_quick: 61.0 ms a step against 41.2 ms without them; likely OpenMP's
    shorter spin once it holds more threads than cores)."""
    import numba
    import torch

    numba.set_num_threads(1)
    torch.set_num_threads(1)


def _check_numba_threadsafe() -> None:
    """PoolError if numba's threading layer cannot take parallel kernels from two threads at
    once (`workqueue`, chosen when neither OpenMP nor TBB is there)."""
    import numba
    import numpy as np

    from satellites_env.core.batch import statuses
    from satellites_env.core.state import STATE_LEN

    # numba picks its layer at the first parallel kernel: run one on one empty game
    statuses(np.zeros((1, STATE_LEN), dtype=np.int32), 1, np.zeros(1, dtype=np.int8))
    layer = numba.threading_layer()
    if layer == "workqueue":
        raise PoolError(
            "self-play in threads (distributed.backend: thread) needs numba's omp or tbb "
            "threading layer (its workqueue layer aborts when two threads run parallel "
            "kernels): install tbb, or use backend: local"
        )


def open_pool(
    factory: GeneratorFactory,
    placement: Placement,
    distributed: Any,
    seed: int,
    states: list[dict] | None = None,
    progress: int = 0,
) -> GeneratorPool:
    """A learner's pool at `placement`, its actors as its config's `distributed:` section (a
    DistributedConfig) asks (their CPUs and GPUs, timeout and replacements).

    `states` (a checkpoint's, in worker order) are given back to the workers: their random
    streams, and their games in flight where the generator saves them (AlphaZero without an
    opponent: the run goes on as if it had not stopped; others start fresh games). States
    saved for another worker count cannot continue: the workers start fresh streams derived
    from `seed` and `progress` (the learner's update or iteration count) and fresh games, a
    valid run but not the one an uninterrupted run would give."""
    d, workers = distributed, placement.workers
    if states is not None and len(states) != workers:
        seed, states = worker_seed(seed, workers, 1 + progress), None
    pool = GeneratorPool(
        factory,
        placement,
        seed,
        cpus_per_worker=d.cpus_per_worker,
        gpus_per_worker=d.gpus_per_worker,
        timeout=d.timeout,
        max_replacements=d.max_replacements,
    )
    if states is not None:
        pool.restore(states)
    return pool


def log_pool(writer: SummaryWriter, pool: GeneratorPool | None, step: int) -> None:
    """The pool's batch and actor counts on TensorBoard (`distributed/...`), for Ray pools."""
    if pool is not None and pool.placement.on_ray:
        for key, value in vars(pool.stats).items():
            writer.add_scalar(
                f"distributed/{key}_batches"
                if key != "replaced"
                else "distributed/replaced_actors",
                value,
                step,
            )


class GeneratorPool:
    """`placement.workers` generators built by `factory(worker, seed)`; see the module
    docstring.

    In `threads`, they stay in this process and their `generate` calls run in as many threads
    at once (results still in worker order).

    On `ray`, the pool connects to Ray (the placement's address; none: a local Ray started
    here) and runs each generator in an actor with `cpus_per_worker` CPUs and
    `gpus_per_worker` GPUs; `max_replacements` bounds how many dead actors are replaced over
    the pool's life before `generate` gives up with a PoolError.

    Raises:
        ValueError: A placement in worker processes (generators run in this process, in
            threads or on Ray).
    """

    def __init__(
        self,
        factory: GeneratorFactory,
        placement: Placement,
        seed: int,
        cpus_per_worker: float = 1.0,
        gpus_per_worker: float = 0.0,
        timeout: float = 600.0,
        max_replacements: int = 16,
    ):
        if placement.kind == "processes":
            raise ValueError(
                "self-play generators run in this process, in threads or on Ray, not in "
                "worker processes"
            )
        workers = placement.workers
        self.factory, self.placement, self.workers, self.seed = factory, placement, workers, seed
        self.cpus_per_worker, self.gpus_per_worker = cpus_per_worker, gpus_per_worker
        self.timeout, self.max_replacements = timeout, max_replacements
        self.stats = PoolStats()
        self._expected = [0] * workers  # next sequence number of each slot's live actor
        self._weights: tuple[Any, int] | None = None  # the last broadcast (ref or payload)
        self._started_ray = False
        self._threads: ThreadPoolExecutor | None = None
        if placement.kind == "threads":
            _check_numba_threadsafe()
            self._threads = ThreadPoolExecutor(
                workers, thread_name_prefix="generator", initializer=one_thread_each
            )
        if placement.on_ray:
            from satellites_env.distributed import connect, import_ray

            self._ray = import_ray()
            self._started_ray = connect(placement.address, math.ceil(workers * cpus_per_worker))
            self._check_resources()
            self._actor_class = self._ray.remote(Worker)
        self._slots = ActorSlots(
            self._start,
            max_replacements,
            kill=self._kill if placement.on_ray else None,
            what="generator worker",
            error=PoolError,
        )
        self._slots.fill(workers)

    # ------------------------------------------------------------------ members

    @property
    def members(self) -> list[Any]:
        """The generators (in this process) or their actors, in worker order."""
        return self._slots.actors

    @property
    def incarnations(self) -> list[int]:
        """Each worker's replacements so far (its actor's incarnation)."""
        return self._slots.incarnations

    def _kill(self, member: Any) -> None:
        self._ray.kill(member, no_restart=True)

    def _start(self, worker: int, incarnation: int) -> Any:
        seed = worker_seed(self.seed, worker, incarnation)
        self._expected[worker] = 0
        if not self.placement.on_ray:
            member = Worker(self.factory, worker, incarnation, seed)
            if self._weights is not None:
                member.set_weights(*self._weights)
            return member
        threads = max(1, int(self.cpus_per_worker))
        member = self._actor_class.options(
            num_cpus=self.cpus_per_worker,
            num_gpus=self.gpus_per_worker,
            max_restarts=0,
            max_task_retries=0,
        ).remote(self.factory, worker, incarnation, seed, threads)
        if self._weights is not None:
            member.set_weights.remote(*self._weights)
        return member

    def _replace(self, worker: int, why: str) -> None:
        self._slots.replace(worker, why)
        self.stats.replaced = self._slots.replaced

    def _check_resources(self) -> None:
        available = self._ray.cluster_resources()
        needs = {
            "CPU": self.workers * self.cpus_per_worker,
            "GPU": self.workers * self.gpus_per_worker,
        }
        for resource, needed in needs.items():
            if needed > available.get(resource, 0.0) + 1e-9:
                raise PoolError(
                    f"the Ray cluster has {available.get(resource, 0.0):g} "
                    f"{resource}s; {self.workers} workers x "
                    f"{needed / self.workers:g} {resource}s per worker need "
                    f"{needed:g}: lower distributed.workers or the per-worker "
                    f"share, or add nodes"
                )

    # ------------------------------------------------------------------ the learner's calls

    def set_weights(self, weights: Any, version: int) -> None:
        """Broadcast the learner's weights: one copy in Ray's object store for all actors."""
        if self.placement.on_ray:
            weights = self._ray.put(weights)
            for member in self.members:
                member.set_weights.remote(weights, version)
        else:
            for member in self.members:
                member.set_weights(weights, version)
        self._weights = (weights, version)

    def generate(self, n: int) -> list[SampleBatch]:
        """At least `n` finished samples, as one batch per worker in worker order."""
        shares = split(n, self.workers)
        if self.placement.on_ray:
            return self._generate_ray(shares)
        if self._threads is not None:
            batches = list(self._threads.map(Worker.generate, self.members, shares))
        else:
            batches = [
                member.generate(share) for member, share in zip(self.members, shares, strict=False)
            ]
        if not all(self._accept(batch) for batch in batches):
            raise PoolError(
                f"a local generator numbered its batches out of turn: "
                f"{[batch.tag for batch in batches]}"
            )
        return batches

    def _generate_ray(self, shares: list[int]) -> list[SampleBatch]:
        ray = self._ray
        results: list[SampleBatch | None] = [None] * self.workers
        pending = {self.members[k].generate.remote(share): k for k, share in enumerate(shares)}
        deadline = {ref: time.monotonic() + self.timeout for ref in pending}
        while pending:
            wait = max(0.0, min(deadline.values()) - time.monotonic())
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait)
            if not ready:  # the earliest deadline passed: that actor is hung
                ref = min(deadline, key=deadline.__getitem__)
                ready, why = [ref], f"no answer within {self.timeout:g} s"
            else:
                why = None
            ref = ready[0]
            k = pending.pop(ref)
            del deadline[ref]
            try:
                if why is not None:
                    raise TimeoutError(why)
                batch = ray.get(ref)
            except (
                ray.exceptions.RayActorError,
                ray.exceptions.ActorUnavailableError,
                ray.exceptions.ObjectLostError,
                TimeoutError,
            ) as error:
                self.stats.dropped += 1
                self._replace(k, why or type(error).__name__)
            else:
                if self._accept(batch):
                    results[k] = batch
                    continue
                self._replace(k, f"it sent batch {batch.tag} out of turn")
            retry = self.members[k].generate.remote(shares[k])
            pending[retry] = k
            deadline[retry] = time.monotonic() + self.timeout
        return results  # type: ignore[return-value]

    def _accept(self, batch: SampleBatch) -> bool:
        """Take `batch` if it is the next one of its slot's live actor; else count it refused
        (a repeat of a delivered batch, or one from a replaced actor) and leave it out."""
        k = batch.worker
        if not (
            0 <= k < self.workers
            and batch.incarnation == self.incarnations[k]
            and batch.sequence == self._expected[k]
        ):
            self.stats.refused += 1
            return False
        self._expected[k] += 1
        self.stats.delivered += 1
        return True

    # ------------------------------------------------------------------ checkpoints

    def run(self, function: Callable[..., Any], arguments: list[tuple]) -> list:
        """`function(generator, *arguments[k])` on worker k's generator, for every k; results
        in worker order. For work that depends only on its arguments and the broadcast weights
        (evaluation games): an actor that dies is replaced and the call made again."""
        if not self.placement.on_ray:
            return [
                member.run(function, *args)
                for member, args in zip(self.members, arguments, strict=False)
            ]
        return self._call_all("run", [(function, *args) for args in arguments])

    def states(self) -> list[dict]:
        """Each worker's state (for a checkpoint: its random streams, and its games in flight
        where it saves them), in worker order; a Ray actor's comes through the actor."""
        if not self.placement.on_ray:
            return [member.state() for member in self.members]
        return self._call_all("state")

    def restore(self, states: list[dict]) -> None:
        """Give worker k `states[k]` (a list of another length is refused: reseed instead);
        a worker whose state holds no games in flight starts fresh ones."""
        if len(states) != self.workers:
            raise ValueError(f"{len(states)} generator states for {self.workers} workers")
        if not self.placement.on_ray:
            for member, state in zip(self.members, states, strict=False):
                member.restore(state)
        else:
            self._call_all("restore", [(state,) for state in states])

    def restart_games(self) -> None:
        """Every worker drops its games in flight."""
        if not self.placement.on_ray:
            for member in self.members:
                member.restart_games()
        else:
            self._call_all("restart_games")

    def _call_all(self, method: str, arguments: list[tuple] | None = None) -> list:
        """One call on every actor at once, results in worker order; an actor that dies is
        replaced and called again (up to max_replacements over the pool's life)."""
        ray = self._ray
        arguments = arguments or [()] * self.workers
        refs = [
            getattr(member, method).remote(*args)
            for member, args in zip(self.members, arguments, strict=False)
        ]
        results = []
        for k in range(self.workers):
            while True:
                try:
                    results.append(ray.get(refs[k], timeout=self.timeout))
                    break
                except (
                    ray.exceptions.RayActorError,
                    ray.exceptions.ActorUnavailableError,
                    ray.exceptions.GetTimeoutError,
                ) as error:
                    self._replace(k, type(error).__name__)
                    refs[k] = getattr(self.members[k], method).remote(*arguments[k])
        return results

    def close(self) -> None:
        """End the threads or the actors (and the local Ray this pool started)."""
        if self._threads is not None:
            self._threads.shutdown()
            self._threads = None
        if not self.placement.on_ray:
            return
        self._slots.close()
        if self._started_ray:
            self._ray.shutdown()
            self._started_ray = False

    def __enter__(self) -> GeneratorPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
