"""Test-session set-up shared by every test folder.

numba's on-disk cache (`cache=True`) is keyed on each kernel's own source file, but a cached
kernel also holds the compiled code of the kernels it calls and the module constants it reads.
After an edit to one module (say the work-buffer rows in `core/rules.py`), kernels cached from
other modules would run stale code. So: when the code of a kernel module (one that uses
`njit`) or of a package module it imports changed since the cache was written, drop the whole
cache before the tests import anything. Code means the syntax tree without docstrings, so an
edited docstring or comment, or an edit outside those modules, keeps the compiled kernels.

Markers (registered in pyproject.toml; select with `-m`): `browser` for the tests that use the
Chromium fixtures (tests/browser.py), `docs` for tests/docs/ and the docs' and README's examples,
`slow` for the tests that tests/markers.py lists (over about 5 s) and every Ray test, `ray` for
the Ray tests (marked in their modules).

Every test starts and ends with Python's own Ctrl-C handler: a test (or a fixture) that leaves
SIGINT changed fails at once, instead of a later test in the same worker, or the processes it
starts (they inherit an ignored SIGINT), failing for no reason of its own.
"""

from __future__ import annotations

import ast
import hashlib
import signal
from pathlib import Path

import pytest
from browser import browser, page  # noqa: F401 - one Chromium per session, every folder
from markers import DOCS, SLOW

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "satellites_env", ROOT / "training"]


def _code(path: Path) -> str:
    """The module's syntax tree without docstrings (comments never reach the tree)."""
    tree = ast.parse(path.read_bytes())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0] = ast.Pass()
    return ast.dump(tree)


def _module_path(name: str) -> Path | None:
    parts = name.split(".")
    for candidate in (
        ROOT.joinpath(*parts, "__init__.py"),
        ROOT.joinpath(*parts[:-1], parts[-1] + ".py"),
    ):
        if candidate.is_file():
            return candidate
    return None


def _kernel_sources() -> list[Path]:
    """Modules that define kernels, and the package modules they import, transitively."""
    names = {p.name for p in PACKAGES}
    todo = [p for package in PACKAGES for p in package.rglob("*.py") if "njit" in p.read_text()]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_bytes())):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # `from package import module` names the module, not the package's __init__
                found = [
                    f"{base}.{alias.name}" if _module_path(f"{base}.{alias.name}") else base
                    for alias in node.names
                ]
            for name in found:
                if name.split(".")[0] in names and (module := _module_path(name)):
                    todo.append(module)
    return sorted(seen)


def _drop_stale_numba_cache() -> None:
    digest = hashlib.sha256()
    for path in _kernel_sources():
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(_code(path).encode())
    stamp = ROOT / "satellites_env" / "__pycache__" / "numba_sources.sha256"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    for package in PACKAGES:
        for cached in [*package.rglob("*.nbi"), *package.rglob("*.nbc")]:
            cached.unlink(missing_ok=True)
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(digest.hexdigest())


_drop_stale_numba_cache()


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
