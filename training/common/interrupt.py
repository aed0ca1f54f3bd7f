"""Ctrl-C during a training run's loop: the first lets the iteration under way finish and
save, a second stops at once."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from rich.console import Console

from satellites_env.stops import received


class Interrupt:
    """Ctrl-C (or SIGTERM, SIGHUP: `satellites_env.stops`) during the loop: the first asks it
    to stop after the iteration under way, a second stops at once (KeyboardInterrupt)."""

    def __init__(self, console: Console):
        self.console = console
        self.requested = False
        self.saved = False

    @contextlib.contextmanager
    def deferred(self) -> Iterator[Interrupt]:
        """Hold Ctrl-C as above while the block runs (in the main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum: int, frame: FrameType | None) -> None:
            if self.requested:
                raise KeyboardInterrupt
            self.requested = True
            stopped = received()
            self.console.print(
                f"{signal.Signals(stopped).name if stopped else 'Ctrl-C'}: finishing this "
                f"iteration, then saving (Ctrl-C again to stop now)"
            )

        signal.signal(signal.SIGINT, handler)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)
