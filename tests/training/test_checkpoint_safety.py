"""Checkpoints hold data only: nothing in a file runs when it is loaded, every bad file is a
CheckpointError, and a `checkpoint:PATH` agent plays with one torch thread."""

from __future__ import annotations

import io
import pickle
import tempfile
import warnings
from pathlib import Path

import pytest
import torch
from checkpoint_fuzz import mutated, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_training import TINY
from test_training import tiny_config as _tiny_config

from satellites_env.agents import make_agent
from satellites_env.core import Game
from training.common.checkpoint import (
    CheckpointError,
    load_checkpoint,
    load_network,
    save_checkpoint,
)
from training.common.config import ConfigError, config_from_dict
from training.common.network import PolicyValueNet
from training.common.policy_agent import THREADS_VARIABLE, PolicyAgent
from training.ppo.prior import network_from_shape
from training.ppo.trainer import PPOTrainer


def tiny_config(**overrides):
    """The suite's tiny config with short evaluation games."""
    return _tiny_config(
        **{
            "eval": {
                "every": 2,
                "games": 2,
                "opponents": ["random"],
                "final": {"random": 2},
                "max_moves": 60,
            },
            **overrides,
        }
    )


class CreatesAFile:
    """Unpickling this object opens (creates) `path`: what a malicious checkpoint would do."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def small_net() -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet(8, 1)


def net_payload(net: PolicyValueNet | None = None) -> dict:
    net = net or small_net()
    return {"model": net.state_dict(), "model_shape": net.shape}


def malicious_files(folder: Path, marker: Path) -> dict[str, Path]:
    """A real checkpoint with a code payload inside, a bare pickle, and a legacy torch file."""
    files = {}
    files["checkpoint with payload"] = save_checkpoint(
        folder / "payload.pt", {**net_payload(), "notes": CreatesAFile(marker)}
    )
    bare = folder / "bare.pt"
    bare.write_bytes(pickle.dumps(CreatesAFile(marker)))
    files["bare pickle"] = bare
    legacy = folder / "legacy.pt"
    torch.save(
        {"format": "satellites-checkpoint", "x": CreatesAFile(marker)},
        legacy,
        _use_new_zipfile_serialization=False,
    )
    files["legacy torch file"] = legacy
    return files


def test_a_checkpoint_that_would_run_code_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "created-by-the-payload"
    for what, path in malicious_files(tmp_path, marker).items():
        # Unsafe loading would really create the file: the test payload is live.
        with pytest.raises(CheckpointError, match=r"refused|corrupt"):
            load_checkpoint(path)
        assert not marker.exists(), what
        with pytest.raises(CheckpointError):
            make_agent(f"checkpoint:{path}")  # the agent spec (CLI, gym opponent, arena)
        assert not marker.exists(), what
    # Proof that the payload is live: the unsafe loader would have run it.
    torch.load(tmp_path / "payload.pt", weights_only=False)
    assert marker.exists()


def test_resume_and_config_opponents_use_the_safe_loader(tmp_path):
    marker = tmp_path / "created-by-the-payload"
    evil = malicious_files(tmp_path, marker)["checkpoint with payload"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoint.pt").write_bytes(evil.read_bytes())
    with pytest.raises(CheckpointError, match="refused"):
        PPOTrainer(tiny_config(), run, resume=True)
    with pytest.raises(ConfigError, match=r"eval.opponents\[1\].*refused"):
        config_from_dict({**TINY, "eval": {"opponents": ["random", f"checkpoint:{evil}"]}})
    with pytest.raises(ConfigError, match=r"selfplay.baseline_opponent.*refused"):
        config_from_dict({**TINY, "selfplay": {"baseline_opponent": f"checkpoint:{evil}"}})
    assert not marker.exists()


def plain_types(value, where="payload"):
    """Every leaf of a payload: the data types a checkpoint may hold."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, (str, int)), f"{where} key {key!r}"
            plain_types(item, f"{where}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            plain_types(item, f"{where}[{i}]")
    else:
        assert value is None or isinstance(value, (str, int, float, bool, torch.Tensor)), (
            f"{where} is a {type(value).__name__}"
        )


def test_a_training_checkpoint_holds_only_tensors_and_plain_data(tmp_path):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    trainer.iterate()
    trainer.history.append(trainer.evaluate())
    path = trainer.save()
    plain_types(torch.load(path, weights_only=True))
    resumed = PPOTrainer(tiny_config(), tmp_path / "run", resume=True)
    assert resumed.counters.iterations == 1 and len(resumed.history) == 1


@pytest.mark.parametrize(
    "key, value, message",
    [
        (("model_shape", "channels"), "x", "model_shape.channels must be an int"),
        (("model_shape", "channels"), 12, "multiple of 8"),
        (("model_shape", "blocks"), -1, r"model_shape.blocks must be in \[1"),
        (("model_shape", "blocks"), 10**9, r"model_shape.blocks must be in \[1"),
        (("model_shape", "lookahead"), float("nan"), "lookahead must be a finite number"),
        (("model_shape", "norm"), "batch", "model_shape.norm must be one of group, none"),
        (("model_shape", "norm"), ["none"], "model_shape.norm must be one of group, none"),
        (("model_shape",), [8, 1], "model_shape must be a mapping"),
        (("model",), {"stem.0.weight": 3}, "model must map parameter names to tensors"),
        (("model",), {}, "weights do not fit"),
        (("version",), "1", "format version '1'"),
        (("planes",), torch.tensor([22, 22]), "observation planes"),
        (("format",), None, "not a satellites checkpoint"),
    ],
)
def test_metadata_of_the_wrong_type_or_range_is_a_checkpoint_error(tmp_path, key, value, message):
    payload = {
        "format": "satellites-checkpoint",
        "version": 1,
        "planes": 22,
        "actions": 3217,
        **net_payload(),
    }
    target = payload
    for part in key[:-1]:
        target[part] = dict(target[part])
        target = target[part]
    target[key[-1]] = value
    path = tmp_path / "edited.pt"
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match=message):
        load_network(path, build=network_from_shape)
    with pytest.raises(CheckpointError):
        make_agent(f"checkpoint:{path}")


