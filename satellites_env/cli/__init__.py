"""The `satellites` command line: train, exploit, sweep, evaluate, ladder, play, serve, replay,
demo, dataset.

This package parses the arguments and hands each command to its home: `evaluate` to
`satellites_env.tournament` (shown by `satellites_env.tournament_view`), `ladder` to
`satellites_env.ladder_view`, `play`, `demo` and `replay` to `satellites_env.terminal_game`,
`dataset` to `satellites_env.dataset` (the `minari` extra);
the console and key presses are `satellites_env.terminal`'s. `train`, `exploit` and `sweep` run the
trainer's commands (`satellites.commands` entry points of the `train` extra, PyTorch) and
`serve` the web server (Starlette, uvicorn); everything else is torch-free.

Errors and guarantees: a bad argument, agent spec, record, position, config, checkpoint or
output path ends with one `error: ...` line and exit status 2 (never a traceback); Ctrl-C
ends with status 130, and SIGTERM (143) and SIGHUP (129) take the same path, as does a worker
process that dies (status 1). Output paths are checked before any game is played, and a finished
game or tournament is never lost: if writing it still fails at the end, it goes to a fresh
file in the current folder (or the temp folder) and the message says where. Ctrl-C during
`evaluate` writes every finished game (`--out` marked incomplete, `--records`) before it
exits 130, and the same command continues the tournament (`satellites_env.tournament`).
Outputs are renamed into place and never replace a folder, a special file (FIFO, device,
socket) or a symbolic link (`satellites_env.files`).

Its modules: `options` (the argument types and the options several commands share), `parser`
(the top parser), and one module per group of commands, each defining its commands' options
and handler (`set_defaults(run=handler)`): `training` (train, exploit, sweep, config),
`evaluation` (evaluate, dataset), `games` (play, demo, replay, serve), `ladder`.
"""

from __future__ import annotations

import argparse
import os
import sys

from rich.markup import escape

from ..core.batch import configure_threads
from ..stops import exit_status, stop_reason, stop_signals
from ..terminal import CliError, errors, printable
from .parser import build_parser
from .training import SETS_ITS_THREADS

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "CliError",
    "main",
    "run_command",
]

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

#: the exit status of a command whose output's reader went away (128 + SIGPIPE, as the shell
#: reports a tool that SIGPIPE ended)
EXIT_BROKEN_PIPE = 141


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename!r}" if error.filename else ""
        return f"{error.strerror}{where}"
    return str(error) or type(error).__name__


def run_command(args: argparse.Namespace) -> None:
    """Run the command `args` names: its handler (`args.run`, set by its parser)."""
    if args.command not in SETS_ITS_THREADS:  # those set them once torch is in
        configure_threads()
    args.run(args)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush finds no broken pipe
    (Python's documented way to leave quietly after a BrokenPipeError)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced (tests) or already closed
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command; the exit status: 0 done, 2 a user error (one `error: ...` line),
    128 + the signal when stopped by one (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP: what finished
    is kept, `satellites_env.stops`), 1 a worker process that died (what finished is kept)
    or an internal error (a bug: set SATELLITES_TRACEBACK=1 to see it)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit:  # --help, or argparse's usage error (it printed why)
        return exit.code if isinstance(exit.code, int) else EXIT_ERROR if exit.code else 0
    try:
        with stop_signals():
            run_command(args)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP or a dead worker: what finished is kept
        errors.print(stop_reason(), markup=False, highlight=False)
        return exit_status()
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, as Unix tools do
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, OSError) as error:  # user errors: spec, record, SPN, config, paths...
        errors.print(f"[red]error:[/red] {escape(printable(_describe(error)))}")
        return EXIT_ERROR
    except Exception as error:
        if os.environ.get("SATELLITES_TRACEBACK"):
            raise
        errors.print(
            f"[red]internal error:[/red] {type(error).__name__}: "
            f"{escape(printable(error))} (please report it; SATELLITES_TRACEBACK=1 shows "
            f"the traceback)"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
