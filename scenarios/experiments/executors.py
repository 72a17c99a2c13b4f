"""Where a sweep's runs execute: one after another in this process, or on dask.distributed.

An executor maps a function over run tasks and yields their outcomes as they complete
(``map_unordered``), maps a plain function over values (``map_calls``: a sweep's calibrations), then releases
its workers (``close``). :mod:`scenarios.experiments.sweep` is the engine
that uses them; nothing heavy (dask) is imported at module level.
"""

from __future__ import annotations

from concurrent.futures import CancelledError
from pathlib import Path
from typing import Callable, Iterator

from scenarios.errors import ConnectError, Terminated
from scenarios.experiments.outcome import RunOutcome, record_error

__all__ = ["InProcessExecutor", "DaskExecutor", "NoWorkersError", "CONNECT_TIMEOUT", "NO_WORKERS_TIMEOUT"]

CONNECT_TIMEOUT = 5.0  # seconds a --scheduler has to answer
NO_WORKERS_TIMEOUT = 120.0  # seconds a sweep waits while its cluster has no worker


class NoWorkersError(ConnectError):
    """The cluster had no worker for longer than the no-workers timeout (exit status 6)."""


class InProcessExecutor:
    """Runs tasks one after another in this process (tests, debugging, ``--workers 0``)."""

    def map_unordered(self, fn: Callable, items: list) -> Iterator:
        for item in items:
            yield fn(item)

    def map_calls(self, fn: Callable, items: list) -> Iterator:
        """``(index, fn(item))`` for every item, in order; an exception ``fn`` raises is yielded as its value."""
        for i, item in enumerate(items):
            try:
                yield i, fn(item)
            except Exception as exc:  # noqa: BLE001 - handed to the caller, who decides
                yield i, exc

    def close(self) -> None:
        pass


