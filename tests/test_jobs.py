"""The one job runner (`satellites_env.jobs`): results in job order and handed over as they
finish, one interrupt rule (finished results are kept), and worker processes that end when
their parent dies, however it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from satellites_env.jobs import Workers, run_jobs
from satellites_env.placement import Placement

ROOT = Path(__file__).resolve().parents[1]


def square(job: int) -> int:
    return job * job


def slow_square(job: int) -> int:
    time.sleep(0.05 * (job % 3))
    return job * job


def fail_on_three(job: int) -> int:
    if job == 3:
        raise ValueError("job 3 is bad")
    return job


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_come_in_job_order_and_each_is_handed_over_once(workers):
    seen = {}
    results = run_jobs(
        list(range(10)),
        slow_square,
        Placement.of(workers),
        on_result=lambda index, result: seen.setdefault(index, result),
    )
    assert results == [k * k for k in range(10)]
    assert seen == dict(enumerate(results))


def test_an_empty_list_starts_nothing():
    with Workers(Placement("processes", 4)) as workers:
        assert workers.run([], square) == []
        assert workers._pool is None


def test_a_failing_job_ends_the_run_with_its_error_and_the_workers_with_it():
    with Workers(Placement("processes", 2)) as workers:
        with pytest.raises(ValueError, match="job 3 is bad"):
            workers.run(list(range(6)), fail_on_three)
        assert workers._pool is None  # ended: the next run starts fresh processes
        assert workers.run([1, 2], square) == [1, 4]


def test_ctrl_c_hands_over_every_finished_result_before_it_stops(monkeypatch):
    """KeyboardInterrupt in the caller's thread (here: from `on_result`, after the second
    result): the results already finished are still handed over, then the workers end."""
    kept = {}

    def keep(index, result):
        kept[index] = result
        if len(kept) == 2:
            time.sleep(0.5)  # the other worker finishes its job meanwhile
            raise KeyboardInterrupt

    workers = Workers(Placement("processes", 2))
    with pytest.raises(KeyboardInterrupt):
        workers.run([0, 1, 2, 3, 4, 5, 60], short_then_long, keep)
    assert len(kept) >= 3 and all(kept[k] == k for k in kept)
    assert workers._pool is None


def short_then_long(job: int) -> int:
    time.sleep(0.1 if job < 10 else job)
    return job


def processes_with_parent(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is `pid` (/proc/*/stat)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue
            if int(ppid) == pid and state != "Z":
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stragglers(pids: list[int], seconds: float) -> list[int]:
    """Those of `pids` still alive after `seconds` (then killed here, so that a failing test
    leaves none behind)."""
    end = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < end:
        time.sleep(0.05)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def kill_when_playing(process: subprocess.Popen, count: int) -> list[int]:
    """Wait until `process` has `count` children and they have played a while, SIGKILL it;
    its children."""
    deadline = time.monotonic() + 120
    try:
        while len(processes_with_parent(process.pid)) < count:
            assert process.poll() is None, process.stderr.read().decode(errors="replace")
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        time.sleep(1.5)  # the workers are playing
        return processes_with_parent(process.pid)
    finally:
        process.kill()
        process.wait()


def pid_after(seconds: float) -> int:
    """A job: sleep, then say which process played it."""
    time.sleep(seconds)
    return os.getpid()


POOL_SCRIPT = """
import threading
from satellites_env.jobs import Workers
from satellites_env.placement import Placement
from test_jobs import pid_after

def run():
    seen = set()

    def report(index, pid):
        seen.add(pid)
        if len(seen) == 2 and index < 10**6:
            print("ready", flush=True)
            seen.add(None)

    with Workers(Placement("processes", 2), context={context}) as workers:
        workers.run([0.05] * 40 + [60] * 4, pid_after, report)

if {in_thread}:
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
else:
    run()
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("in_thread", [False, True], ids=["main thread", "other thread"])
@pytest.mark.parametrize(
    "context", ["None", "__import__('multiprocessing').get_context('spawn')"], ids=["fork", "spawn"]
)
def test_workers_end_when_their_parent_is_killed(in_thread, context):
    """From the main thread the kernel kills them at once; from another thread (where the
    kernel's signal would follow that thread, not the process) their watching thread ends
    them within about half a second."""
    script = textwrap.dedent(POOL_SCRIPT).format(context=context, in_thread=in_thread)
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"},
    )
    try:
        assert process.stdout.readline() == b"ready\n", process.stderr.read()
        children = processes_with_parent(process.pid)  # the workers (and a resource tracker)
        assert len(children) >= 2
    finally:
        process.kill()
        process.wait()
    assert stragglers(children, seconds=3.0) == []


def test_workers_of_a_thread_that_ends_keep_working():
    """The kernel's parent-death signal follows the thread that forked: a pool started by a
    thread that has ended since must still work (it is not set there)."""
    import threading

    workers = Workers(Placement("processes", 2))
    thread = threading.Thread(target=lambda: workers.run([1, 2], square))
    thread.start()
    thread.join()
    try:
        time.sleep(0.5)
        assert workers.run([3, 4, 5], square) == [9, 16, 25]
    finally:
        workers.close()
