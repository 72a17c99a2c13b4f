"""The ``floras`` command line: one sub-command per job, each in its own module.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``handler`` to a function ``run(args) -> int``. Command modules import heavy packages
(TensorFlow, Sionna, dask) inside ``run`` only, so ``floras privacy`` and ``--help`` stay fast.

Errors in the input (a :class:`ValueError` raised by validation, or a bad option) end the
program with exit status 2 and one line naming the parameter and the allowed range; no
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMAND_MODULES = (
    "scenarios.link_cmd",
    "scenarios.train_cmd",
    "scenarios.privacy_cmd",
    "scenarios.sweep_cmd",
    "scenarios.figures_cmd",
    "scenarios.audit_cmd",
    "scenarios.calibrate_cmd",
    "scenarios.tune_cmd",
    "scenarios.matched_cmd",
)


class UsageError(Exception):
    """Raised instead of argparse's print-usage-and-exit, so the CLI prints one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse hook
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> Parser:
    parser = Parser(prog="floras", description="Private wireless federated learning simulator (FLORAS).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # hides the CUDA-probe error line on CPU-only machines
    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args) or 0)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"floras: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("floras: interrupted; finished work is kept and a rerun resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
