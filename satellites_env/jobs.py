"""Games farmed out, one way for the whole project: a list of jobs played in this process, in
worker processes or in Ray actors, by the arena's tournaments, the ladder and the trainer's
evaluations.

[`Workers`][satellites_env.jobs.Workers] (or [`run_jobs`][satellites_env.jobs.run_jobs] for
one list) calls `play(job)` for every job and hands each result to `on_result(index, result)`
in the caller's thread as soon as it is known, so a caller keeps what finished however the run
ends. The rules:

* One interrupt rule: Ctrl-C (a KeyboardInterrupt in the caller's thread) first hands over
  every result already finished and not yet handed over, then ends the workers (queued jobs
  are cancelled, running ones killed), then raises. A job that raises ends the run the same
  way, without handing over anything after it.
* Worker processes compute on one thread each (`init`, e.g.
  [`init_worker`][satellites_env.arena.init_worker]) and ignore Ctrl-C and SIGHUP: the
  terminal sends them to every process of its group, and the parent alone decides what
  stops (SIGTERM and SIGHUP reach it as Ctrl-C: `satellites_env.stops`).
* A worker process that dies (killed for memory, a crash) ends the run as Ctrl-C does: every
  result already finished is handed over, the other workers end, and
  `satellites_env.stops.WorkerDied` (a KeyboardInterrupt) says how it died.
* Worker processes end when their parent dies, whatever kills it (SIGKILL included): on Linux
  the kernel kills them (`PR_SET_PDEATHSIG`, set only when the pool starts its processes from
  the main thread, since the signal follows the death of the thread that forked); everywhere, a
  thread in each worker polls the parent's process id and ends the worker within about half a
  second of a change.
* Where the jobs run is a [`Placement`][satellites_env.placement.Placement]: `local` (this
  process, one job after the other), `processes`, or `ray` (Ray actors, see
  `satellites_env.distributed`; `play` is then also given `agents=`, a dict that each actor
  keeps between its jobs). Threads are for self-play generators only.

A job is a pure function of its arguments (a game's seeds come from its schedule), so the
results are the same wherever it ran. Importing this module imports nothing beyond the
standard library.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .placement import Placement
from .stops import STOP_SIGNALS, WorkerDied, describe_exit

__all__ = ["Workers", "run_jobs"]

#: seconds between a worker's checks that its parent still lives
PARENT_POLL_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _end_with_parent(parent: int, kernel: bool) -> None:
    """Make this worker process end when `parent` (the process that started the pool) dies.

    Args:
        parent: The pool owner's process id.
        kernel: Also ask the kernel for SIGKILL when the thread that forked this process
            ends (Linux only): true only when that thread is the owner's main thread.
    """
    if kernel and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watching thread below still ends this process
    watched = os.getppid()  # the owner, or the forkserver that forked this process
    if not _alive(parent):  # died before the kernel was told: nobody will signal
        os._exit(1)

    def watch() -> None:
        while os.getppid() == watched:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_worker(parent: int, kernel: bool, init: Callable[[], None] | None) -> None:
    """A worker process's initializer: end with the parent, ignore Ctrl-C and SIGHUP (the
    parent's handlers of a forked process are dropped: SIGTERM ends a worker), then `init()`."""
    _end_with_parent(parent, kernel)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_DFL if number == signal.SIGTERM else signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # started with them blocked (`_ctrl_c_blocked`)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, *STOP_SIGNALS})
    if init is not None:
        init()


