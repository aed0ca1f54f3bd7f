"""Batched engine throughput: random legal play at batch 1024, beside OpenSpiel and pgx.

Measures, in one run and on the same machine:

* Satellites' batched engine (`satellites_env.core.batch.BatchedEngine`): positions per
  second of random legal play (sample a legal action per game, step, exact legal masks of the
  next positions, auto-reset), then the same with the observation planes of every position;
  at the chosen numba thread count and at 1 thread;
* where its time goes: sampling, apply (+ status, result and reset), legal masks and
  observation planes, timed kernel by kernel on the same games;
* OpenSpiel's C++ engine through `pyspiel` and pgx (JAX on CPU, `jax.vmap` + `jax.jit`, the
  compile not timed), random legal play of Othello at the same batch size, when installed
  (`pip install -e ".[bench]"`); a missing one is reported as skipped, with the reason.

Why Othello: it is the one board game that both OpenSpiel and pgx ship, so the two peers play
the same game, and its move generation is the closest in kind to ours (rays in 8 directions
from every cell of a small square board, with an exact legal-action mask every step). It is
a lighter game than Satellites (8x8, 65 actions, no group analysis; ours is 10x10, 3,217
actions, connection groups and displacement checks), so the ratios understate the engine.

Every figure is the best of --repeats runs of --seconds each (other work on the machine only
slows a run down, so the best is the least disturbed one), taken in rounds that run every
measurement once; the load average is printed before and after so the reader can see what
else was running.

    python benchmarks/batched_engine.py                 # batch 1024, 3 s x best of 3
    python benchmarks/batched_engine.py --threads 2 --seconds 5 --skip-peers
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numba
import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from satellites_env.core.batch import (
    BatchedEngine,
    apply_actions,
    configure_threads,
    final_rewards,
    legal_masks,
    random_legal_actions_of,
    setup_state,
    statuses,
)
from satellites_env.core.engine import ONGOING
from satellites_env.core.planes import observe_states

# Wide enough for the table when the output is a file or a pipe (rich would assume 80).
console = Console(width=None if Console().is_terminal else 150)


# --------------------------------------------------------------------------- Satellites


def satellites_rate(batch: int, seconds: float, observe: bool, seed: int):
    """A run_once for the batched engine: random legal play for `seconds`."""
    engine = BatchedEngine(batch, seed=seed)
    actions = np.empty(batch, dtype=np.int64)
    planes = np.empty((batch, 100, 22), dtype=np.float32)
    counter = [0]

    def step() -> None:
        engine.random_actions(counter[0], actions)
        engine.step(actions, check=False)  # the sampler only picks legal actions
        if observe:
            engine.observe(planes)
        counter[0] += 1

    for _ in range(50):  # past the opening, and every kernel compiled or loaded
        step()

    def run_once() -> tuple[int, float]:
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(10):
                step()
            steps += 10
        return steps * batch, time.perf_counter() - start

    return run_once


def satellites_breakdown(batch: int, seconds: float, seed: int) -> dict[str, float]:
    """Seconds per position in each kernel, timed one by one on the same random games."""
    engine = BatchedEngine(batch, seed=seed)
    states, masks, counts, scratch = engine.states, engine.masks, engine.counts, engine.scratch
    actions = np.empty(batch, dtype=np.int64)
    status = np.empty(batch, dtype=np.int64)
    rewards = np.empty((batch, 2), dtype=np.float32)
    planes = np.empty((batch, 100, 22), dtype=np.float32)
    seed64 = np.uint64(engine.seed)
    parts = dict.fromkeys(
        (
            "sample action",
            "apply + status + result",
            "auto-reset",
            "legal masks",
            "observation planes",
        ),
        0.0,
    )
    step = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or step < 60:
        t0 = time.perf_counter()
        random_legal_actions_of(states, masks, counts, seed64, step, actions)
        t1 = time.perf_counter()
        apply_actions(states, actions, scratch)
        statuses(states, engine.max_moves, status)
        final_rewards(states, status, rewards, scratch)
        t2 = time.perf_counter()
        for i in np.flatnonzero(status != ONGOING):  # a few games per step
            engine.episodes[i] += 1
            setup_state(states[i], seed64, i, engine.episodes[i])
        t3 = time.perf_counter()
        legal_masks(states, engine.max_moves, masks, counts, scratch)
        t4 = time.perf_counter()
        observe_states(states, engine.max_moves, planes, scratch)
        t5 = time.perf_counter()
        if step >= 20:  # after compilation and the opening
            for name, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=False):
                parts[name] += dt
        step += 1
    return {name: total / ((step - 20) * batch) for name, total in parts.items()}


# --------------------------------------------------------------------------- peers


def openspiel_rate(batch: int, seconds: float, observe: bool, seed: int):
    """Random legal play of a batch of pyspiel Othello states (one Python thread: OpenSpiel's
    Python API steps one state at a time)."""
    import pyspiel

    game = pyspiel.load_game("othello")
    rng = random.Random(seed)
    states = [game.new_initial_state() for _ in range(batch)]

    def sweep() -> int:
        played = 0
        for i, state in enumerate(states):
            if state.is_terminal():
                states[i] = state = game.new_initial_state()
            state.apply_action(rng.choice(state.legal_actions()))
            if observe:  # the next position's observation, like ours (player 0 once over)
                state.observation_tensor(0 if state.is_terminal() else state.current_player())
            played += 1
        return played

    for _ in range(5):
        sweep()

    def run_once() -> tuple[int, float]:
        positions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            positions += sweep()
        return positions, time.perf_counter() - start

    return run_once


def pgx_rate(batch: int, seconds: float, seed: int):
    """Random legal play of pgx Othello: vmap over the batch, jit, 8 steps per call (a
    lax.fori_loop, so Python dispatch is not what is measured), auto-reset; pgx computes the
    observation inside every step, so this figure always includes it."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("othello")
    inner = 8
    step_fn = jax.vmap(auto_reset(env.step, env.init))

    def play(carry):
        def body(_, carry):
            state, key = carry
            key, k_action, k_reset = jax.random.split(key, 3)
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(k_action, logits, axis=-1)
            state = step_fn(state, action, jax.random.split(k_reset, batch))
            return state, key

        return jax.lax.fori_loop(0, inner, body, carry)

    play = jax.jit(play)
    key = jax.random.PRNGKey(seed)
    key, k_init = jax.random.split(key)
    carry = (jax.jit(jax.vmap(env.init))(jax.random.split(k_init, batch)), key)
    carry = play(carry)  # compile (not timed)
    jax.block_until_ready(carry)

    def run_once() -> tuple[int, float]:
        nonlocal carry
        calls = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            carry = play(carry)
            jax.block_until_ready(carry)
            calls += 1
        return calls * inner * batch, time.perf_counter() - start

    return run_once