def test_nan_weights_are_refused(tmp_path):
    net = small_net()
    with torch.no_grad():
        next(net.parameters()).fill_(float("nan"))
    path = save_checkpoint(tmp_path / "nan.pt", net_payload(net))
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        load_checkpoint(path)


def test_a_directory_or_a_missing_file_is_named_as_such(tmp_path):
    with pytest.raises(CheckpointError, match="is a directory"):
        load_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match="is a directory"):
        make_agent(f"checkpoint:{tmp_path}")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.pt")


# --------------------------------------------------------------------------- sampling


def test_checkpoint_specs_pick_argmax_or_a_sample_at_a_temperature(tmp_path):
    path = save_checkpoint(tmp_path / "policy.pt", net_payload())
    for suffix, sample, temperature in [
        ("", False, 1.0),
        (":greedy", False, 1.0),
        (":sample", True, 1.0),
        (":sample=0.5", True, 0.5),
        (":sample=2", True, 2.0),
    ]:
        agent = make_agent(f"checkpoint:{path}{suffix}", seed=0)
        assert (agent.sample, agent.temperature) == (sample, temperature), suffix
        assert agent.spec == f"checkpoint:{path}{suffix}"
    game = Game.new(seed=3)
    legal = set(game.legal_actions())
    moves = {
        temperature: [
            make_agent(f"checkpoint:{path}:sample={temperature}", seed=s).act(game)
            for s in range(40)
        ]
        for temperature in (1e-300, 0.01, 100, 1e300)
    }
    assert all(set(played) <= legal for played in moves.values())
    # a cold sample is the most likely action; a hot one spreads over many legal actions
    assert set(moves[0.01]) == set(moves[1e-300]) == {make_agent(f"checkpoint:{path}").act(game)}
    assert len(set(moves[100])) > 10
    with pytest.raises(ValueError, match="temperature"):
        PolicyAgent(small_net(), sample=True, temperature=0)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(
        [
            "sample=",
            "sample=0",
            "sample=-1",
            "sample=nan",
            "sample=inf",
            "sample=x",
            "sample=1e999",
            "sample= ",
        ]
    )
    | st.text(st.characters(blacklist_characters=":"), max_size=8).map(  # ':' splits a spec
        lambda t: "sample=" + t
    )
)
def test_a_bad_sampling_temperature_is_a_clear_error(tmp_path, tail):
    path = save_checkpoint(tmp_path / "policy.pt", net_payload())
    try:
        temperature = float(tail[len("sample=") :])
    except ValueError:
        temperature = None
    if temperature is not None and 0 < temperature < float("inf"):
        assert make_agent(f"checkpoint:{path}:{tail}").temperature == temperature
    else:
        with pytest.raises(CheckpointError, match="temperature must be a finite number above 0"):
            make_agent(f"checkpoint:{path}:{tail}")


