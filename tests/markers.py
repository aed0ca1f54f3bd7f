"""Which tests get which marker by name (tests/conftest.py marks them; tests/test_markers.py
checks that every entry still names a test).

`SLOW` entries are paths under tests/ (every test of the module) or node ids (one test, or
one of its parameter sets). A test is listed when it takes over about 5 s: measured as the
CPU seconds of the test and of the processes it waits for (wall times on a shared machine
are not a measure), the set-up of a module's fixtures counted in its first test.
"""

from __future__ import annotations

SLOW: tuple[str, ...] = (
    "docs/test_site.py",  # the strict build of the site, once a session
    "examples/test_examples.py::test_pettingzoo_selfplay_loop",
    "examples/test_examples.py::test_sb3_maskable_ppo",
    "examples/test_examples.py::test_vector_selfplay_example_runs",
    "test_readme.py::test_readme_program_runs[1]",
    "test_same_results.py",  # a tournament, a ladder and four tiny training runs
    "test_wheel.py",  # builds and installs the wheel
    "training/alphazero/test_az_checkpoint_safety.py::"
    "test_fuzz_resuming_from_a_mutated_az_checkpoint_is_a_checkpoint_error",
    "training/alphazero/test_az_generator.py::"
    "test_two_workers_split_the_games_and_repeat_exactly_in_turn_or_in_threads",
    "training/alphazero/test_az_search.py::"
    "test_the_search_asks_only_for_the_logits_it_reads_and_searches_the_same_with_all",
    "training/alphazero/test_az_targets.py::test_training_loop_fits_greedy_targets_under_symmetries",
    "training/alphazero/test_az_training.py::"
    "test_final_table_in_worker_processes_is_the_table_of_one_process",
    "training/test_checkpoint_safety.py::"
    "test_fuzz_resuming_from_a_mutated_run_checkpoint_is_a_checkpoint_error",
    "training/test_config_checks.py::test_fuzz_config_mappings_raise_only_config_errors",
)

#: the documentation's tests: the site (tests/docs/) and the examples of the docs and README
DOCS = ("docs/", "test_docs.py", "test_readme.py")
