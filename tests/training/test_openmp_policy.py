"""The learners import torch with the user's OpenMP wait policy, not the engine's PASSIVE one
(training/__init__.py): torch's OpenMP reads the variable once, at import, and PASSIVE made
the AlphaZero learner's two-thread gradient steps about 1.5 times slower."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Records OMP_WAIT_POLICY at the moment `import torch` starts, in a fresh interpreter that
# imports the engine first, as the `satellites` CLI does.
PROBE = """
import importlib.abc, os, sys
seen = []
class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch":
            seen.append(os.environ.get("OMP_WAIT_POLICY"))
        return None
sys.meta_path.insert(0, Spy())
import satellites_env.cli
assert "torch" not in sys.modules
import training
import torch  # already imported by `training` where the engine set the policy
print(seen[0], os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize("user_policy", [None, "ACTIVE", "PASSIVE"])
def test_torch_is_imported_with_the_users_wait_policy_and_the_engines_comes_back(user_policy):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if user_policy:
        env["OMP_WAIT_POLICY"] = user_policy
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    seen_by_torch, after = out.stdout.split()
    assert seen_by_torch == str(user_policy)  # None when the user set nothing
    assert after == (user_policy or "PASSIVE")  # numba's threads still sleep