def peer(label: str, make, *args):
    """(run_once, None) or (None, why it is skipped)."""
    try:
        return make(*args), None
    except ImportError as error:
        return None, f'{label} skipped: not installed ({error}); pip install -e ".[bench]"'
    except Exception as error:
        return None, f"{label} skipped: {type(error).__name__}: {error}"


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument(
        "--threads",
        type=int,
        default=numba.config.NUMBA_NUM_THREADS,
        help="numba threads (at most NUMBA_NUM_THREADS, default: all)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-peers", action="store_true", help="Satellites only")
    args = parser.parse_args()
    configure_threads()  # numba's idle threads sleep, as under `satellites`
    if not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
        parser.error(
            f"--threads must be 1..{numba.config.NUMBA_NUM_THREADS} (NUMBA_NUM_THREADS caps it)"
        )

    load_before = os.getloadavg()
    rows = []  # (engine, game, threads, mask+step, with observation)
    notes = []
    # Every figure is measured in rounds: round r runs each measurement once, so a burst of
    # other work on the machine hits all of them alike instead of one of them wholly.
    measures = []  # (row key, column 0 = mask + step / 1 = + observation, threads, run_once)
    meta = {}  # row key -> (engine, game, threads text)
    with Progress(console=console, transient=True) as progress:
        warm = progress.add_task("compiling / loading kernels, starting peers", total=None)
        numba.set_num_threads(args.threads)
        satellites_rate(args.batch, 0.1, True, args.seed)()  # compile everything once
        layer = numba.threading_layer()
        for threads in sorted({args.threads, 1}, reverse=True):
            key = f"satellites-{threads}"
            meta[key] = (
                "Satellites batched engine (numba)",
                "Satellites 10x10",
                f"{threads} ({layer})",
            )
            for column, observe in ((0, False), (1, True)):
                numba.set_num_threads(threads)
                measures.append(
                    (
                        key,
                        column,
                        threads,
                        satellites_rate(args.batch, args.seconds, observe, args.seed),
                    )
                )
        if not args.skip_peers:
            run, why = peer("OpenSpiel", openspiel_rate, args.batch, args.seconds, False, args.seed)
            if run is None:
                notes.append(why)
            else:
                meta["openspiel"] = ("OpenSpiel C++ via pyspiel", "Othello 8x8", "1 (Python loop)")
                measures.append(("openspiel", 0, None, run))
                measures.append(
                    (
                        "openspiel",
                        1,
                        None,
                        openspiel_rate(args.batch, args.seconds, True, args.seed),
                    )
                )
            run, why = peer("pgx", pgx_rate, args.batch, args.seconds, args.seed)
            if run is None:
                notes.append(why)
            else:
                import jax
                import pgx

                meta["pgx"] = (
                    f"pgx {pgx.__version__} (JAX {jax.__version__} CPU)",
                    "Othello 8x8",
                    "XLA's own",
                )
                measures.append(("pgx", 0, None, run))
                notes.append(
                    "pgx computes the observation in every step: its one figure "
                    "(mask + step + observation) is shown in both columns."
                )
        progress.remove_task(warm)
        best: dict[tuple[str, int], float] = {}
        task = progress.add_task(
            "measuring (rounds x measurements)", total=args.repeats * len(measures)
        )
        for _ in range(args.repeats):
            for key, column, threads, run_once in measures:
                numba.set_num_threads(threads or args.threads)
                positions, seconds = run_once()
                best[key, column] = max(best.get((key, column), 0.0), positions / seconds)
                progress.advance(task)
        numba.set_num_threads(args.threads)
        breakdown = satellites_breakdown(args.batch, args.seconds, args.seed)
    for key, (engine, game, threads_text) in meta.items():
        plain = best[key, 0]
        rows.append((engine, game, threads_text, plain, best.get((key, 1), plain)))
    load_after = os.getloadavg()

    ours_plain, ours_observed = rows[0][3], rows[0][4]
    table = Table(
        title=f"Random legal play, batch {args.batch}: positions per second "
        f"(best of {args.repeats} runs of {args.seconds:g} s)"
    )
    for column in (
        "engine",
        "game",
        "threads",
        "mask + step",
        "+ observation",
        "Satellites / this (mask + step)",
        "(+ observation)",
    ):
        table.add_column(column, justify="right" if column[0] in "m+S(" else "left")
    for engine, game, threads, plain, observed in rows:
        table.add_row(
            engine,
            game,
            str(threads),
            f"{plain:,.0f}",
            f"{observed:,.0f}",
            f"{ours_plain / plain:.2f}x",
            f"{ours_observed / observed:.2f}x",
        )
    console.print(table)

    total = sum(breakdown.values())
    parts = Table(
        title=f"Where the Satellites engine's time goes ({args.threads} thread(s), "
        "kernel by kernel)"
    )
    parts.add_column("kernel")
    parts.add_column("us per position (wall)", justify="right")
    parts.add_column("share", justify="right")
    for name, seconds in breakdown.items():
        parts.add_row(name, f"{seconds * 1e6:.2f}", f"{seconds / total:.0%}")
    console.print(parts)
    one = rows[1][3] if len(rows) > 1 and rows[1][2].startswith("1 ") else None
    if one is not None and args.threads > 1:
        console.print(
            f"Scaling: {ours_plain / one:.2f}x from 1 to {args.threads} numba threads "
            f"(threading layer {layer})."
        )
    console.print(
        f"Numba threads: {args.threads} (NUMBA_NUM_THREADS="
        f"{numba.config.NUMBA_NUM_THREADS}, set with numba.set_num_threads); "
        f"threading layer {layer}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')};"
        f" CPU cores: {os.cpu_count()}."
    )
    console.print(
        f"Load average (1, 5, 15 min) before: {load_before[0]:.2f} {load_before[1]:.2f} "
        f"{load_before[2]:.2f}; after: {load_after[0]:.2f} {load_after[1]:.2f} "
        f"{load_after[2]:.2f} (above the thread count means other work shared the CPU)."
    )
    for note in notes:
        console.print(note)


if __name__ == "__main__":
    main()
