"""The ``floras`` command line (:mod:`scenarios.cli.main`); one module per sub-command.

``main`` is re-exported so that the entry point ``scenarios.cli:main`` keeps working.
"""

from scenarios.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
