"""Ray for the arena: connect to Ray, and play scheduled games in Ray actors.

Ray is optional (the `ray` extra) and imported only when these functions run: importing this
module imports nothing beyond the standard library.

`connect(address)` joins the cluster at `address` (started with `ray start --head`; `auto`
finds the one on this machine) or, with no address, starts a local Ray sized for this
machine. `run_jobs_on_ray` plays tournament games in `workers` actors, one CPU and one thread
each. A game is a pure function of its schedule entry and the tournament seed, so the results
are the same as in this process or in worker processes; an actor that dies has its games
played again by a new one (a game is never counted twice: results are kept by game index).

[`ActorSlots`][satellites_env.distributed.ActorSlots] is the one rule by which a dead actor is
replaced, here and in the trainer's generator pool (`training.distributed.pool`).
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


class ActorsLostError(ValueError):
    """More actors died than a run may replace (a ValueError: the CLI reports it in one
    line)."""


class ActorSlots:
    """Actors in numbered slots, each started by `start(slot, incarnation)` (`fill(count)`
    starts the first ones); one that dies is replaced by `replace(slot, why)`: the old one is
    killed (`kill`, errors ignored) and a new one started in its slot with the next
    incarnation, at most `max_replacements` times over the whole run, after which `replace`
    raises `error` naming the slot and the cause.

    Ray itself is not needed here: `start` and `kill` are the caller's (Ray's own restarts are
    off for the actors they make, `max_restarts=0`, so that each replacement is counted here).
    """

    def __init__(
        self,
        start: Callable[[int, int], Any],
        max_replacements: int,
        kill: Callable[[Any], None] | None = None,
        what: str = "actor",
        error: type[Exception] = ActorsLostError,
    ):
        if max_replacements < 0:
            raise ValueError(f"max_replacements must be >= 0, got {max_replacements}")
        self.start, self.kill, self.what, self.error = start, kill, what, error
        self.max_replacements = max_replacements
        self.replaced = 0  # actors started to replace dead ones, in all slots
        self.incarnations: list[int] = []  # each slot's replacements so far
        self.actors: list[Any] = []

    def fill(self, count: int) -> None:
        """Start first actors until `count` slots hold one (each kept as it starts, so that
        `close` ends those started before an error)."""
        while len(self.actors) < count:
            slot = len(self.actors)
            if slot == len(self.incarnations):
                self.incarnations.append(0)
            self.actors.append(self.start(slot, self.incarnations[slot]))

    def __getitem__(self, slot: int) -> Any:
        return self.actors[slot]

    def __len__(self) -> int:
        return len(self.actors)

    def replace(self, slot: int, why: str) -> Any:
        """Kill the actor of `slot` and start a new one there; returns it. Raises `error`
        (the cause named: `why`) once `max_replacements` actors were replaced already."""
        if self.replaced >= self.max_replacements:
            raise self.error(
                f"{self.what} {slot} failed ({why}) and {self.replaced} "
                f"{self.what}s were replaced already (max_replacements="
                f"{self.max_replacements}); giving up"
            )
        if self.kill is not None:
            try:
                self.kill(self.actors[slot])
            except Exception:  # a dead actor may refuse to be killed again
                pass
        self.replaced += 1
        self.incarnations[slot] += 1
        self.actors[slot] = self.start(slot, self.incarnations[slot])
        return self.actors[slot]

    def close(self) -> None:
        """Kill every actor (errors ignored); the slots are empty after."""
        if self.kill is not None:
            for actor in self.actors:
                try:
                    self.kill(actor)
                except Exception:
                    pass
        self.actors = []


def failure(error: BaseException) -> str:
    """How an actor failed, in a few words: the error's type and its first line."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:200]}" if lines else type(error).__name__


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
    results: list = [None] * len(jobs)
    queue = list(range(len(jobs)))[::-1]  # next job last
    pending: dict = {}  # ref -> (job index, actor slot)
    done = 0
    actors = ActorSlots(
        lambda slot, incarnation: _new_actor(actor_class, init, play),
        max_replacements,
        kill=ray.kill,
        what="game actor",
    )

    def submit(slot: int) -> None:
        if queue:
            index = queue.pop()
            pending[actors[slot].run.remote(jobs[index])] = (index, slot)

    try:
        actors.fill(min(workers, len(jobs)))
        for slot in range(len(actors)):  # two games queued per actor: no idle gap between
            submit(slot)
            submit(slot)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            index, slot = pending.pop(ready[0])
            try:
                results[index] = ray.get(ready[0])
            except ray.exceptions.RayActorError as error:
                queue.append(index)  # played again, from the same seeds, by a new actor
                lost = [ref for ref, (_, s) in pending.items() if s == slot]
                for ref in lost:
                    queue.append(pending.pop(ref)[0])
                actors.replace(slot, failure(error))
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
        actors.close()
        if started:
            ray.shutdown()
    return results