class DaskExecutor:
    """Runs tasks on a ``distributed.Client`` and yields outcomes as they complete.

    At most as many runs are handed to the scheduler as the cluster has worker threads (re-read at every poll,
    so workers that join or leave count); the rest wait here. The scheduler assigns a task to a
    worker as soon as it gets it, so runs handed over all at once could queue behind a long run on one
    worker while another worker stands idle (measured: a DDGauss run queued behind FLORAS on a 2-worker
    local cluster whose other worker had finished). A task whose worker died is given to another worker once
    (a local cluster's scheduler allows one failure; each task also has ``retries=1``); if that fails too the future errs,
    and it is turned into a failed outcome recorded in its partial directory (a rerun redoes
    it), so the others go on. While the cluster has no worker for ``no_workers_timeout``
    seconds, the pending runs are cancelled and :class:`NoWorkersError` is raised; finished
    runs stay. A local cluster is closed on exit, on an exception and on SIGTERM (the handler
    raises :class:`scenarios.errors.Terminated`, a ``SystemExit(143)``, so that ``close`` runs). A signal handler runs
    wherever the main thread is, and an exception raised inside a garbage-collector callback or a ``__del__`` is
    printed and dropped (measured: distributed's GC diagnosis swallowed it and the sweep went on to exit 0), so the
    handler also sets a flag that every poll of the futures and ``close`` check, raising it again there.
    """

    def __init__(self, client, *, cluster=None, no_workers_timeout: float = NO_WORKERS_TIMEOUT, address: str = ""):
        self.client = client
        self.cluster = cluster
        self.no_workers_timeout = no_workers_timeout
        self.address = address or "the local cluster"
        self._old_sigterm = None
        self.terminated = False  # set by the SIGTERM handler; raised again at the next poll if the raise was lost

    @classmethod
    def local(cls, workers: int, *, no_workers_timeout: float = NO_WORKERS_TIMEOUT,
              processes: bool = True) -> "DaskExecutor":
        """A LocalCluster of ``workers`` processes with one thread each, closed on SIGTERM too."""
        import dask
        from distributed import Client, LocalCluster

        self = cls(None, no_workers_timeout=no_workers_timeout)
        self._trap_sigterm()  # before the workers start: a SIGTERM while they start closes them too
        try:
            # one task per one-thread worker at a time: a dying worker takes down (and charges) only its own run
            with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                                  "distributed.scheduler.worker-saturation": 1.0}):
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                            dashboard_address=":0", silence_logs=40)
            self.client = Client(self.cluster)
        except BaseException:
            self.close()
            raise
        return self

    def _trap_sigterm(self) -> None:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return

        def on_sigterm(signum, frame):
            self.terminated = True
            raise Terminated()

        self._old_sigterm = signal.signal(signal.SIGTERM, on_sigterm)

    @classmethod
    def connect(cls, address: str, *, timeout: float = CONNECT_TIMEOUT,
                no_workers_timeout: float = NO_WORKERS_TIMEOUT) -> "DaskExecutor":
        """Connect to a running scheduler; :class:`ConnectError` after ``timeout`` seconds."""
        import logging

        from distributed import Client

        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            client = Client(address, timeout=f"{timeout}s")
        except (OSError, TimeoutError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConnectError(f"cannot reach the dask scheduler at {address!r} within {timeout:g} s ({reason}); "
                               f"check --scheduler (host, port, firewall, that the scheduler runs), raise "
                               f"--connect-timeout, or omit --scheduler to start a local cluster") from None
        return cls(client, no_workers_timeout=no_workers_timeout, address=address)

    def worker_threads(self) -> int:
        """Worker threads of the cluster now (at least 1, so that a cluster without workers still gets one run
        and the no-workers timeout can fire; 1 when the scheduler does not answer, whose loss the pending run's
        future then reports)."""
        if self.client.status != "running":  # reconnecting or closed: no call that would wait for the scheduler
            return 1
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a lost scheduler: the futures' cancellation names it (_completed)
            return 1

    def map_unordered(self, fn: Callable, items: list) -> Iterator:
        for item, fut in self._as_completed(fn, items, lambda item: f"floras-run-{item.name}"):
            try:
                yield fut.result()
            except Exception as exc:  # the worker itself failed (killed, out of memory, unpicklable)
                partial = Path(item.out_dir) / f".{item.name}.partial"
                partial.mkdir(parents=True, exist_ok=True)
                err = record_error(partial, exc, item.record)
                yield RunOutcome(item.name, "failed", error=err, out_dir=item.out_dir)

    def map_calls(self, fn: Callable, items: list) -> Iterator:
        """``(index, fn(item))`` as the calls complete on the cluster, one per worker thread at a time; an exception
        (raised by ``fn`` or by its worker's loss) is yielded as its value."""
        import uuid

        tag = uuid.uuid4().hex[:12]
        for (i, _), fut in self._as_completed(lambda pair: fn(pair[1]), list(enumerate(items)),
                                              lambda pair: f"floras-call-{tag}-{pair[0]}"):
            try:
                yield i, fut.result()
            except Exception as exc:  # noqa: BLE001 - handed to the caller, who decides
                yield i, exc

    def _as_completed(self, fn: Callable, items: list, key_of: Callable) -> Iterator:
        """``(item, future)`` of ``fn(item)`` as the futures complete; items are handed to the scheduler in order,
        no more than one per worker thread pending (class doc)."""
        waiting = list(items)[::-1]  # popped from the end: the items' order
        futures: dict = {}

        def hand_over(pending: set) -> int:
            """Submit until one per worker thread is pending; returns how many still wait here."""
            slots = self.worker_threads()
            while waiting and len(pending) < slots:
                item = waiting.pop()
                fut = self.client.submit(fn, item, pure=False, retries=1, key=key_of(item))
                futures[fut] = item
                pending.add(fut)
            return len(waiting)

        for fut in self._completed(set(), hand_over):
            yield futures[fut], fut

    def _completed(self, pending: set, hand_over=None) -> Iterator:
        """The futures as they complete, ``hand_over(pending)`` submitting more as they do (it returns how many
        still wait); :class:`NoWorkersError` after a worker-less wait too long."""
        import time

        from distributed import wait

        idle_since = None
        poll = min(1.0, self.no_workers_timeout / 4)
        waiting = hand_over(pending) if hand_over is not None else 0

        def lost() -> ConnectError:
            return ConnectError(
                f"lost the dask scheduler at {self.address or 'the local cluster'} with "
                f"{len(pending) + waiting} run(s) unfinished; finished runs are kept: restart the scheduler "
                "(and its workers) and rerun the same command to do the rest")

        while pending:
            if self.terminated:  # the handler's raise was dropped where it landed (class doc)
                self.terminated = False
                raise Terminated()
            if self.client.status in ("closing", "closed"):  # it gave up reconnecting while a call waited
                raise lost()
            try:
                done = wait(pending, timeout=poll, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                done = set()
            except CancelledError as exc:  # the client lost its scheduler: every pending future is cancelled
                if "scheduler-connection-lost" not in str(exc) and self.client.status == "running":
                    raise
                raise lost() from None
            pending -= done
            if hand_over is not None:  # every poll: a worker that joined gets a run without waiting for one to end
                waiting = hand_over(pending)
            yield from done
            if done or not pending:
                idle_since = None
                continue
            if self.client.scheduler_info().get("workers"):
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= self.no_workers_timeout:
                self.client.cancel(list(pending))
                raise NoWorkersError(
                    f"the dask cluster at {self.address} has had no worker for {self.no_workers_timeout:g} s, "
                    f"{len(pending) + waiting} run(s) not started; start workers (dask worker ADDRESS) or raise "
                    f"--no-workers-timeout, then rerun (finished runs are kept)")

    def close(self) -> None:
        try:
            if self.client is not None:
                self.client.close()
            if self.cluster is not None:
                self.cluster.close()
        finally:
            self.client = self.cluster = None
            if self._old_sigterm is not None:
                import signal

                signal.signal(signal.SIGTERM, self._old_sigterm)
                self._old_sigterm = None
        if self.terminated:  # a SIGTERM whose raise was dropped: the command still ends with 143
            self.terminated = False
            raise Terminated()

