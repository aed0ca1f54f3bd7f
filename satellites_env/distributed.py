"""Ray for the arena: connect to Ray, and play scheduled games in Ray actors.

Ray is optional (the `ray` extra) and imported only when these functions run: importing this
module imports nothing beyond the standard library.

`connect(address)` joins the cluster at `address` (started with `ray start --head`; `auto`
finds the one on this machine) or, with no address, starts a local Ray sized for this
machine. `run_jobs_on_ray` plays tournament games in `workers` actors, one CPU and one thread
each. A game is a pure function of its schedule entry and the tournament seed, so the results
are the same as in this process or in worker processes; an actor that dies has its games
played again by a new one (a game is never counted twice: results are kept by game index).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from typing import Any


class RayUnavailableError(ValueError):
    """Ray is not installed, or the cluster cannot be reached."""


def import_ray():
    """The `ray` module, or a RayUnavailableError saying how to install it."""
    try:
        import ray
    except ImportError as error:
        raise RayUnavailableError(
            f"Ray is not installed: install the 'ray' extra (pip install 'satellites-env[ray]'); "
            f"import failed: {error}"
        ) from None
    return ray


def connect(address: str | None = None, num_cpus: int = 0) -> bool:
    """Connect this process to Ray; True when it started a local Ray (then the caller shuts
    it down). Already connected: nothing changes. With no `address`, the local Ray gets this
    machine's CPUs, or `num_cpus` logical CPUs when that is more (actors then share cores)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.WARNING,
        "log_to_driver": False,
    }
    if address:
        _probe(address)
    try:
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(num_cpus=max(os.cpu_count() or 1, num_cpus), **options)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        raise RayUnavailableError(
            f"cannot start or reach {where}: {str(error)[:300]} (start "
            f"a cluster with `ray start --head` and pass the address it "
            f"prints, or give --ray alone for a local Ray)"
        ) from None
    return True


def _probe(address: str, seconds: float = 5.0) -> None:
    """Refuse at once a HOST:PORT where nothing listens (ray.init would wait for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # `auto`, or a form Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except (OSError, ValueError, OverflowError) as error:
        raise RayUnavailableError(
            f"no Ray cluster answers at {address!r} ({getattr(error, 'strerror', None) or error}"
            f"): start one with `ray start --head` and pass the address it prints, or give "
            f"--ray alone for a local Ray"
        ) from None


class _ArenaActor:
    """Plays games with its own agents (built once per spec), like an arena worker process:
    `init()` when it starts, then `play(job, agents=its agents)` per job."""

    def __init__(self, init: Callable[[], None], play: Callable):
        init()
        self.play = play
        self.agents: dict = {}

    def run(self, job):
        return self.play(job, agents=self.agents)


def _new_actor(actor_class: Any, init: Callable[[], None], play: Callable) -> Any:
    """Start one arena actor (a seam: the tests watch which actors exist)."""
    return actor_class.remote(init, play)


def run_jobs_on_ray(
    jobs: list,
    play: Callable,
    init: Callable[[], None],
    workers: int,
    address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_replacements: int = 8,
    on_result: Callable[[int, Any], None] | None = None,
) -> list:
    """`play(job, agents=...)` for every job, in `workers` Ray actors that each ran `init()`
    first and keep their own agents (module-level functions or partials of them: they travel
    to the actors by reference); results in job order. `on_result(index, result)` is called
    as each job's result arrives, so a caller keeps them however this ends (Ctrl-C)."""
    ray = import_ray()
    started = connect(address, workers)
    actor_class = ray.remote(num_cpus=1, max_restarts=0)(_ArenaActor)

    def new_actor():
        return _new_actor(actor_class, init, play)

    actors = [new_actor() for _ in range(min(workers, len(jobs)))]
    results: list = [None] * len(jobs)
    queue = list(range(len(jobs)))[::-1]  # next job last
    pending: dict = {}  # ref -> (job index, actor slot)
    replaced = done = 0

    def submit(slot: int) -> None:
        if queue:
            index = queue.pop()
            pending[actors[slot].run.remote(jobs[index])] = (index, slot)

    try:
        for slot in range(len(actors)):  # two games queued per actor: no idle gap between
            submit(slot)
            submit(slot)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            index, slot = pending.pop(ready[0])
            try:
                results[index] = ray.get(ready[0])
            except ray.exceptions.RayActorError:
                if replaced >= max_replacements:
                    raise
                replaced += 1
                queue.append(index)  # played again, from the same seeds, by a new actor
                lost = [ref for ref, (_, s) in pending.items() if s == slot]
                for ref in lost:
                    queue.append(pending.pop(ref)[0])
                actors[slot] = new_actor()
                submit(slot)
                submit(slot)
                continue
            done += 1
            if on_result:
                on_result(index, results[index])
            if progress:
                progress(done, len(jobs))
            submit(slot)
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
    return results
