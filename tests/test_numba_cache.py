"""The test session drops numba's cache when kernel code changes, and only then."""

from pathlib import Path

import numba_cache


def test_a_docstring_or_comment_edit_keeps_the_code(tmp_path: Path) -> None:
    before = tmp_path / "before.py"
    before.write_text('"""Module."""\nX = 1\n\n\ndef f():\n    """Doc."""\n    return X\n')
    after = tmp_path / "after.py"
    after.write_text(
        '"""Other."""\nX = 1  # note\n\n\ndef f():\n    """New doc."""\n    return X\n'
    )
    changed = tmp_path / "changed.py"
    changed.write_text('"""Module."""\nX = 2\n\n\ndef f():\n    """Doc."""\n    return X\n')
    assert numba_cache.code(before) == numba_cache.code(after)
    assert numba_cache.code(before) != numba_cache.code(changed)


def test_the_kernel_sources_are_the_kernels_and_what_they_import() -> None:
    names = {p.relative_to(numba_cache.ROOT).as_posix() for p in numba_cache.kernel_sources()}
    # kernels, and the modules whose constants they read
    assert {"satellites_env/core/rules.py", "training/alphazero/search.py"} <= names
    assert "satellites_env/core/state.py" in names
    # modules no kernel reaches
    assert not names & {
        "satellites_env/cli/__init__.py",
        "training/common/run.py",
        "satellites_env/ladder/playing.py",
    }
