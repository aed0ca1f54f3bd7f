"""Self-play beyond one process: the `Generator` interface every learner's self-play
implements, and the `GeneratorPool` that runs K generators in this process (`backend: local`)
or as Ray actors (`backend: ray`, the optional `ray` extra; Ray is imported only then).

* `generator.py`: `Generator`, `SampleBatch`, seeds and shares of the workers;
* `pool.py`: `GeneratorPool` (weights broadcast, batches collected once and in worker order,
  dead actors replaced) and `Worker`, the one wrapper behind both backends.

The arena's games on Ray (`satellites evaluate --ray`) live in `satellites_env.distributed`,
so that `satellites_env` needs nothing from here; the `rllib:PATH` agent, an RLlib RLModule
playing in the arena, is an agent spec beside the others (`training/rllib_agent.py`).
"""
