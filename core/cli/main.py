"""The memlens command line: ``memlens <command> ... [--json]``.

Every command takes ``--json`` for machine-readable output; bad input gives a
non-zero exit and a one-line error naming the file (and line) on stderr.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from core.cli.output import CliError, print_error
from core.cli.parser import build_parser
from core.io.problems import FormatError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # The reader went away (``memlens sessions | head``): not an error. Point
        # stdout at /dev/null so the flush at exit does not raise again.
        _drop_stdout()
        return 0
    except (FormatError, CliError, FileExistsError) as exc:
        print_error(str(exc))
    except KeyError as exc:
        print_error(str(exc.args[0] if exc.args else exc))
    except (OSError, ValueError) as exc:
        print_error(_naming(args, str(exc)))
    except KeyboardInterrupt:
        print_error("interrupted")
        return 130
    except Exception as exc:  # a bug: one line naming it and the input, not a traceback
        print_error(
            _naming(
                args,
                f"unexpected {type(exc).__name__}: {exc} (a bug in memlens; please report it)",
            )
        )
    return 1


def _input_of(args: argparse.Namespace) -> str | None:
    """The file or folder the command reads, as given."""
    for name in ("session", "path", "data"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def _naming(args: argparse.Namespace, message: str) -> str:
    """*message*, led by the command's input when it names no file itself."""
    where = _input_of(args)
    if where is None or where in message or os.sep in message:
        return message
    return f"{where}: {message}"


def _drop_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # stdout is not a real file (tests, embedding): nothing to flush at exit


if __name__ == "__main__":
    sys.exit(run_cli())
