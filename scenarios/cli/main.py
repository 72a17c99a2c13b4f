"""The ``floras`` command line: one sub-command per job, each in its own module.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``handler`` to a function ``run(args) -> int``. Command modules import heavy packages
(TensorFlow, Sionna, dask) inside ``run`` only, so ``floras privacy`` and ``--help`` stay fast.

One error path for every command: each failure ends the program with one line
``floras: error: …`` on stderr and a non-zero exit status, never a traceback:

* bad input (a :class:`ValueError` raised by validation, or a bad option): status 2;
* the failures of :mod:`scenarios.errors` (a locked output directory, an unwritable or full
  output location or a damaged stored result, a memory estimate over the limit, an
  unreachable scheduler): their own status (3–6);
* any other :class:`OSError` (a scenario path that is a directory or unreadable, …): status 4;
* :class:`MemoryError`: status 5; anything else: status 1, as an internal error.

``FLORAS_DEBUG=1`` re-raises instead, for the traceback. See ``docs/reliability.md``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMAND_MODULES = (
    "scenarios.cli.link",
    "scenarios.cli.train",
    "scenarios.cli.privacy",
    "scenarios.cli.sweep",
    "scenarios.cli.figures",
    "scenarios.cli.audit",
    "scenarios.cli.pir",
    "scenarios.cli.calibrate",
    "scenarios.cli.tune",
    "scenarios.cli.matched",
    "scenarios.cli.plot",
)


class UsageError(Exception):
    """Raised instead of argparse's print-usage-and-exit, so the CLI prints one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse hook
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> Parser:
    from scenarios.cli.version import __version__

    parser = Parser(prog="floras", description="Private wireless federated learning simulator (FLORAS).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # every listed command exists: a failed import is an error, never a dropped command
            raise ImportError(f"command module {name} cannot be imported: {exc}", name=name) from exc
        module.register(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _os_error(exc: OSError) -> str:
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot access{where}: {exc.strerror or exc}"


def main(argv: list[str] | None = None) -> int:
    from scenarios.errors import FlorasError

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # hides the CUDA-probe error line on CPU-only machines
    debug = os.environ.get("FLORAS_DEBUG") not in (None, "", "0")
    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args) or 0)
    except UsageError as exc:
        text = str(exc)
        text = text[len("floras "):] if text.startswith("floras ") else text.removeprefix("floras: ")
        print(f"floras: error: {_one_line(text)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("floras: interrupted; finished work is kept and a rerun resumes", file=sys.stderr)
        return 130
    except SystemExit as exc:
        from scenarios.errors import Terminated

        if isinstance(exc, Terminated):  # SIGTERM while a local cluster ran: it is closed, as on Ctrl-C
            print("floras: terminated; finished work is kept and a rerun resumes", file=sys.stderr)
            return 143
        raise
    except BaseException as exc:  # noqa: BLE001 - the one error path: one line, no traceback
        if debug:
            raise
        if isinstance(exc, ValueError):
            message, status = str(exc), 2
        elif isinstance(exc, FlorasError):
            message, status = str(exc), exc.exit_code
        elif isinstance(exc, OSError):
            message, status = _os_error(exc), 4
        elif isinstance(exc, MemoryError):
            message, status = ("out of memory; reduce the sizes (the memory estimate did not foresee this "
                               "allocation)"), 5
        else:
            message, status = f"internal error: {type(exc).__name__}: {exc} (FLORAS_DEBUG=1 shows the traceback)", 1
        print(f"floras: error: {_one_line(message)}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
