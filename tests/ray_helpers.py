"""Shared helpers for the tests that run on a local Ray (the `ray` marker)."""

from __future__ import annotations


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
