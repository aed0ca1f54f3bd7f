"""Where jobs run: one value, [`Placement`][satellites_env.placement.Placement], that the arena,
the tournament, the ladder, the trainer's evaluations and its self-play generators all take.

A placement is a kind and a worker count (and, on Ray, the cluster's address):

* `local`: in this process, one job (or generator) after the other;
* `processes`: in `workers` worker processes of this machine;
* `threads`: in `workers` threads of this process (self-play generators only: their hot
  loops release the GIL);
* `ray`: in `workers` Ray actors, on a local Ray (`address` None) or the cluster at
  `address`.

The command line's `--workers N --ray [ADDRESS]` gives one
([`Placement.of`][satellites_env.placement.Placement.of]), a config's `distributed:` section
another ([`Placement.of_config`][satellites_env.placement.Placement.of_config]); a placement is
never written into a config. Importing this module imports nothing beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "MAX_WORKERS", "Placement", "check_address"]

#: where jobs may run
KINDS = ("local", "processes", "threads", "ray")
#: the most workers a placement may ask for (a config's `distributed.workers` bound)
MAX_WORKERS = 1024
#: a config's `distributed.backend` -> the placement kind it names
BACKEND_KINDS = {"local": "local", "thread": "threads", "ray": "ray"}
#: the longest Ray address taken
MAX_ADDRESS = 300


def check_address(address: str) -> None:
    """ValueError unless `address` can be a Ray cluster's address (`auto`, `HOST:PORT`,
    `ray://HOST:PORT`): printable, no spaces, at most MAX_ADDRESS characters. Whether a
    cluster answers there is checked when Ray connects (`satellites_env.distributed`)."""
    if not isinstance(address, str):
        raise ValueError(f"a Ray address must be a string, got {type(address).__name__}")
    if (
        not address
        or len(address) > MAX_ADDRESS
        or any(c.isspace() or not c.isprintable() for c in address)
    ):
        raise ValueError(
            f"expected a Ray cluster address such as auto or 127.0.0.1:6379 (printable, no "
            f"spaces, at most {MAX_ADDRESS} characters), got {address[: MAX_ADDRESS + 20]!r}"
        )


@dataclass(frozen=True)
class Placement:
    """Where jobs run: `kind` (one of KINDS), `workers` (1 to MAX_WORKERS: processes,
    threads or Ray actors; with `local`, the generators that take turns in this process) and
    `address` (Ray only: the cluster's; None or "" a local Ray, kept as None).

    Raises:
        ValueError: A kind not in KINDS, a worker count that is not an integer in range, or
            an address that is not one (or is given for a kind other than `ray`).
    """

    kind: str = "local"
    workers: int = 1
    address: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in KINDS:
            raise ValueError(
                f"a placement's kind must be one of {', '.join(KINDS)}, got {self.kind!r}"
            )
        if type(self.workers) is not int or not 1 <= self.workers <= MAX_WORKERS:
            raise ValueError(
                f"a placement's workers must be an integer in [1, {MAX_WORKERS}], got "
                f"{self.workers!r}"
            )
        if self.address == "":
            object.__setattr__(self, "address", None)  # "" is what `--ray` alone gives
        if self.address is not None:
            if self.kind != "ray":
                raise ValueError(
                    f"a Ray address ({self.address!r}) is only for placement kind ray, not "
                    f"{self.kind!r}"
                )
            check_address(self.address)

    @classmethod
    def of(cls, workers: int = 1, ray: str | None = None) -> Placement:
        """The placement of the command line's `--workers N` and `--ray [ADDRESS]`: with `ray`
        (an address, or "" for a local Ray) N Ray actors; else N worker processes, or this
        process for one."""
        if ray is not None:
            return cls("ray", workers, ray)
        return cls("processes" if workers > 1 else "local", workers)

    @classmethod
    def of_config(cls, distributed: Any, ray: str | None = None) -> Placement:
        """The placement of a config's `distributed:` section (its `backend`, `workers` and
        `address`): where a learner's self-play generators run. `ray` (from `--ray
        [ADDRESS]`), when given, puts them on Ray instead, at that address ("": a local Ray);
        the config itself is not changed."""
        backend = distributed.backend
        if backend not in BACKEND_KINDS:
            raise ValueError(
                f"distributed.backend must be one of {', '.join(BACKEND_KINDS)}, got {backend!r}"
            )
        if ray is not None:
            return cls("ray", distributed.workers, ray)
        return cls(BACKEND_KINDS[backend], distributed.workers, distributed.address or None)

    @property
    def on_ray(self) -> bool:
        """Whether the jobs run in Ray actors."""
        return self.kind == "ray"

    def describe(self) -> str:
        """Where the jobs run, in a few words (`2 worker processes`, `4 Ray actors on the Ray
        cluster at auto`)."""
        n = self.workers
        if self.kind == "local":
            return "this process" if n == 1 else f"this process ({n} generators in turn)"
        if self.kind == "processes":
            return f"{n} worker process{'es' if n != 1 else ''}"
        if self.kind == "threads":
            return f"{n} thread{'s' if n != 1 else ''}"
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
        return f"{n} Ray actor{'s' if n != 1 else ''} on {where}"
