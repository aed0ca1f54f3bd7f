"""How a command stops early, one way for every stop: Ctrl-C, SIGTERM (a scheduler's or
`kill`'s stop), SIGHUP (the terminal closed) and a worker process that died.

[`stop_signals`][satellites_env.stops.stop_signals] (the command line holds it around every
command) turns SIGTERM and SIGHUP into Ctrl-C: the handler of SIGINT in force at that moment
runs (so a command that holds Ctrl-C until its files are written, or a trainer that finishes
its iteration first, treats them alike), or, where SIGINT has none, a KeyboardInterrupt is
raised. Every command's Ctrl-C path (write what finished, say so) is then the path of all
three. SIGHUP also points standard output and error at `/dev/null` where they are a terminal,
since writing to a terminal that hung up fails and would stop that path halfway.

A worker process that dies (killed for memory, a crash) ends the jobs' run the same way:
[`jobs`][satellites_env.jobs] hands over every finished result and raises
[`WorkerDied`][satellites_env.stops.WorkerDied], a KeyboardInterrupt.

[`exit_status`][satellites_env.stops.exit_status] and
[`stop_reason`][satellites_env.stops.stop_reason] then give the command's exit status (128 +
the signal: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; 1 for a dead worker) and its one line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

__all__ = ["WorkerDied", "exit_status", "stop_reason", "stop_signals"]

#: the signals taken as Ctrl-C (those that exist on this platform)
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
#: the exit status of a command stopped because a worker process died
EXIT_WORKER_DIED = 1

_state: dict[str, object] = {"signal": None, "worker": None}


class WorkerDied(KeyboardInterrupt):
    """A worker process died while it played a job (its message says how); raised once every
    finished result is handed over, so that callers keep them as on Ctrl-C."""

    def __init__(self, message: str):
        super().__init__(message)
        _state["worker"] = message


def _detach_terminal() -> None:
    """Point standard output and error at /dev/null where they are a terminal (one that
    hung up fails every write)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        for fd in (1, 2):
            try:
                if stat.S_ISCHR(os.fstat(fd).st_mode) and not os.path.samestat(
                    os.fstat(fd), os.fstat(devnull)
                ):
                    os.dup2(devnull, fd)
            except OSError:
                continue
    finally:
        os.close(devnull)


def _on_stop(signum: int, frame: FrameType | None) -> None:
    if _state["signal"] is None:
        _state["signal"] = signum
    if signum == getattr(signal, "SIGHUP", None):
        _detach_terminal()
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP act as Ctrl-C (see the module); the previous
    handlers come back after it. Only the main thread can do this: elsewhere nothing changes."""
    _state["signal"] = _state["worker"] = None
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for number in STOP_SIGNALS:
        if signal.getsignal(number) is signal.SIG_IGN:
            continue  # started under nohup (SIGHUP ignored): that choice stands
        previous[number] = signal.signal(number, _on_stop)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def received() -> int | None:
    """The first stop signal received within `stop_signals` (None: none)."""
    value = _state["signal"]
    return value if isinstance(value, int) else None


def exit_status() -> int:
    """The exit status of a command stopped early: 128 + the signal (130 for Ctrl-C), or
    EXIT_WORKER_DIED when a worker process died."""
    number = received()
    if number is None and _state["worker"] is not None:
        return EXIT_WORKER_DIED
    return 128 + (number or signal.SIGINT)


def stop_reason() -> str:
    """The one line a command stopped early ends with."""
    number = received()
    if number is None and _state["worker"] is not None:
        return f"stopped: {_state['worker']}"
    if number is None:
        return "interrupted"
    name = signal.Signals(number).name
    closed = " (the terminal closed)" if name == "SIGHUP" else ""
    return f"stopped by {name}{closed}"


def describe_exit(code: int | None) -> str:
    """How a worker process ended, from its exit code (negative: the signal that ended it)."""
    if code is None:
        return "a worker process died"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        memory = ", as when memory runs out" if name == "SIGKILL" else ""
        return f"a worker process was killed by {name}{memory}"
    return f"a worker process exited with status {code}"


class HoldCtrlC:
    """Ctrl-C in the main thread while the block runs: a KeyboardInterrupt at once until
    `hold()`, then held and raised as the block ends, so that no finished game is lost between
    the last game and its file (an ignored Ctrl-C stays ignored).

    Args:
        held: Hold Ctrl-C from the start.
    """

    def __init__(self, held: bool = False):
        self.held, self.caught, self.installed = held, False, False
        self.previous: Callable[[int, FrameType | None], Any] | int | None = None

    def hold(self) -> None:
        """Hold Ctrl-C from now on, until the block ends."""
        self.held = True

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.held:
            self.caught = True
        elif callable(self.previous):
            self.previous(signum, frame)
        else:
            raise KeyboardInterrupt

    def __enter__(self) -> HoldCtrlC:
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
        ):
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
            self.installed = True
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self.previous)
        if self.caught and kind is None:
            raise KeyboardInterrupt