# --------------------------------------------------------------------------- threads


def test_a_checkpoint_agent_plays_with_one_torch_thread_and_restores_the_setting(
    tmp_path, monkeypatch
):
    path = save_checkpoint(tmp_path / "policy.pt", net_payload())
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    agent = make_agent(f"checkpoint:{path}", seed=0)
    assert agent.threads == 1
    seen = []
    forward = agent.net.masked_forward
    monkeypatch.setattr(
        agent.net, "masked_forward", lambda *a: seen.append(torch.get_num_threads()) or forward(*a)
    )
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        game = Game.new(seed=0)
        game.play(agent.act(game))
        assert seen == [1] and torch.get_num_threads() == 2  # the process keeps its setting
    finally:
        torch.set_num_threads(before)
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    assert make_agent(f"checkpoint:{path}").threads == 2
    assert PolicyAgent(small_net(), threads=3).threads == 3
    monkeypatch.setenv(THREADS_VARIABLE, "many")
    with pytest.raises(ValueError, match=THREADS_VARIABLE):
        make_agent(f"checkpoint:{path}")


# --------------------------------------------------------------------------- fuzzing


def _checked_load(data: bytes) -> None:
    """Load bytes as a checkpoint file and build its network: only CheckpointError may escape."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.pt"
        path.write_bytes(data)
        try:
            load_network(path, build=network_from_shape)
        except CheckpointError:
            pass


REAL = io.BytesIO()
torch.save(
    {
        "format": "satellites-checkpoint",
        "version": 1,
        "planes": 22,
        "actions": 3217,
        **net_payload(),
    },
    REAL,
)
REAL_BYTES = REAL.getvalue()
FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(st.binary(max_size=4096))
def test_fuzz_random_bytes_are_checkpoint_errors(data):
    _checked_load(data)


@FUZZ
@given(st.integers(0, len(REAL_BYTES) - 1), st.binary(max_size=64), st.booleans())
def test_fuzz_truncated_or_overwritten_real_checkpoints_are_checkpoint_errors(cut, noise, truncate):
    if truncate:
        data = REAL_BYTES[:cut]
    else:
        data = REAL_BYTES[:cut] + noise + REAL_BYTES[cut + len(noise) :]
    _checked_load(data)


PATHS = [
    ("format",),
    ("version",),
    ("planes",),
    ("actions",),
    ("model",),
    ("model_shape",),
    ("model_shape", "channels"),
    ("model_shape", "blocks"),
    ("model_shape", "lookahead"),
    ("model", "stem.0.weight"),
    ("model", "value_head.2.bias"),
]


@FUZZ
@given(st.sampled_from(PATHS), values, st.booleans())
def test_fuzz_real_checkpoints_with_mutated_metadata_are_checkpoint_errors(path, value, delete):
    payload = {
        "format": "satellites-checkpoint",
        "version": 1,
        "planes": 22,
        "actions": 3217,
        **net_payload(),
    }
    buffer = io.BytesIO()
    torch.save(mutated(payload, path, value, delete), buffer)
    _checked_load(buffer.getvalue())


_RUN = {}


def _run_checkpoint() -> dict:
    """A real training checkpoint (one update, one evaluation), made once."""
    if not _RUN:
        with tempfile.TemporaryDirectory() as folder:
            trainer = PPOTrainer(tiny_config(), Path(folder) / "run")
            trainer.iterate()
            trainer.history.append(trainer.evaluate())
            _RUN["payload"] = torch.load(trainer.save(), weights_only=True)
    return _RUN["payload"]


def test_optimizer_moments_of_the_wrong_shape_or_not_finite_are_refused_at_resume(tmp_path):
    """torch's load_state_dict takes Adam moments of any shape; the first update would fail."""
    payload = _run_checkpoint()
    run = tmp_path / "run"
    run.mkdir()
    for name, bad, message in (
        ("exp_avg", torch.zeros(5), r"'exp_avg' of parameter 0 has shape"),
        ("exp_avg_sq", None, r"'exp_avg_sq' must be a finite tensor"),
    ):
        optimizer = {**payload["optimizer"], "state": dict(payload["optimizer"]["state"])}
        slot = dict(optimizer["state"][0])
        slot[name] = bad if bad is not None else torch.full_like(slot[name], float("nan"))
        optimizer["state"][0] = slot
        torch.save(mutated(payload, ("optimizer",), optimizer, False), run / "checkpoint.pt")
        with pytest.raises(CheckpointError, match=message):
            PPOTrainer(tiny_config(), run, resume=True)


