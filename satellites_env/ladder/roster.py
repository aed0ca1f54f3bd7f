"""The ladder's agents: adding one, looking them up, and building a stored one (a spec read
from the database builds only an agent that loads data, unless `allow_pickle`, and only while
it is still the player its key names)."""

from __future__ import annotations

from ..agents import Agent, AgentSpecError, check_spec_from_file, make_agent
from ..core.checks import quoted, quoted_path
from .database import LadderDB, LadderError, timestamp
from .rows import MAX_SPEC, Entry, name_problem, read_entries


def add_agent(ladder: LadderDB, spec: str, name: str | None = None, roster: bool = True) -> Entry:
    """Add an agent (built once here: a bad spec or file is an error now). An agent the
    ladder already has (the same identity) is returned as it is, made a roster member."""
    agent = make_agent(spec, seed=0)
    key = agent.identity()
    name = spec if name is None else name
    problem = name_problem(name)
    if problem is not None:
        raise LadderError(problem)
    if len(spec) > MAX_SPEC:
        raise LadderError(f"agent spec {quoted(spec)} is longer than {MAX_SPEC} characters")
    with ladder.transaction():
        known = {e.key: e for e in read_entries(ladder).values()}
        if key in known:
            entry = known[key]
            if roster and not entry.roster:
                ladder.db.execute("UPDATE agents SET roster = 1 WHERE id = ?", (entry.id,))
            if entry.spec != spec:  # a renamed or moved file: play it from where it is now
                ladder.db.execute("UPDATE agents SET spec = ? WHERE id = ?", (spec, entry.id))
            return entry_of(ladder, entry.id)
        if any(e.name == name for e in known.values()):
            raise LadderError(f"the name {quoted(name)} is taken by another agent; give --name")
        ladder.db.execute(
            "INSERT INTO agents (key, name, spec, roster, added) VALUES (?, ?, ?, ?, ?)",
            (key, name, spec, int(roster), timestamp()),
        )
    return entry_named(ladder, name)


def entry_of(ladder: LadderDB, id_: int) -> Entry:
    """The agent whose id is `id_`."""
    entries = read_entries(ladder)
    if id_ not in entries:
        raise LadderError(f"the ladder has no agent {id_}")
    return entries[id_]


def entry_named(ladder: LadderDB, name: str) -> Entry:
    """The agent named `name`."""
    for entry in read_entries(ladder).values():
        if entry.name == name:
            return entry
    raise LadderError(f"the ladder has no agent named {quoted(name)}")


def agents_of(ladder: LadderDB, roster_only: bool = True) -> list[Entry]:
    """The ladder's agents (the roster's, or all) in the order they were added."""
    return [e for e in read_entries(ladder).values() if e.roster or not roster_only]


def build(ladder: LadderDB, entry: Entry, allow_pickle: bool) -> Agent:
    """The agent of a stored entry: only a data-only kind without `allow_pickle`, and
    only while it is the player its key names."""
    try:
        check_spec_from_file(
            entry.spec,
            f"ladder database {quoted_path(ladder.path)}: agent {quoted(entry.name)}",
            allow_pickle,
        )
    except AgentSpecError as error:
        raise LadderError(str(error)) from None
    agent = make_agent(entry.spec, seed=0)
    if agent.identity() != entry.key:
        raise LadderError(
            f"agent {quoted(entry.name)} ({quoted(entry.spec)}) is no longer the player "
            f"it was when it joined the ladder: its file changed (identity now "
            f"{quoted(agent.identity(), 90)}, stored {quoted(entry.key, 90)}); put the "
            f"file it joined with back, or add the new file under a new name "
            f"(`satellites ladder add {entry.spec} --name NEW`)"
        )
    return agent
