"""Layers point one way: `satellites_env` never imports `training` or `torch`."""

from __future__ import annotations

import subprocess
import sys

PROBE = r"""
import importlib, pkgutil, sys
import satellites_env
names = [m.name for m in pkgutil.walk_packages(satellites_env.__path__, "satellites_env.")]
for name in names:
    if name != "satellites_env.__main__":
        importlib.import_module(name)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("training", "torch"))
print(len(names), leaked)
assert not leaked, leaked
"""


def test_satellites_env_imports_neither_training_nor_torch():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout
    count = int(result.stdout.split()[0])
    assert count >= 15  # every module was walked, not an empty package
