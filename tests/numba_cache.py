"""The numba cache rule of the test session (tests/conftest.py runs it before any import).

numba's on-disk cache (`cache=True`) is keyed on each kernel's own source file, but a cached
kernel also holds the compiled code of the kernels it calls and the module constants it reads.
So the whole cache is dropped when the code of a kernel module (one that uses `njit`) or of a
package module it imports changed since the cache was written. Code means the syntax tree
without docstrings: an edited docstring or comment, or an edit outside those modules, keeps the
compiled kernels.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "satellites_env", ROOT / "training"]


def code(path: Path) -> str:
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


def module_path(name: str) -> Path | None:
    parts = name.split(".")
    for candidate in (
        ROOT.joinpath(*parts, "__init__.py"),
        ROOT.joinpath(*parts[:-1], parts[-1] + ".py"),
    ):
        if candidate.is_file():
            return candidate
    return None


def kernel_sources() -> list[Path]:
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
                    f"{base}.{alias.name}" if module_path(f"{base}.{alias.name}") else base
                    for alias in node.names
                ]
            for name in found:
                if name.split(".")[0] in names and (module := module_path(name)):
                    todo.append(module)
    return sorted(seen)


def drop_stale_numba_cache() -> None:
    digest = hashlib.sha256()
    for path in kernel_sources():
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(code(path).encode())
    stamp = ROOT / "satellites_env" / "__pycache__" / "numba_sources.sha256"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    for package in PACKAGES:
        for cached in [*package.rglob("*.nbi"), *package.rglob("*.nbc")]:
            cached.unlink(missing_ok=True)
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(digest.hexdigest())