class Workers:
    """The workers of a placement that play jobs: this process (`local`), up to
    `placement.workers` worker processes, or as many Ray actors; processes are started on
    first use and kept until `close` (a `with` block closes them).

    Args:
        placement: Where the jobs run (`local`, `processes` or `ray`; default this process).
        init: Run once in each worker process (or actor) before its first job.
        context: The `multiprocessing` context of the worker processes (None: the default,
            `fork` on Linux).

    Raises:
        ValueError: A placement in threads (for self-play generators only).
    """

    def __init__(
        self,
        placement: Placement | None = None,
        *,
        init: Callable[[], None] | None = None,
        context: Any = None,
    ):
        placement = placement or Placement()
        if placement.kind == "threads":
            raise ValueError(
                "jobs run in this process, in worker processes or on Ray, not in threads "
                "(a placement in threads is for self-play generators)"
            )
        self.placement = placement
        self.init, self.context = init, context
        self._pool: ProcessPoolExecutor | None = None
        self._size = 0
        self._started: list = []  # the pool's processes, to say how one died

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(
        self, jobs: Sequence, play: Callable, on_result: Callable[[int, Any], None] | None = None
    ) -> list:
        """Play every job; the results in job order.

        Args:
            jobs: The jobs, each passed whole to `play` (it must pickle for processes).
            play: A module-level function (or a partial of one) of a job.
            on_result: Called as `on_result(index, result)` in this thread as each result
                arrives (see the module's interrupt rule).

        Returns:
            `play(job)` for each job, in job order.

        Raises:
            KeyboardInterrupt: Ctrl-C (or a stop signal), once every finished result has
                been handed over.
            WorkerDied: A worker process died, once every finished result has been handed
                over.
        """
        results: list = [None] * len(jobs)
        delivered: set[int] = set()

        def deliver(index: int, result: Any) -> None:
            results[index] = result
            delivered.add(index)
            if on_result is not None:
                on_result(index, result)

        if not jobs:
            return results
        if self.placement.on_ray:
            from .distributed import run_jobs_on_ray

            run_jobs_on_ray(
                list(jobs),
                play,
                self.init or _nothing,
                self.placement.workers,
                self.placement.address,
                on_result=deliver,
            )
        elif self.placement.kind == "local":
            for index, job in enumerate(jobs):
                deliver(index, play(job))
        else:
            self._run_in_processes(jobs, play, deliver, delivered)
        return results

    def _run_in_processes(
        self,
        jobs: Sequence,
        play: Callable,
        deliver: Callable[[int, Any], None],
        delivered: set[int],
    ) -> None:
        pool = self._processes(min(self.placement.workers, len(jobs)))
        futures: dict[Future, int] = {}
        try:
            futures = {pool.submit(play, job): index for index, job in enumerate(jobs)}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=futures.__getitem__):
                    deliver(futures[future], future.result())
        except BrokenProcessPool:
            try:
                self._deliver_finished(futures, deliver, delivered)
            finally:
                died = self._how_one_died()
                self._end()
            raise WorkerDied(died) from None
        except BaseException as error:
            try:
                if isinstance(error, KeyboardInterrupt):
                    self._deliver_finished(futures, deliver, delivered)
            finally:  # a second Ctrl-C while handing over still ends the workers
                self._end()
            raise

    @staticmethod
    def _deliver_finished(
        futures: dict[Future, int], deliver: Callable[[int, Any], None], delivered: set[int]
    ) -> None:
        """Hand over every result finished and not yet handed over, in job order."""
        for future, index in sorted(futures.items(), key=lambda item: item[1]):
            if (
                index not in delivered
                and future.done()
                and not future.cancelled()
                and future.exception() is None
            ):
                deliver(index, future.result())

    def _how_one_died(self) -> str:
        """How a worker process of a broken pool ended (the first that did not end by the
        pool's own SIGTERM, which follows a death)."""
        deadline = time.monotonic() + 2
        codes: list[int | None] = []
        while time.monotonic() < deadline:
            codes = [process.exitcode for process in self._started]
            if any(code not in (None, 0, -signal.SIGTERM) for code in codes):
                break
            time.sleep(0.02)
        unusual = [code for code in codes if code not in (None, 0, -signal.SIGTERM)]
        return describe_exit(
            unusual[0] if unusual else next((code for code in codes if code is not None), None)
        )

    def _processes(self, count: int) -> ProcessPoolExecutor:
        """The pool, with at least `count` processes (a smaller idle one is replaced), all
        started by this thread."""
        if self._pool is not None and self._size < count:
            self.close()
        if self._pool is None:
            kernel = threading.current_thread() is threading.main_thread()
            pool = ProcessPoolExecutor(
                count,
                mp_context=self.context,
                initializer=_start_worker,
                initargs=(os.getpid(), kernel, self.init),
            )
            self._pool, self._size = pool, count
            try:
                # Start every process here, from this thread (a pool starts them as jobs
                # arrive; the kernel's parent-death signal follows the forking thread), with
                # Ctrl-C blocked: they inherit that, so a Ctrl-C while they start (a spawned
                # one imports for a while) cannot kill one before its initializer ignores it.
                with _ctrl_c_blocked():
                    started = [pool.submit(os.getpid) for _ in range(count)]
                for future in started:
                    future.result()
                self._started = list((getattr(pool, "_processes", None) or {}).values())
            except BaseException:
                self._end()
                raise
        return self._pool

    def _end(self) -> None:
        """End the processes now: queued jobs are cancelled, running ones killed."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # ProcessPoolExecutor has no public way to end running work before Python 3.14.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=10)

    def close(self) -> None:
        """End the worker processes (after the jobs they run, if any: none when idle)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _ctrl_c_blocked() -> Iterator[None]:
    """Block SIGINT and the stop signals in this thread for the block (a Ctrl-C meanwhile
    waits, and is delivered as it ends); processes started meanwhile begin with them
    blocked."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *STOP_SIGNALS})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _nothing() -> None:
    """The `init` of workers that need none."""


def run_jobs(
    jobs: Sequence,
    play: Callable,
    placement: Placement | None = None,
    *,
    init: Callable[[], None] | None = None,
    on_result: Callable[[int, Any], None] | None = None,
    context: Any = None,
) -> list:
    """Play a list of jobs on fresh workers ([`Workers`][satellites_env.jobs.Workers]: the
    arguments are its and its `run`'s); the results in job order."""
    with Workers(placement, init=init, context=context) as pool:
        return pool.run(jobs, play, on_result)
