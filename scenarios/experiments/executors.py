"""Where a sweep's runs execute: one after another in this process, or on dask.distributed.

An executor maps a function over run tasks and yields their outcomes as they complete
(``map_unordered``), then releases its workers (``close``). :mod:`scenarios.experiments.sweep` is the engine
that uses them; nothing heavy (dask) is imported at module level.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from scenarios.errors import ConnectError
from scenarios.experiments.outcome import RunOutcome, record_error

__all__ = ["InProcessExecutor", "DaskExecutor"]


class InProcessExecutor:
    """Runs tasks one after another in this process (tests, debugging, ``--workers 0``)."""

    def map_unordered(self, fn: Callable, items: list) -> Iterator:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        pass


class DaskExecutor:
    """Runs tasks on a ``distributed.Client`` and yields outcomes as they complete.

    A task whose worker died (the future errs, not the run) is turned into a failed outcome
    and recorded in its partial directory, so the others go on.
    """

    def __init__(self, client, *, cluster=None):
        self.client = client
        self.cluster = cluster

    @classmethod
    def local(cls, workers: int) -> "DaskExecutor":
        """A LocalCluster of ``workers`` processes with one thread each."""
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
        )
        return cls(Client(cluster), cluster=cluster)

    @classmethod
    def connect(cls, address: str, *, timeout: float = 5.0) -> "DaskExecutor":
        """Connect to a running scheduler; :class:`ConnectError` after ``timeout`` seconds."""
        import logging

        from distributed import Client

        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            return cls(Client(address, timeout=f"{timeout}s"))
        except (OSError, TimeoutError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConnectError(f"cannot reach the dask scheduler at {address!r} within {timeout:g} s ({reason}); "
                               f"check --scheduler, or omit it to start a local cluster") from None

    def map_unordered(self, fn: Callable, items: list) -> Iterator:
        from distributed import as_completed

        futures = {self.client.submit(fn, item, pure=False, key=f"floras-run-{item.name}"): item for item in items}
        for fut in as_completed(futures):
            item = futures[fut]
            try:
                yield fut.result()
            except Exception as exc:  # the worker itself failed (killed, out of memory, unpicklable)
                partial = Path(item.out_dir) / f".{item.name}.partial"
                partial.mkdir(parents=True, exist_ok=True)
                err = record_error(partial, exc, item.record)
                yield RunOutcome(item.name, "failed", error=err, out_dir=item.out_dir)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
