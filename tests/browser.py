"""Headless Chromium for the browser tests (`tests/web`, `tests/docs`): the `browser` and `page`
fixtures, registered once by `tests/conftest.py` so a test session (each pytest-xdist worker)
drives one Playwright instance: a second sync Playwright in the same process would find the
first one's event loop running and refuse to start.

The browser is Debian's `chromium` (`/usr/bin/chromium`, or `SATELLITES_CHROMIUM`), driven by
Playwright through `executable_path`: no browser is downloaded. Without it the browser tests
skip with the reason, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def on_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def find_chromium() -> str | None:
    """The Chromium to drive: SATELLITES_CHROMIUM, /usr/bin/chromium, or one on PATH."""
    for candidate in (
        os.environ.get("SATELLITES_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _unavailable(reason: str):
    if on_ci():
        pytest.fail(
            f"{reason} (CI=true: the browser tests must run; .ci/run installs Debian's chromium)"
        )
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium for the session (Playwright's sync API)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        _unavailable(f"playwright is not installed ({error}); pip install -e '.[dev]'")
    path = find_chromium()
    if path is None:
        _unavailable(
            "no chromium found (/usr/bin/chromium, SATELLITES_CHROMIUM or PATH); "
            "apt-get install chromium"
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh page (its own context: no shared storage) with JavaScript errors collected."""
    context = browser.new_context(viewport={"width": 1180, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()
    assert not page.errors, page.errors
