"""Fixtures for the documentation tests: the site built once per module, and the browser of the
web tests (Debian's chromium through Playwright; see tests/web/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from web.conftest import browser, page  # noqa: F401 - the web tests' fixtures, shared

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The folder of `mkdocs build --strict`, built once per module; a build that fails (a
    broken link or cross-reference, a docstring griffe cannot parse) fails every test using it."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    if not mkdocs.exists():
        pytest.skip("mkdocs is not installed (the `dev` extra installs it)")
    folder = tmp_path_factory.mktemp("site")
    result = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(folder)],
                            cwd=ROOT, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{result.stderr[-4000:]}")
    return folder
