"""Which tests get which marker by name (tests/conftest.py marks them; tests/test_markers.py
checks that every entry still names a test).

`SLOW` entries are paths under tests/ (every test of the module) or node ids (one test, or
one of its parameter sets). A test is listed when it takes over about 5 s: measured as the
CPU seconds of the test and of the processes it waits for (wall times on a shared machine
are not a measure), the set-up of a module's fixtures counted in its first test.
"""

from __future__ import annotations

SLOW: tuple[str, ...] = ()

#: the documentation's tests: the site (tests/docs/) and the examples of the docs and README
DOCS = ("docs/", "test_docs.py", "test_readme.py")
