"""`--ray [ADDRESS]` of `train` and `evaluate`: any text is an address or a usage error, and
an address where nothing listens is refused at once, before any Ray starts (fuzzed)."""

from __future__ import annotations

import argparse
import socket

from hypothesis import given, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.cli.options import ray_address
from satellites_env.distributed import RayUnavailableError, _probe


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_fuzz_ray_addresses_parse_or_are_usage_errors(text):
    try:
        address = ray_address(text)
    except argparse.ArgumentTypeError as error:
        assert "expected a Ray cluster address" in str(error)
        return
    assert address == "" or (
        address.strip() == address
        and address.isprintable()
        and not any(c.isspace() for c in address)
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.integers(-10, 10**7).map(str), st.text(alphabet="0123456789:x[]", max_size=8)),
    st.sampled_from(["", "ray://"]),
)
def test_fuzz_probed_ports_are_refused_cleanly(port, scheme):
    try:
        _probe(f"{scheme}127.0.0.1:{port}", seconds=2.0)
    except RayUnavailableError as error:
        assert "no Ray cluster answers" in str(error)


def test_a_closed_port_is_a_one_line_error_before_any_game(capsys):
    status = cli.main(
        [
            "evaluate",
            "--agents",
            "random",
            "greedy",
            "--games",
            "1",
            "--ray",
            f"127.0.0.1:{_closed_port()}",
        ]
    )
    assert status == 2
    assert "error: no Ray cluster answers at '127.0.0.1:" in capsys.readouterr().err
