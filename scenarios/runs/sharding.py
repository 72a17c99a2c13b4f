"""One run's clients of a round sharded over dask.distributed workers (:class:`ShardedTrainer`).

The coordinator (the process of ``floras train --scheduler ADDRESS`` or ``--workers N``) keeps every
keyed draw: the client sampling of model §1, the aggregator's channel and noise draws and the FLORAS
key of model §4. It sends each worker only (w_t, one chunk's client ids, the round index, the run's
scenario with ``run.key_hex`` removed) and receives that chunk's (ids, x_k = w^k_{t+1} − w_t, local
losses). A worker builds the trainer (data, partition, model) once per run and caches it under the
digest of the scenario it was sent (:func:`train_chunk`).

Results are identical to the in-process run with the same ``training.client_chunk``: a client's
update is computed by the same batched graph on the same chunk sizes (:mod:`fl.training`), its
batches come from its own keyed stream, and the chunks are fed to ``aggregate_stream`` in the sampled
order whatever order the workers finish in. At most ``workers + 1`` chunks are in flight (bounded
memory, O((workers + 1)·c·d)). A chunk whose worker is lost is computed again on another worker
(dask reschedules it; each task also has ``retries``); while the cluster has no worker for the
no-workers timeout the run stops with :class:`scenarios.experiments.executors.NoWorkersError` and
keeps its finished rounds (checkpoint, ``--resume``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections import deque

import numpy as np

__all__ = ["ShardedTrainer", "config_digest", "worker_config", "train_chunk", "warm_worker", "refuse_nested",
           "NestedClusterError", "open_executor"]

#: per-worker cache of trainers, keyed by the run's scenario digest (one entry per run)
_TRAINERS: dict[str, object] = {}
_LOCK = threading.Lock()


class NestedClusterError(ValueError):
    """A sharded run was asked for inside a dask worker (e.g. a sweep's run): clusters do not nest."""


def worker_config(config):
    """The scenario a worker receives: ``run.key_hex`` removed (the key never leaves the coordinator)."""
    return dataclasses.replace(config, run=dataclasses.replace(config.run, key_hex=None))


def config_digest(config) -> str:
    """SHA-256 of the (key-free) scenario's canonical JSON: the key of a worker's trainer cache."""
    text = json.dumps(worker_config(config).to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _cached_trainer(digest: str, config):
    """This worker's trainer of the run ``digest``, built from ``config`` on first use (older runs' dropped)."""
    with _LOCK:
        trainer = _TRAINERS.get(digest)
        if trainer is None:
            from scenarios.runs.setup import build_trainer

            _TRAINERS.clear()
            trainer = _TRAINERS[digest] = build_trainer(config)
    return trainer


def warm_worker(digest: str, config, K: int) -> bool:
    """On a worker: build the run's trainer and trace its training function for every chunk size of a
    K-client round (:meth:`fl.training.VectorizedTrainer.warm_up`; changes no result)."""
    _cached_trainer(digest, config).warm_up(K)
    return True


def train_chunk(digest: str, config, w: np.ndarray, ids: np.ndarray, round_index: int):
    """On a worker: train one chunk ``ids`` from ``w`` in round ``round_index``; returns
    ``(ids [c] int64, updates [c, d] float32, local_loss [c] float64)``.

    The trainer is built from ``config`` on the first call of a run and cached under ``digest``
    (older runs' trainers are dropped). The updates travel as the float32 the batched graph computes
    (the coordinator widens them to float64, exactly as :meth:`fl.training.VectorizedTrainer.train_chunks`).
    """
    import tensorflow as tf

    trainer = _cached_trainer(digest, config)
    ids = np.asarray(ids, dtype=np.int64)
    upd, loss = trainer._run(tf.constant(np.asarray(w, dtype=np.float32)), trainer._check(ids), int(round_index))
    return ids, upd.numpy(), loss.numpy().astype(np.float64)


def refuse_nested() -> None:
    """:class:`NestedClusterError` inside a dask worker (a run of a sweep on dask): no nested clusters."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return
    raise NestedClusterError("a sharded run (--scheduler / --workers of floras train) cannot start inside a dask "
                             "worker (a sweep already on dask runs each run in process): drop the sharding "
                             "option, or run the scenario with floras train")


class ShardedTrainer:
    """A :class:`fl.training.VectorizedTrainer` whose chunks are trained on dask workers.

    Parameters
    ----------
    local : the coordinator's own trainer (its chunk sizes and checks; it trains nothing here)
    config : the run's scenario (sent to workers without ``run.key_hex``)
    executor : a :class:`scenarios.experiments.executors.DaskExecutor` (its client and no-workers wait)
    retries : resubmissions of a chunk whose task failed (dask ``retries``)
    """

    task = staticmethod(train_chunk)  # what a worker runs per chunk

    def __init__(self, local, config, executor, *, retries: int = 2):
        self.local = local
        self.config = worker_config(config)
        self.digest = config_digest(config)
        self.executor = executor
        self.retries = retries

    def __getattr__(self, name):  # M, D, spec, chunks, clients, ...: the local trainer's
        return getattr(self.local, name)

    def _workers(self) -> int:
        return max(1, len(self.executor.client.scheduler_info().get("workers", {})))

    def warm_up(self, K: int) -> None:
        """Every worker present builds the run's trainer and traces it (kept out of round 1's wall time; a
        worker that joins later does so on its first chunk)."""
        workers = list(self.executor.client.scheduler_info().get("workers", {}))
        futures = [self.executor.client.submit(warm_worker, self.digest, self.config, int(K), pure=False,
                                               workers=[addr], allow_other_workers=False,
                                               key=f"floras-warm-up-{self.digest[:12]}-{i}")
                   for i, addr in enumerate(workers)]
        for fut in futures:
            self._result(fut)

    def _submit(self, w32: np.ndarray, ids: np.ndarray, round_index: int):
        args = (self.digest, self.config, w32, ids, int(round_index))
        return self.executor.client.submit(self.task, *args, pure=False, retries=self.retries,
                                           key=f"floras-chunk-{self.digest[:12]}-{round_index}-{int(ids[0])}-{ids.size}")

    def _result(self, future):
        from scenarios.experiments.executors import NoWorkersError

        try:
            for _ in self.executor._completed({future}):
                pass
        except NoWorkersError:
            raise NoWorkersError(
                f"the dask cluster at {self.executor.address} has had no worker for "
                f"{self.executor.no_workers_timeout:g} s in the middle of a round; the run stopped and keeps its "
                "finished rounds (checkpoint): start workers (dask worker ADDRESS) or raise --no-workers-timeout, "
                "then rerun the same command with --resume") from None
        return future.result()

    def train_chunks(self, w: np.ndarray, clients: np.ndarray, round_index: int):
        """Like :meth:`fl.training.VectorizedTrainer.train_chunks`, the chunks trained on the workers:
        yields :class:`fl.training.ClientChunk` in sampled order, at most ``workers + 1`` in flight."""
        from fl.training import ClientChunk

        clients = self.local._check(clients)
        # w travels inside each task (float32, what the batched graph takes): no scattered data a lost worker
        # could take with it
        w32 = np.asarray(w, dtype=np.float32)
        bounds, start = [], 0
        for c in self.local.chunks(clients.size):
            bounds.append((start, start + c))
            start += c
        todo, flight = deque(bounds), deque()
        try:
            while todo or flight:
                while todo and len(flight) < self._workers() + 1:
                    a, b = todo.popleft()
                    flight.append(self._submit(w32, clients[a:b], round_index))
                ids, upd, loss = self._result(flight[0])
                flight.popleft()
                yield ClientChunk(np.asarray(ids, dtype=np.int64), upd.astype(np.float64), loss)
        finally:
            if flight:
                self.executor.client.cancel(list(flight))

    def train(self, w: np.ndarray, clients: np.ndarray, round_index: int):
        """All chunks gathered: ``(updates [K, d] float64, local_loss [K] float64)``."""
        chunks = list(self.train_chunks(w, clients, round_index))
        return np.concatenate([c.updates for c in chunks]), np.concatenate([c.local_loss for c in chunks])


def open_executor(*, scheduler: str | None, workers: int | None, connect_timeout: float | None = None,
                  no_workers_timeout: float | None = None, processes: bool = True):
    """The dask executor of a sharded run: connect to ``scheduler``, or start a local cluster of
    ``workers`` one-thread workers (reusing the sweeps' :class:`scenarios.experiments.executors.DaskExecutor`)."""
    from scenarios.experiments.executors import CONNECT_TIMEOUT, NO_WORKERS_TIMEOUT, DaskExecutor

    refuse_nested()
    nwt = NO_WORKERS_TIMEOUT if no_workers_timeout is None else no_workers_timeout
    if scheduler is not None:
        from scenarios.errors import ConnectError

        try:
            return DaskExecutor.connect(scheduler, timeout=CONNECT_TIMEOUT if connect_timeout is None else connect_timeout,
                                        no_workers_timeout=nwt)
        except ConnectError as exc:  # for a run, omitting --scheduler trains in process (or --workers N)
            text = str(exc).replace("or omit --scheduler to start a local cluster",
                                    "or omit --scheduler to train in process (--workers N: a local cluster)")
            raise ConnectError(text) from None
    if workers is None or workers < 1:
        raise ValueError(f"--workers must be an integer ≥ 1 for a sharded run (got {workers!r}); or give --scheduler")
    return DaskExecutor.local(workers, no_workers_timeout=nwt, processes=processes)
