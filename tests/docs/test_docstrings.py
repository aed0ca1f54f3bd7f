"""Docstrings are Google style with Markdown cross-references: no Sphinx role is left, since
mkdocstrings would print it as literal text."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["satellites_env", "training", "tests", "examples", "benchmarks", "docs"]
SPHINX_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|obj|exc|py:\w+):`")


def test_no_sphinx_role_is_left_in_the_source():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in SOURCES
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if SPHINX_ROLE.search(line)
    ]
    assert not found, "Sphinx roles (write [`Name`][module.Name] or `Name`):\n" + "\n".join(found)


def test_the_reference_parses_docstrings_as_google_style():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    plugin = next(
        p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p
    )
    options = plugin["handlers"]["python"]["options"]
    assert options["docstring_style"] == "google"
    assert options["merge_init_into_class"] and options["show_signature_annotations"]
