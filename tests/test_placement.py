"""`Placement`, the one value for where games run: valid kinds, worker counts and addresses
construct, anything else is a clear ValueError (fuzzed); the command line's and a config's
placements; and the one rule that replaces dead actors (`ActorSlots`, with fake actors)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satellites_env.distributed import ActorsLostError, ActorSlots
from satellites_env.placement import KINDS, MAX_WORKERS, Placement

ADDRESSES = st.one_of(
    st.none(),
    st.just(""),
    st.sampled_from(["auto", "127.0.0.1:6379", "ray://head:10001", "[::1]:6379"]),
    st.text(max_size=12),
)


def valid(kind, workers, address) -> bool:
    good_address = address in (None, "") or (
        kind == "ray"
        and isinstance(address, str)
        and len(address) <= 300
        and all(c.isprintable() and not c.isspace() for c in address)
    )
    return kind in KINDS and type(workers) is int and 1 <= workers <= MAX_WORKERS and good_address


@given(
    st.one_of(st.sampled_from(KINDS), st.text(max_size=10), st.none(), st.integers()),
    st.one_of(st.integers(-3, MAX_WORKERS + 3), st.booleans(), st.floats(0, 4), st.just("2")),
    ADDRESSES,
)
def test_fuzz_valid_placements_construct_and_others_are_clear_value_errors(kind, workers, address):
    if valid(kind, workers, address):
        placement = Placement(kind, workers, address)
        assert placement.address == (address or None)  # "" is a local Ray: None
        assert placement.on_ray == (kind == "ray")
        assert placement.describe()
        assert Placement(kind, workers, address) == placement  # a value
        return
    with pytest.raises(ValueError, match=r"placement's kind|placement's workers|Ray address"):
        Placement(kind, workers, address)


def test_an_address_is_for_ray_alone_and_a_placement_is_frozen():
    with pytest.raises(ValueError, match="only for placement kind ray, not 'processes'"):
        Placement("processes", 2, "auto")
    with pytest.raises(ValueError, match="expected a Ray cluster address"):
        Placement("ray", 2, "a b")
    with pytest.raises(AttributeError):
        Placement().kind = "ray"  # type: ignore[misc]


@given(st.integers(1, 256), st.one_of(st.none(), st.just(""), st.just("auto")))
def test_the_command_lines_placement(workers, ray):
    placement = Placement.of(workers, ray)
    if ray is not None:
        assert placement == Placement("ray", workers, ray or None)
    else:
        assert placement.kind == ("local" if workers == 1 else "processes")
        assert placement.workers == workers


def test_a_configs_placement_and_a_sessions_ray():
    section = SimpleNamespace(backend="thread", workers=2, address="")
    assert Placement.of_config(section) == Placement("threads", 2)
    assert Placement.of_config(section, "") == Placement("ray", 2)
    assert Placement.of_config(section, "auto") == Placement("ray", 2, "auto")
    on_ray = SimpleNamespace(backend="ray", workers=3, address="127.0.0.1:6379")
    assert Placement.of_config(on_ray) == Placement("ray", 3, "127.0.0.1:6379")
    assert section.backend == "thread"  # the section itself is not changed
    with pytest.raises(ValueError, match=r"distributed\.backend must be one of local, thread"):
        Placement.of_config(SimpleNamespace(backend="dask", workers=1, address=""))


def test_describe():
    assert Placement().describe() == "this process"
    assert Placement("processes", 2).describe() == "2 worker processes"
    assert Placement("threads", 2).describe() == "2 threads"
    assert Placement("ray", 4).describe() == "4 Ray actors on a local Ray"
    assert Placement("ray", 1, "auto").describe() == "1 Ray actor on the Ray cluster at auto"


class FakeActor:
    """An actor that is alive until killed (or found dead)."""

    def __init__(self, slot: int, incarnation: int):
        self.slot, self.incarnation, self.alive = slot, incarnation, True


def test_actor_slots_replace_dead_actors_up_to_the_limit_over_the_whole_run():
    killed = []

    def kill(actor):
        killed.append(actor)
        if not actor.alive:
            raise RuntimeError("already dead")  # a dead actor may refuse: ignored
        actor.alive = False

    started = []

    def start(slot, incarnation):
        started.append(FakeActor(slot, incarnation))
        return started[-1]

    slots = ActorSlots(start, 2, kill=kill, what="game actor")
    slots.fill(3)
    first = list(slots.actors)
    assert [(a.slot, a.incarnation) for a in first] == [(0, 0), (1, 0), (2, 0)]
    first[1].alive = False  # it died
    new = slots.replace(1, "RayActorError: the actor died")
    assert slots[1] is new and (new.slot, new.incarnation) == (1, 1) and killed == [first[1]]
    slots.replace(2, "timeout")
    assert slots.incarnations == [0, 1, 1] and slots.replaced == 2
    # the limit holds over all slots together: a third death is an error naming the cause
    with pytest.raises(ActorsLostError, match=r"game actor 0 failed \(OOM\) and 2 game actors"):
        slots.replace(0, "OOM")
    assert slots[0] is first[0] and slots.replaced == 2  # nothing started
    slots.close()
    assert slots.actors == [] and len(started) == 5
    assert not any(actor.alive for actor in started)


def test_actor_slots_raise_the_callers_error_and_refuse_a_negative_limit():
    class PoolError(ValueError):
        pass

    slots = ActorSlots(FakeActor, 0, error=PoolError)
    slots.fill(1)
    with pytest.raises(PoolError, match=r"actor 0 failed \(gone\).*max_replacements=0"):
        slots.replace(0, "gone")
    with pytest.raises(ValueError, match="max_replacements must be >= 0"):
        ActorSlots(FakeActor, -1)
