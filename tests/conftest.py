"""Test-session set-up shared by every test folder.

numba's on-disk cache (`cache=True`) is keyed on each kernel's own source file, but a cached
kernel also holds the compiled code of the kernels it calls and the module constants it reads.
After an edit to one module (say the work-buffer rows in `core/rules.py`), kernels cached from
other modules would run stale code. So: when any package source changed since the cache was
written, drop the whole cache before the tests import anything.

Every test starts and ends with Python's own Ctrl-C handler: a test (or a fixture) that leaves
SIGINT changed fails at once, instead of a later test in the same worker, or the processes it
starts (they inherit an ignored SIGINT), failing for no reason of its own.
"""

from __future__ import annotations

import hashlib
import signal
from pathlib import Path

import pytest
from browser import browser, page  # noqa: F401 - one Chromium per session, every folder

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "satellites_env", ROOT / "training"]


def _drop_stale_numba_cache() -> None:
    sources = sorted(p for package in PACKAGES for p in package.rglob("*.py"))
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    stamp = ROOT / "satellites_env" / "__pycache__" / "numba_sources.sha256"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    for package in PACKAGES:
        for cached in [*package.rglob("*.nbi"), *package.rglob("*.nbc")]:
            cached.unlink(missing_ok=True)
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(digest.hexdigest())


_drop_stale_numba_cache()


@pytest.fixture(autouse=True)
def _sigint_untouched():
    found = _restore_sigint()
    if found is not None:
        pytest.fail(
            f"SIGINT's handler was {found!r} before this test: a fixture or an earlier "
            f"test's teardown changed it"
        )
    yield
    left = _restore_sigint()
    if left is not None:
        pytest.fail(f"the test left SIGINT's handler at {left!r}")


def _restore_sigint():
    """Put Python's own SIGINT handler back; return the handler found there, or None when it
    was Python's own."""
    found = signal.getsignal(signal.SIGINT)
    if found is signal.default_int_handler:
        return None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return found
