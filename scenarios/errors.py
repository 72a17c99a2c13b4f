"""Failure classes every ``floras`` command reports as one line (``floras: error: …``).

:class:`ValueError` stays the class of bad input (exit status 2). The classes here are the
failures of the environment a command runs in; each carries the exit status the CLI uses:

* :class:`BusyError` (3): another process holds the lock of a run or sweep directory;
* :class:`StorageError` (4): an output location is missing, unwritable or full, or a stored
  result is unreadable (truncated checkpoint, empty manifest, finished run without metrics);
* :class:`ResourceLimitError` (5): the memory a command would allocate exceeds the limit;
* :class:`ConnectError` (6): a dask scheduler cannot be reached.

Nothing here imports beyond the standard library.
"""

from __future__ import annotations

__all__ = ["FlorasError", "BusyError", "StorageError", "ResourceLimitError", "ConnectError", "Terminated"]


class FlorasError(Exception):
    """A failure the CLI reports in one line with exit status :attr:`exit_code`."""

    exit_code = 1


class BusyError(FlorasError):
    exit_code = 3


class StorageError(FlorasError):
    exit_code = 4


class ResourceLimitError(FlorasError):
    exit_code = 5


class ConnectError(FlorasError):
    exit_code = 6


class Terminated(SystemExit):
    """Raised by the SIGTERM handler a local dask cluster installs, so that cleanup runs; exit 143."""

    def __init__(self) -> None:
        super().__init__(143)