RUN_PATHS = [
    ("counters",),
    ("counters", "steps"),
    ("counters", "seconds"),
    ("history",),
    ("pool",),
    ("optimizer",),
    ("optimizer", "state"),
    ("optimizer", "param_groups"),
    ("rng",),
    ("rng", "selfplay"),
    ("rng", "torch"),
    ("rng", "python"),
    ("rng", "update_torch"),
    ("config",),
    ("config", "seed"),
    ("finished",),
    ("config_changes",),
    ("model_shape", "channels"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(RUN_PATHS), values, st.booleans())
def test_fuzz_resuming_from_a_mutated_run_checkpoint_is_a_checkpoint_error(path, value, delete):
    payload = mutated(_run_checkpoint(), path, value, delete)
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "run"
        run.mkdir()
        torch.save(payload, run / "checkpoint.pt")
        try:
            trainer = PPOTrainer(tiny_config(), run, resume=True)
        except CheckpointError:
            return
        except ValueError as error:  # a config mismatch: a RunError naming the keys
            assert "config differs" in str(error), error
            return
        trainer.state_payload()  # a state that was accepted is whole


@pytest.mark.parametrize("dtype", [torch.int64, torch.complex64, torch.float64])
def test_weights_of_another_dtype_are_refused(tmp_path, dtype):
    payload = net_payload()
    name = next(iter(payload["model"]))
    payload["model"][name] = payload["model"][name].to(dtype)
    path = save_checkpoint(tmp_path / "odd.pt", payload)
    with pytest.raises(CheckpointError, match=rf"{dtype!s} tensor; the networks hold float32"):
        load_network(path, build=network_from_shape)


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("counters", "iterations"), 10**30, r"counters\.iterations must be a number in \[0, "),
        (("finished",), "yes", "finished must be true or false"),
        (("config_changes",), [{"changes": "seed"}], "config_changes must be a list"),
    ],
)
def test_absurd_run_fields_are_refused_at_resume(tmp_path, path, value, message):
    run = tmp_path / "run"
    run.mkdir()
    torch.save(mutated(_run_checkpoint(), path, value, False), run / "checkpoint.pt")
    with pytest.raises(CheckpointError, match=message):
        PPOTrainer(tiny_config(), run, resume=True)


def test_a_failing_final_evaluation_keeps_the_trained_network(tmp_path, monkeypatch):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    real = trainer.evaluate

    def failing(*, final=False, **options):
        if final:
            raise RuntimeError("an opponent failed")
        return real(final=final, **options)

    monkeypatch.setattr(trainer, "evaluate", failing)
    with pytest.raises(RuntimeError):
        trainer.run()
    saved = load_checkpoint(tmp_path / "run" / "final.pt")
    assert all(torch.equal(saved["model"][k], v) for k, v in trainer.net.state_dict().items())


