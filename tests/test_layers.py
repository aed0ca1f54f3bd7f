"""Layers point one way: each part of the two packages imports only what the architecture page
(docs/training/architecture.md) lets it, `satellites_env` never imports `training` or `torch`,
nothing outside `satellites_env/core/` reaches the rules kernels except through the engine
API, no module takes another package's private names, and the modules' imports form no
circle."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("satellites_env", "training")
ARCHITECTURE = ROOT / "docs" / "training" / "architecture.md"

PROBE = r"""
import importlib, pkgutil, sys
import satellites_env
from satellites_env.agents import registered_names
names = [m.name for m in pkgutil.walk_packages(satellites_env.__path__, "satellites_env.")]
for name in names:
    if name != "satellites_env.__main__":
        importlib.import_module(name)
registered_names()  # looking the registered specs up loads none of them
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("training", "torch"))
print(len(names), leaked)
assert not leaked, leaked
"""


def modules() -> dict[str, Path]:
    """Every module of the two packages, by dotted name (packages by their own name)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path) -> list[tuple[str, str]]:
    """(module, imported name or "") of every import in the file, function bodies included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = (
                package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            )
            module = ".".join(base + ([node.module] if node.module else []))
            found += [(module, alias.name) for alias in node.names]
    return found


def allowed_imports() -> dict[str, set[str]]:
    """The architecture page's table: each part and the parts (and `torch`) it may import."""
    text = ARCHITECTURE.read_text()
    section = text.split("## The parts and what each may import", 1)[1].split("\n## ", 1)[0]
    rules = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[\w.]+`", cells[0]):
            rules[cells[0].strip("`")] = set(re.findall(r"`([\w.]+)`", cells[2]))
    return rules


def part_of(name: str, parts: set[str]) -> str | None:
    """The longest part that `name` is, or lies under."""
    owners = [p for p in parts if name == p or name.startswith(p + ".")]
    return max(owners, key=len, default=None)


def test_the_architecture_page_names_every_module_and_only_known_parts():
    rules = allowed_imports()
    assert len(rules) >= 8, "the architecture page's table was not found"
    for part, allowed in rules.items():
        assert part not in allowed, part
        assert allowed <= set(rules) | {"torch"}, (part, allowed - set(rules))
    for name in modules():
        assert part_of(name, set(rules)) is not None, f"{name} is in no part of {ARCHITECTURE}"


def test_every_import_is_one_the_architecture_page_allows():
    rules = allowed_imports()
    parts = set(rules)
    known = modules()
    wrong = []
    for name, path in known.items():
        own = part_of(name, parts)
        assert own is not None
        for module, imported in imports(name, path):
            full = f"{module}.{imported}"
            target = full if full in known else module
            other = "torch" if target.split(".")[0] == "torch" else part_of(target, parts)
            if other not in (None, own) and other not in rules[own]:
                wrong.append(f"{name} imports {target} ({own} may not import {other})")
    assert not wrong, "\n".join(wrong)


def test_satellites_env_imports_neither_training_nor_torch():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr + result.stdout
    count = int(result.stdout.split()[0])
    assert count >= 15  # every module was walked, not an empty package


def test_no_import_of_training_in_satellites_env_even_a_lazy_one():
    for name, path in modules().items():
        if name.startswith("satellites_env"):
            for module, _ in imports(name, path):
                assert module.split(".")[0] not in ("training", "torch"), (name, module)


def test_only_core_imports_the_rules_kernels():
    private = ("satellites_env.core.rules", "satellites_env.core.scoring")
    for name, path in modules().items():
        if name.startswith("satellites_env.core"):
            continue
        for module, imported in imports(name, path):
            target = f"{module}.{imported}" if imported else module
            assert not target.startswith(private) and module not in private, (name, module)


def package_of(name: str, known: dict[str, Path]) -> str:
    return name if known[name].name == "__init__.py" else name.rpartition(".")[0]


def test_no_module_takes_another_packages_private_names():
    known = modules()
    for name, path in known.items():
        for module, imported in imports(name, path):
            if imported.startswith("_") and module in known:
                assert package_of(module, known) == package_of(name, known), (
                    name,
                    module,
                    imported,
                )


def test_the_imports_form_no_circle():
    known = modules()
    edges = {}
    for name, path in known.items():
        targets = set()
        for module, imported in imports(name, path):
            full = f"{module}.{imported}"
            target = full if full in known else module
            if target in known and target != name:
                targets.add(target)
        edges[name] = targets
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            assert state.get(target) != 1, " -> ".join([*path, node, target])
            if target not in state:
                visit(target, [*path, node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
