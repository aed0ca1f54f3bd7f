"""Fixtures for the web tests: a live server on 127.0.0.1 (the headless Chromium, `browser` and
`page`, is in `tests/browser.py`, one per session for every test folder).

The browser is Debian's `chromium` (`/usr/bin/chromium`, or `SATELLITES_CHROMIUM`), driven by
Playwright through `executable_path`: no browser is downloaded. `.ci/run` installs the package
when it is missing. Without it the browser tests skip with the reason, except under `CI=true`,
where they fail.

Screenshots: the tests save `replay_page.png` and `play_page.png` into a temporary folder;
with `SATELLITES_SCREENSHOTS=DIR` (e.g. `docs`) they go to DIR instead, which is how the
pictures in the README are made (so an ordinary test run never rewrites tracked files).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def screenshot_dir(tmp_path) -> Path:
    folder = os.environ.get("SATELLITES_SCREENSHOTS")
    if folder:
        path = Path(folder)
        path = path if path.is_absolute() else ROOT / path
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path


# --------------------------------------------------------------------------- live server


APPS: dict = {}  # base URL -> the app of a live test server (to look at its game store)


@contextmanager
def live_server(
    opponent: str = "random",
    max_moves: int = 400,
    max_games: int = 200,
    idle_seconds: float = 3600.0,
):
    """The play server of `satellites serve` on 127.0.0.1, a free port, in a thread; yields
    its base URL (ending in /)."""
    import uvicorn

    from satellites_env.web.server import bind, create_app, url_of

    app = create_app(opponent, max_moves, max_games, idle_seconds=idle_seconds)
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    url = url_of(sock)
    APPS[url] = app
    try:
        yield url
    finally:
        APPS.pop(url, None)
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def call(
    url: str,
    method: str = "GET",
    body=None,
    raw: bytes | None = None,
    timeout: float = 30,
    headers: dict | None = None,
) -> tuple[int, dict | str, dict]:
    """(status, JSON answer or text, headers) of one HTTP request to the test server."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, text, headers = response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as error:
        status, text, headers = error.code, error.read().decode(), error.headers
    try:
        return status, json.loads(text), dict(headers)
    except ValueError:
        return status, text, dict(headers)