# --------------------------------------------------------------------------- tensor kinds

LAYOUTS = ["dense", "strided", "sparse_coo", "sparse_csr", "meta", "quantized", "nested"]
DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.uint8,
    torch.bool,
    torch.complex64,
]


def tensor_of(
    like: torch.Tensor, layout: str, dtype: torch.dtype, shape: tuple[int, ...] | None
) -> torch.Tensor:
    """A tensor with `like`'s values (or zeros of `shape`), of `dtype` and `layout`."""
    base = like.clone() if shape is None else torch.zeros(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on beta and deprecated layouts
        return _tensor_of(base, layout, dtype)


def _tensor_of(base: torch.Tensor, layout: str, dtype: torch.dtype) -> torch.Tensor:
    if layout == "quantized":
        return torch.quantize_per_tensor(base.float(), 0.1, 0, torch.qint8)
    base = base.to(dtype)
    if layout == "strided":  # the same values, every other element of a larger storage
        return torch.stack([base, base], -1)[..., 0]
    if layout == "sparse_coo":
        return base.to_sparse()
    if layout == "sparse_csr":
        return base.reshape(base.shape[0] if base.dim() else 1, -1).to_sparse_csr()
    if layout == "meta":
        return torch.empty(base.shape, dtype=dtype, device="meta")
    if layout == "nested":
        return torch.nested.nested_tensor([base.flatten(), base.flatten()[:1]])
    return base


def _loaders(path: Path):
    """Every way a checkpoint file becomes a network: the file loader with each learner's
    network, and the agent specs (CLI, configs, serve and demo all use them)."""
    yield lambda: load_network(path, build=network_from_shape)
    yield lambda: load_network(path)
    yield lambda: make_agent(f"checkpoint:{path}")
    yield lambda: make_agent(f"az:{path}:2")


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.sampled_from(LAYOUTS),
    st.sampled_from(DTYPES),
    st.none() | st.lists(st.integers(0, 9), max_size=3).map(tuple),
    st.integers(0, 7),
    st.sampled_from(["replace", "missing", "extra"]),
)
def test_fuzz_weights_of_any_layout_dtype_or_shape_load_or_name_the_file(
    tmp_path, layout, dtype, shape, which, change
):
    payload = net_payload()
    names = list(payload["model"])
    name = names[which % len(names)]
    like = payload["model"][name]
    try:
        tensor = tensor_of(like, layout, dtype, shape)
    except (RuntimeError, ValueError):
        return  # a kind torch cannot make of this dtype or shape
    model = dict(payload["model"])
    if change == "missing":
        del model[name]
    elif change == "extra":
        model["extra." + name] = tensor
    else:
        model[name] = tensor
    path = tmp_path / "weights of a kind.pt"
    torch.save(
        {
            "format": "satellites-checkpoint",
            "version": 1,
            "planes": 22,
            "actions": 3217,
            "model": model,
            "model_shape": payload["model_shape"],
        },
        path,
    )
    plain = layout in ("dense", "strided") and dtype == torch.float32
    fits = change == "replace" and (shape is None or tuple(shape) == tuple(like.shape))
    for load in _loaders(path):
        if plain and fits:
            load()
            continue
        with pytest.raises(CheckpointError) as caught:
            load()
        message = str(caught.value)
        assert str(path) in message and "\n" not in message and len(message) < 600, message


def test_non_contiguous_float32_weights_load_with_their_values(tmp_path):
    """Any strides are fine: the weights are copied into the network."""
    net = small_net()
    model = {k: tensor_of(v, "strided", torch.float32, None) for k, v in net.state_dict().items()}
    assert not all(t.is_contiguous() for t in model.values())
    path = save_checkpoint(tmp_path / "strided.pt", {"model": model, "model_shape": net.shape})
    for load in _loaders(path):
        loaded = load()
        state = (loaded.net if hasattr(loaded, "net") else loaded).state_dict()
        assert all(torch.equal(state[k], v) for k, v in net.state_dict().items())


