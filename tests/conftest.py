"""Test-session set-up shared by every test folder.

Before the tests import anything, numba's cache is dropped if kernel code changed
(tests/numba_cache.py says when).

Markers (registered in pyproject.toml; select with `-m`): `browser` for the tests that use the
Chromium fixtures (tests/browser.py), `docs` for tests/docs/ and the docs' and README's examples,
`slow` for the tests that tests/markers.py lists (over about 5 s) and every Ray test, `ray` for
the Ray tests (marked in their modules).

Every test starts and ends with Python's own Ctrl-C handler: a test (or a fixture) that leaves
SIGINT changed fails at once, instead of a later test in the same worker, or the processes it
starts (they inherit an ignored SIGINT), failing for no reason of its own. A session started
with SIGINT or SIGHUP ignored (a shell's background job, nohup) gets the usual handlers first,
so that the tests' own processes meet the signals as a user's commands do.
"""

from __future__ import annotations

import signal

import pytest
from browser import browser, page  # noqa: F401 - one Chromium per session, every folder
from markers import DOCS, SLOW
from numba_cache import drop_stale_numba_cache

drop_stale_numba_cache()
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by what it needs or costs (the module docstring's markers)."""
    for item in items:
        node = item.nodeid.removeprefix("tests/")
        if {"browser", "page"} & set(item.fixturenames):
            item.add_marker(pytest.mark.browser)
        if node.startswith(DOCS):
            item.add_marker(pytest.mark.docs)
        if item.get_closest_marker("ray") or any(
            node == slow or node.startswith((f"{slow}::", f"{slow}[")) for slow in SLOW
        ):
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture
def plugin(monkeypatch):
    """A run-time registered agent kind `plug` (another package's, which may unpickle): the
    arguments of its builds, in order (empty: never built)."""
    from satellites_env import agents

    built: list[str] = []

    def factory(argument, seed):
        built.append(argument)
        return agents.RandomAgent(seed)

    monkeypatch.setitem(agents._registered, "plug", factory)
    return built
