"""Which file a `--config` value names (one rule, whatever the current folder holds), the
shipped configs as `satellites config list` and `show` give them, and YAML numbers read as
YAML 1.2 reads them (never YAML 1.1's sexagesimal, hexadecimal or yes/no)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from training.common.config import (
    SHIPPED,
    ConfigError,
    config_command,
    config_from_dict,
    config_path,
    load_config,
    names_a_file,
    parse_yaml,
    purpose,
    shipped_configs,
)

NAMES = ["az_quick", "az_standard", "exploit", "quick", "standard"]


def test_the_shipped_configs_live_in_configs_at_the_top():
    assert shipped_configs() == NAMES
    assert SHIPPED == Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize(
    "value, is_file",
    [
        ("az_quick", False),
        ("quick", False),
        ("my_config", False),
        ("az_quick.yaml", True),
        ("x.yml", True),
        ("X.YAML", True),
        ("./az_quick", True),
        ("runs/az_quick", True),
        ("/abs/config", True),
        ("a.yaml.bak", False),
        ("yaml", False),
    ],
)
def test_the_rule_that_decides_file_or_name(value, is_file):
    assert names_a_file(value) is is_file


def test_a_file_in_the_current_folder_never_shadows_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "az_quick").write_text("learner: ppo\n")
    assert config_path("az_quick") == SHIPPED / "az_quick.yaml"
    assert load_config("az_quick", check_agents=False).learner == "alphazero"
    assert config_path("./az_quick") == Path("./az_quick")
    assert load_config("./az_quick", check_agents=False).learner == "ppo"


def test_a_yaml_name_is_a_file_even_when_a_shipped_config_has_its_stem(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"'az_quick.yaml' does not exist"):
        load_config("az_quick.yaml")
    (tmp_path / "az_quick.yaml").write_text("learner: ppo\n")
    assert load_config("az_quick.yaml", check_agents=False).learner == "ppo"


@pytest.mark.parametrize(
    "value, message",
    [
        ("", "the config is empty"),
        (
            "az_quik",
            r"'az_quik' is not a shipped config \(shipped: az_quick, az_standard, exploit, "
            r"quick, standard\); a config file is named by a path with a / or ending in "
            r"\.yaml or \.yml \(\./az_quik\.yaml\)",
        ),
    ],
)
def test_a_value_that_names_nothing_says_the_rule(value, message):
    with pytest.raises(ConfigError, match=message):
        config_path(value)


def test_a_path_object_is_always_a_file(tmp_path):
    assert config_path(Path("az_quick")) == Path("az_quick")


# --------------------------------------------------------------------------- config list/show


def _console() -> tuple[Console, list[str]]:
    import io

    buffer = io.StringIO()
    return Console(file=buffer, width=200), buffer


def test_every_shipped_config_states_its_purpose_on_its_first_line():
    for name in NAMES:
        line = purpose(SHIPPED / f"{name}.yaml")
        assert 20 <= len(line) <= 100, (name, line)


def test_config_list_names_each_config_with_its_purpose():
    console, buffer = _console()
    config_command("list", None, console)
    lines = buffer.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == NAMES
    for name, line in zip(NAMES, lines, strict=False):
        assert line.endswith(purpose(SHIPPED / f"{name}.yaml"))


def test_config_show_prints_the_file_as_it_is():
    console, buffer = _console()
    config_command("show", "az_quick", console)
    assert buffer.getvalue() == (SHIPPED / "az_quick.yaml").read_text()
    with pytest.raises(ConfigError, match="'az_quik' is not a shipped config"):
        config_command("show", "az_quik", console)
    with pytest.raises(ConfigError, match="is not a shipped config"):
        config_command("show", "./az_quick", console)


# --------------------------------------------------------------------------- YAML 1.2 numbers


@pytest.mark.parametrize(
    "text, value",
    [
        ("12", 12),
        ("-3", -3),
        ("+4", 4),
        ("010", 10),
        ("0", 0),
        ("5e-4", 5e-4),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("1.", 1.0),
        ("-2.5E+2", -250.0),
        (".inf", math.inf),
        ("-.Inf", -math.inf),
        ("true", True),
        ("False", False),
        ("TRUE", True),
        ("~", None),
        ("null", None),
        # YAML 1.1's forms, and hexadecimal and octal, are text
        ("1:30", "1:30"),
        ("0x10", "0x10"),
        ("0o17", "0o17"),
        ("0b11", "0b11"),
        ("1_000", "1_000"),
        ("yes", "yes"),
        ("No", "No"),
        ("on", "on"),
        ("OFF", "OFF"),
        ("y", "y"),
        ("2001-02-03", "2001-02-03"),
        ("=", "="),
        ("1.5e", "1.5e"),
    ],
)
def test_plain_scalars_are_read_as_yaml_1_2_reads_them(text, value):
    read = parse_yaml(f"a: {text}\n")["a"]
    assert read == value and type(read) is type(value)


def test_nan_is_a_float():
    assert math.isnan(parse_yaml("a: .nan\n")["a"])


@pytest.mark.parametrize(
    "text", ["seed: 1:30", "seed: 0x10", "seed: 1_000", "seed: 0o17", "seed: 2001-02-30"]
)
def test_a_number_key_refuses_what_yaml_1_1_would_read_as_a_number(text):
    with pytest.raises(ConfigError, match=r"seed must be an integer, got '.+' \(str\)"):
        config_from_dict(parse_yaml(text), check_agents=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**30), 10**30), st.booleans())
def test_any_decimal_integer_reads_as_itself(number, plus):
    text = f"+{number}" if plus and number >= 0 else str(number)
    assert parse_yaml(f"a: {text}\n") == {"a": number}


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False))
def test_any_float_written_by_python_reads_as_itself(number):
    text = {math.inf: ".inf", -math.inf: "-.inf"}.get(number, repr(number))
    read = parse_yaml(f"a: {text}\n")["a"]
    assert type(read) is float and read == number


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.tuples(st.integers(0, 10**6), st.integers(0, 59)).map(lambda t: f"{t[0]}:{t[1]:02d}"),
        st.integers(0, 10**9).map(lambda n: f"0x{n:x}"),
        st.integers(0, 10**9).map(lambda n: f"0o{n:o}"),
        st.integers(0, 10**9).map(lambda n: f"0b{n:b}"),
        st.integers(1000, 10**9).map(lambda n: f"{n:_}"),
        st.sampled_from(
            [
                "yes",
                "Yes",
                "YES",
                "no",
                "No",
                "NO",
                "on",
                "On",
                "ON",
                "off",
                "Off",
                "OFF",
                "y",
                "Y",
                "n",
                "N",
            ]
        ),
    )
)
def test_yaml_1_1_numbers_and_booleans_are_text_and_refused_as_numbers(text):
    assert parse_yaml(f"a: {text}\n") == {"a": text}
    with pytest.raises(ConfigError, match=r"must be an integer"):
        config_from_dict(parse_yaml(f"learner: alphazero\nseed: {text}\n"), check_agents=False)
