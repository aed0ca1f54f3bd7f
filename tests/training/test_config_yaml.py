"""A config's YAML: explicit tags read only YAML 1.2's forms, and aliases or merge keys cannot
make a small file cost more than `MAX_CONFIG_NODES` values to read (issue 58)."""

from __future__ import annotations

import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from training.common.config import MAX_CONFIG_NODES, ConfigError, parse_yaml


@pytest.mark.parametrize(
    "text, value",
    [
        ("!!int 12", 12),
        ("!!int -010", -10),
        ("!!float 5e-4", 5e-4),
        ("!!float .5", 0.5),
        ("!!float -.inf", float("-inf")),
        ("!!bool True", True),
        ("!!null ~", None),
        ("!!str 0x10", "0x10"),
        ("!!seq [1]", [1]),
        ("!!map {b: 1}", {"b": 1}),
    ],
)
def test_explicit_tags_read_their_yaml_1_2_forms(text, value):
    assert parse_yaml(f"a: {text}") == {"a": value}


@pytest.mark.parametrize(
    "text",
    [
        "!!int 1_000",
        "!!int 0x10",
        "!!int 0o17",
        "!!int 1:30",
        "!!float 1:30",
        "!!float 1_0.5",
        "!!bool yes",
        "!!bool on",
        "!!null nothing",
        "!!binary aGVsbG8=",
        "!!timestamp 2001-02-03",
        "!!set {x}",
        "!!omap [a: 1]",
        "!!pairs [a: 1]",
        "!!python/object/apply:os.system [echo]",
        "!local x",
    ],
)
def test_other_tags_and_yaml_1_1_forms_are_refused_naming_the_line(text):
    with pytest.raises(ConfigError, match=r"'f\.yaml' is not valid YAML: line 2"):
        parse_yaml(f"b: 1\na: {text}\n", "f.yaml")


def merge_chain(levels: int) -> str:
    lines = ["a0: &a0 {k: 1}"]
    lines += [f"a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}], k{i}: 1}}" for i in range(1, levels)]
    return "\n".join(lines)


@pytest.mark.parametrize(
    "text",
    [
        merge_chain(40),  # each level's merge doubles the keys merged below
        "a: &a [" + ", ".join(["x"] * 2000) + "]\nb: [" + ", ".join(["*a"] * 200) + "]",
        "a: &a {<<: *a}",
        "a: &a [b, *a]",
    ],
)
def test_alias_and_merge_bombs_are_refused_at_once(text):
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="is not a config"):
        parse_yaml(text)
    assert time.perf_counter() - start < 2.0


def test_aliases_within_the_limit_still_read():
    text = "a: &a {k: 1, j: 2}\nb: {<<: *a, j: 3}\nc: [*a, *a]"
    assert parse_yaml(text) == {
        "a": {"k": 1, "j": 2},
        "b": {"k": 1, "j": 3},
        "c": [{"k": 1, "j": 2}] * 2,
    }
    assert MAX_CONFIG_NODES >= 10_000  # far above a real config's hundred values


scalars = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False).map(repr),
    st.sampled_from(["yes", "no", "on", "off", "~", "null", "1:30", "0x1F", "1_0", ".inf"]),
    st.text(alphabet="0123456789.eE+-_:xob", max_size=8),
)
tags = st.sampled_from(["int", "float", "bool", "null", "str", "binary", "timestamp", "set"])


@settings(max_examples=400, deadline=None)
@given(tags, scalars)
def test_fuzz_a_tagged_scalar_is_its_1_2_value_or_a_config_error(tag, text):
    try:
        value = parse_yaml(f"a: !!{tag} '{text}'")["a"]
    except ConfigError:
        return
    plain = yaml.safe_load(f"a: '{text}'")["a"]
    if tag == "int":
        assert value == int(plain, 10) and "_" not in plain
    elif tag == "float":
        assert isinstance(value, float) and "_" not in plain and ":" not in plain
    elif tag == "bool":
        assert plain.lower() in ("true", "false")
    elif tag == "null":
        assert value is None
    else:
        assert tag == "str" and value == plain
