"""The README's stand-alone Python examples run as printed (fragments are marked as such)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
# Whole programs start with their imports (the site's programs: tests/test_docs.py).
PROGRAMS = [b for b in BLOCKS if b.startswith(("import", "from"))]


def test_readme_has_programs_and_marks_fragments():
    assert len(PROGRAMS) >= 2  # the env loop and the vector-env loop
    text = README.read_text()
    for block in BLOCKS:
        if not block.startswith(("import", "from")):
            before = text[: text.index(block)].rstrip().rsplit("\n", 3)[-3:]
            assert any("fragment" in line for line in before), block[:60]


@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_readme_program_runs(index, tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", PROGRAMS[index]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
