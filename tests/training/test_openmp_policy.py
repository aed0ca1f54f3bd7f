"""OMP_WAIT_POLICY is the entry points' setting (`configure_threads`), never an import's:
importing `satellites_env` or `training` changes no environment variable, the `satellites`
commands set PASSIVE (numba's idle threads sleep), and the trainer's commands import torch
before that: torch's OpenMP reads the variable once, at import, and PASSIVE made the
AlphaZero learner's two-thread gradient steps about 1.5 times slower."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

IMPORTS = """
import os
# gymnasium and pettingzoo (the environment's bases) set these two when they are imported
THEIRS = {"PYGAME_HIDE_SUPPORT_PROMPT", "SDL_AUDIODRIVER"}
def ours():
    return {k: v for k, v in os.environ.items() if k not in THEIRS}
before = ours()
import satellites_env, satellites_env.cli, satellites_env.core.batch
import training, training.train, training.exploit, training.agents
assert ours() == before, set(ours().items()) ^ set(before.items())
print("unchanged")
"""

# Records OMP_WAIT_POLICY at the moment `import torch` starts, then runs `satellites train`
# on a config that does not exist: the command fails after the entry point's settings.
TRAIN = """
import importlib.abc, os, sys
seen = []
class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch":
            seen.append(os.environ.get("OMP_WAIT_POLICY"))
        return None
sys.meta_path.insert(0, Spy())
from satellites_env.cli import main
assert main(["train", "--config", "no-such-config.yaml"]) == 2
print(seen[0], os.environ.get("OMP_WAIT_POLICY"))
"""

DEMO = """
import contextlib, io, os
from satellites_env.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    assert main(["demo", "--max-moves", "2"]) == 0
print(os.environ.get("OMP_WAIT_POLICY"))
"""

# The trainer and a Ray actor's worker are entry points of their own (the Python API, a
# process Ray starts): each sets the policy after torch's import.
TRAINER = """
import os, sys, tempfile
from training.common.config import config_from_dict
from training.ppo.trainer import PPOTrainer
config = config_from_dict({"threads": 1, "model": {"channels": 8, "blocks": 1}})
assert "torch" in sys.modules and os.environ.get("OMP_WAIT_POLICY") == %r
PPOTrainer(config, tempfile.mkdtemp()).close()
print(os.environ.get("OMP_WAIT_POLICY"))
"""

WORKER = """
import os
from training.distributed.pool import Worker
Worker(lambda worker, seed: None, 0, 0, 0, threads=1)
print(os.environ.get("OMP_WAIT_POLICY"))
"""


def run_python(code: str, user_policy: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if user_policy:
        env["OMP_WAIT_POLICY"] = user_policy
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("user_policy", [None, "ACTIVE"])
def test_importing_the_packages_changes_no_environment_variable(user_policy):
    assert run_python(IMPORTS, user_policy).split() == ["unchanged"]


@pytest.mark.parametrize("user_policy", [None, "ACTIVE"])
def test_the_cli_sets_the_engines_policy_unless_the_user_chose_one(user_policy):
    assert run_python(DEMO, user_policy).split() == [user_policy or "PASSIVE"]


@pytest.mark.parametrize("user_policy", [None, "ACTIVE", "PASSIVE"])
def test_train_imports_torch_with_the_users_policy_then_sets_the_engines(user_policy):
    seen_by_torch, after = run_python(TRAIN, user_policy).split()
    assert seen_by_torch == str(user_policy)  # None when the user set nothing
    assert after == (user_policy or "PASSIVE")  # numba's threads still sleep


@pytest.mark.parametrize("user_policy", [None, "ACTIVE"])
def test_the_trainer_and_a_ray_actors_worker_set_the_engines_policy(user_policy):
    assert run_python(TRAINER % user_policy, user_policy).split() == [user_policy or "PASSIVE"]
    assert run_python(WORKER, user_policy).split() == [user_policy or "PASSIVE"]