@pytest.mark.parametrize(
    "layout, message",
    [
        ("meta", "on the 'meta' device"),
        ("sparse_coo", "sparse_coo tensor, not a dense one"),
        ("sparse_csr", "sparse_csr tensor, not a dense one"),
        ("quantized", "quantized"),
    ],
)
def test_a_tensor_of_another_kind_anywhere_in_a_run_checkpoint_is_refused(
    tmp_path, layout, message
):
    """Not only the weights: the optimizer's moments, RNG states, the replay buffer."""
    payload = _run_checkpoint()
    moment = payload["optimizer"]["state"][0]["exp_avg"]
    optimizer = {**payload["optimizer"], "state": dict(payload["optimizer"]["state"])}
    optimizer["state"][0] = {
        **optimizer["state"][0],
        "exp_avg": tensor_of(moment, layout, torch.float32, None),
    }
    run = tmp_path / "run"
    run.mkdir()
    torch.save(mutated(payload, ("optimizer",), optimizer, False), run / "checkpoint.pt")
    field = r"optimizer\['state'\]\[0\]\['exp_avg'\]"
    with pytest.raises(
        CheckpointError, match=rf"checkpoint '{run / 'checkpoint.pt'}': {field} is .*{message}"
    ):
        PPOTrainer(tiny_config(), run, resume=True)


def test_a_weight_of_the_wrong_shape_names_the_file_for_every_agent(tmp_path):
    payload = net_payload()
    payload["model"]["stem.0.weight"] = torch.zeros(3)
    path = save_checkpoint(tmp_path / "wrong shape.pt", payload)
    for load in _loaders(path):
        with pytest.raises(
            CheckpointError,
            match=rf"checkpoint '{path}': model\['stem.0.weight'\] "
            rf"has shape \(3,\), the network .* needs "
            rf"\(8, 22, 3, 3\)",
        ):
            load()


@pytest.mark.parametrize("spec", ["checkpoint:{}", "az:{}:2"])
def test_the_command_line_says_one_line_naming_the_file(tmp_path, capsys, spec):
    from satellites_env import cli

    payload = net_payload()
    payload["model"]["stem.0.weight"] = payload["model"]["stem.0.weight"].to_sparse()
    path = save_checkpoint(tmp_path / "sparse.pt", payload)
    assert cli.main(["evaluate", "--agents", spec.format(path), "random", "--games", "1"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error[-1].startswith("error: ") and str(path) in error[-1], error
    assert "internal error" not in "\n".join(error)


@pytest.mark.parametrize(
    "entry", ["exploit --target", "exploit --init", "config opponent", "config init"]
)
def test_every_entry_point_names_the_file_of_a_bad_tensor(tmp_path, capsys, entry):
    from satellites_env import cli

    payload = net_payload()
    payload["model"]["stem.0.weight"] = torch.empty(8, 22, 3, 3, device="meta")
    path = save_checkpoint(tmp_path / "meta weights.pt", payload)
    if entry.startswith("exploit"):
        target, init = (
            (f"checkpoint:{path}", None) if entry.endswith("target") else ("greedy", str(path))
        )
        argv = ["exploit", "--target", target, "--minutes", "1", "--out", str(tmp_path / "x")]
        assert cli.main(argv + (["--init", init] if init else [])) == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.startswith("error: ") and str(path) in error and "meta" in error, error
        assert not (tmp_path / "x").exists()
    elif entry == "config opponent":
        with pytest.raises(ConfigError, match=rf"{path}.*on the 'meta' device"):
            config_from_dict({**TINY, "eval": {"opponents": ["random", f"checkpoint:{path}"]}})
    else:  # the AlphaZero config's `init` network
        with pytest.raises(ConfigError, match=rf"init: .*{path}.*on the 'meta' device"):
            config_from_dict(
                {"learner": "alphazero", "init": str(path), "model": {"channels": 8, "blocks": 1}}
            )
