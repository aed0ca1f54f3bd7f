"""`python -m satellites_env.cli ...` is the `satellites` command, as `python -m satellites_env`."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
