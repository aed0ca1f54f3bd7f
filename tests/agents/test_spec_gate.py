"""Specs read from a file pass one gate (`check_spec_from_file`) that builds nothing: only the
kinds that load data pass without `allow_pickle`; and one agent spelled two ways is one spec
(`canonical_spec`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satellites_env import agents
from satellites_env.agents import (
    AgentSpecError,
    canonical_spec,
    check_spec_from_file,
    loads_data_only,
    make_agent,
)


@pytest.mark.parametrize(
    "spec", ["random", "greedy", "mcts", "mcts:5", "checkpoint:x.pt", "az:pretrained:8"]
)
def test_the_data_only_kinds_pass_the_gate(spec):
    assert loads_data_only(spec)
    check_spec_from_file(spec, "f.yaml: eval.opponents[0]")


@pytest.mark.parametrize("spec", ["rllib:/some/dir", "plug:x", "rllib"])
def test_other_kinds_are_refused_naming_the_source_and_built_never(spec, plugin):
    with pytest.raises(AgentSpecError, match=r"f\.yaml: search\.opponent: .*--allow-pickle"):
        check_spec_from_file(spec, "f.yaml: search.opponent")
    check_spec_from_file(spec, "f.yaml", allow_pickle=True)  # the user's flag lets it through
    assert plugin == []  # the gate reads the text; it builds nothing


@pytest.mark.parametrize("spec", ["nosuch:x", "", "greedie"])
def test_a_spec_of_no_known_kind_is_left_to_make_agent_to_refuse(spec):
    check_spec_from_file(spec, "f.yaml")
    with pytest.raises(AgentSpecError, match="unknown agent spec"):
        make_agent(spec)


def test_our_kind_names_taken_by_other_code_are_not_data_only(monkeypatch):
    monkeypatch.setitem(agents._registered, "checkpoint", lambda argument, seed: None)
    assert not loads_data_only("checkpoint:x.pt")
    with pytest.raises(AgentSpecError, match="--allow-pickle"):
        check_spec_from_file("checkpoint:x.pt", "db")


@pytest.mark.parametrize(
    "spellings, canonical",
    [
        (["mcts", "mcts:", "mcts:200", "mcts:0200"], "mcts:200"),
        (["mcts:5", "mcts:05", "mcts:0005"], "mcts:5"),
        (["az:p.pt", "az:p.pt:32", "az:p.pt:032"], "az:p.pt:32"),
        (["checkpoint:p.pt", "checkpoint:p.pt:greedy"], "checkpoint:p.pt"),
        (
            ["checkpoint:p.pt:sample", "checkpoint:p.pt:sample=1", "checkpoint:p.pt:sample=1.0"],
            "checkpoint:p.pt:sample",
        ),
        (
            ["checkpoint:p.pt:sample=0.5", "checkpoint:p.pt:sample=.50"],
            "checkpoint:p.pt:sample=0.5",
        ),
    ],
)
def test_one_agent_spelled_two_ways_is_one_spec(spellings, canonical):
    assert {canonical_spec(spec) for spec in spellings} == {canonical}


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="mctsazpkohenrdg:0123456789.=/_-", max_size=24))
def test_fuzz_canonical_specs_are_fixed_points_and_keep_what_builds(spec):
    once = canonical_spec(spec)
    assert canonical_spec(once) == once
    assert once.partition(":")[0] == spec.partition(":")[0]  # never another kind
    if spec.partition(":")[0] in ("mcts", "random", "greedy"):
        try:
            agent = make_agent(spec)
        except AgentSpecError:
            return
        assert make_agent(once).identity() == agent.identity()


def test_a_config_refuses_the_same_opponent_spelled_twice():
    pytest.importorskip("torch")
    from training.common.config import ConfigError, config_from_dict

    with pytest.raises(ConfigError, match="twice"):
        config_from_dict({"eval": {"opponents": ["mcts:5", "mcts:05"]}}, check_agents=False)
    with pytest.raises(ConfigError, match="twice"):
        config_from_dict({"eval": {"final": {"mcts": 2, "mcts:200": 2}}}, check_agents=False)


def test_a_tournament_refuses_the_same_agent_spelled_twice():
    from satellites_env.arena import run_tournament

    with pytest.raises(ValueError, match="distinct"):
        run_tournament(["mcts:5", "mcts:05"], 2)
