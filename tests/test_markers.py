"""The test markers mean what pyproject.toml says: every marker is registered (`--strict-markers`
fails the run on any other), and the slow list of tests/markers.py names tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from markers import SLOW

TESTS = Path(__file__).resolve().parent


def test_the_suite_runs_with_strict_markers_and_the_four_markers_registered(pytestconfig):
    assert "--strict-markers" in pytestconfig.getini("addopts")
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {"slow", "browser", "ray", "docs"} <= registered
    used = {
        name
        for path in TESTS.rglob("*.py")
        for name in re.findall(r"pytest\.mark\.(\w+)", path.read_text())
    }
    builtin = {"parametrize", "skipif", "skip", "xfail", "usefixtures", "filterwarnings"}
    assert used - builtin <= registered, used - builtin - registered


def defined_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


@pytest.mark.parametrize("entry", SLOW)
def test_each_slow_entry_names_a_test_that_exists(entry):
    path, _, rest = entry.partition("::")
    module = TESTS / path
    assert module.is_file() and module.name.startswith("test_"), entry
    if rest:
        names = re.split(r"::|\[", rest)
        assert names[0] in defined_names(module), entry
