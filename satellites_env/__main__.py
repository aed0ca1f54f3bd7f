"""`python -m satellites_env ...` is the `satellites` command (`python -m satellites_env demo`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
