"""Fixtures for the documentation tests: the site built once per session, and the browser of the
web tests (Debian's chromium through Playwright; see tests/web/conftest.py)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The folder of `mkdocs build --strict`, built once per test session (the pytest-xdist
    workers share it: the first one builds under a lock, the others wait and reuse it); a
    build that fails (a broken link or cross-reference, a docstring griffe cannot parse) fails
    every test using it."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    if not mkdocs.exists():
        pytest.skip("mkdocs is not installed (the `dev` extra installs it)")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's folder, above each worker's own
    folder, log = shared / "docs-site", shared / "docs-site.log"
    with open(shared / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not log.exists():
            result = subprocess.run(
                [str(mkdocs), "build", "--strict", "--site-dir", str(folder)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=900,
            )
            log.write_text(f"{result.returncode}\n{result.stderr[-4000:]}")
    returncode, stderr = log.read_text().split("\n", 1)
    if returncode != "0":
        pytest.fail(f"mkdocs build --strict failed:\n{stderr}")
    return folder
