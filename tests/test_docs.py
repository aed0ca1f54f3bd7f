"""The documentation's Python examples run as printed, and the configuration reference is the
one the config system writes. The strict build and the site in a browser: tests/docs/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def python_blocks() -> list[tuple[str, str]]:
    """(page, block) for every ```python block of the site."""
    return [
        (str(page.relative_to(ROOT)), block)
        for page in PAGES
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    ]


PROGRAMS = [(page, b) for page, b in python_blocks() if b.startswith(("import", "from"))]


def test_fragments_are_marked():
    assert len(PROGRAMS) >= 5
    for page, block in python_blocks():
        if not block.startswith(("import", "from")):
            text = (ROOT / page).read_text()
            before = text[: text.index(block)].rstrip().rsplit("\n", 3)[-3:]
            assert any("fragment" in line for line in before), (page, block[:60])


@pytest.mark.parametrize(
    "page, program", PROGRAMS, ids=[f"{page}:{k}" for k, (page, _) in enumerate(PROGRAMS)]
)
def test_the_sites_programs_run(page, program, tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert result.returncode == 0, f"{page}\n{result.stderr[-2000:]}"


def test_the_configuration_reference_is_the_config_systems():
    from training.common.config import reference

    assert (DOCS / "configs.md").read_text() == reference() + "\n", (
        "regenerate it: python -m training.common.config > docs/configs.md"
    )


def test_no_page_links_to_a_missing_file():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (page.parent / target).resolve()
            # A replay page is built from the game record beside it (docs/hooks/replays.py).
            built = path.parent == DOCS / "replays" and path.with_suffix(".json").is_file()
            assert path.exists() or built, (str(page), target)
