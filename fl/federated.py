"""The federated round: client sampling, local training, aggregation, FedAvg step (model §1).

Round t (0-based ``round_index``; reported as round t + 1):

1. the server samples K of M clients uniformly without replacement from the stream
   ``(seed, "client-sampling", t)``;
2. the K clients train from w_t (:class:`fl.training.VectorizedTrainer`, in chunks of
   ``training.client_chunk``) and produce x_k = w^k_{t+1} − w_t;
3. the aggregator (any :class:`phy.aggregation.Aggregator`: ideal, FLORAS or channel
   inversion, with its normalization) returns x̂ ≈ Σ_{k ∈ contributors} x_k. An aggregator with the
   streaming form (``aggregate_stream``, :func:`phy.aggregation.supports_streaming`; every built-in scheme)
   consumes the chunks one after another as the trainer yields them (``train_chunks``), so a round holds
   one chunk's updates at a time and the result does not depend on the chunk size; otherwise the chunks
   are gathered into one ``[K, d] float64`` array for ``aggregate``;
4. FedAvg: w_{t+1} = w_t + x̂ / K' (``result.mean_estimate``; K' = contributors, and a round
   with K' = 0 leaves the model unchanged).

A non-finite differential (checked chunk by chunk) or model raises :class:`NonFiniteModelError`
naming the round and the cause; nothing is applied to the model in that round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phy.aggregation import supports_streaming
from phy.randomness import stream

__all__ = ["sample_clients", "NonFiniteModelError", "RoundOutcome", "FederatedAveraging"]


def sample_clients(*, seed: int, round_index: int, M: int, K: int) -> np.ndarray:
    """K distinct client ids from [0, M), uniform without replacement, ``[K] int64`` (model §1)."""
    if not 1 <= K <= M:
        raise ValueError(f"K must be an integer in [1, M = {M}] (got {K})")
    return stream(seed, "client-sampling", round_index).choice(M, size=K, replace=False).astype(np.int64)


class NonFiniteModelError(RuntimeError):
    """The model or a client's differential became non-finite; the message names round and cause."""

    def __init__(self, round_number: int, cause: str):
        super().__init__(f"round {round_number}: {cause}; the run stopped and every earlier round's results are kept")
        self.round_number = round_number
        self.cause = cause


@dataclass(frozen=True)
class RoundOutcome:
    """What one round produced (besides the new model).

    Attributes
    ----------
    clients : ``[K] int64`` the scheduled client ids
    local_loss : float, mean over clients of their mean mini-batch loss during local training
    agg_error : float, the aggregator's normalized squared error (``AggregationResult.error``)
    contributors : int, K'
    diagnostics : dict, the aggregator's per-round diagnostics (FLORAS ``V``; channel
        inversion ``admitted``)
    """

    clients: np.ndarray
    local_loss: float
    agg_error: float
    contributors: int
    diagnostics: dict


class FederatedAveraging:
    """FedAvg over a pluggable aggregator.

    Parameters
    ----------
    trainer : :class:`fl.training.VectorizedTrainer`
    aggregator : :class:`phy.aggregation.Aggregator` built for K and d
    M, K : clients in total and per round
    seed : master seed of the client-sampling stream
    server_momentum : β ∈ [0, 1), the server's momentum on the aggregated step (model §1): v_{t+1} = β·v_t + x̂/K',
        w_{t+1} = w_t + v_{t+1} (v_0 = 0; β = 0 is plain FedAvg, bit for bit). Post-processing of the released
        x̂: the privacy accounting does not change. ``velocity`` holds v_t (None before the first round) for
        checkpoints.
    """

    def __init__(self, *, trainer, aggregator, M: int, K: int, seed: int, server_momentum: float = 0.0):
        self.trainer = trainer
        self.aggregator = aggregator
        self.M, self.K, self.seed = M, K, seed
        self.server_momentum = float(server_momentum)
        self.velocity: np.ndarray | None = None

    def step(self, w: np.ndarray, round_index: int) -> tuple[np.ndarray, RoundOutcome]:
        """One round from global model ``w`` (``[d] float64``); returns (w_{t+1}, outcome)."""
        number = round_index + 1
        clients = sample_clients(seed=self.seed, round_index=round_index, M=self.M, K=self.K)
        if supports_streaming(self.aggregator) and hasattr(self.trainer, "train_chunks"):
            local_loss = np.full(self.K, np.nan)
            result = self.aggregator.aggregate_stream(self._chunks(w, clients, round_index, local_loss),
                                                      round_index=round_index, clients=clients)
            if np.isnan(local_loss).any():  # a half-wired scheme: it must consume every chunk
                raise RuntimeError(f"scheme {self.aggregator.config.scheme!r}: aggregate_stream returned before "
                                   "consuming every chunk of the round (phy.aggregation.stream_chunks)")
        else:
            updates, local_loss = self.trainer.train(w, clients, round_index)
            self._check_finite(number, clients, updates)
            result = self.aggregator.aggregate(updates, round_index=round_index, clients=clients)
        step = result.mean_estimate
        if self.server_momentum > 0.0:
            step = step if self.velocity is None else self.server_momentum * self.velocity + step
        w_next = w + step
        if not np.all(np.isfinite(w_next)):
            raise NonFiniteModelError(
                number,
                f"the aggregated update of scheme {self.aggregator.config.scheme!r} is non-finite "
                f"(aggregation error {result.error!r}, contributors {result.contributors})",
            )
        if self.server_momentum > 0.0:
            self.velocity = step
        outcome = RoundOutcome(clients, float(np.mean(local_loss)), float(result.error), int(result.contributors),
                               dict(result.diagnostics))
        return w_next, outcome

    def _chunks(self, w: np.ndarray, clients: np.ndarray, round_index: int, local_loss: np.ndarray):
        """The round's chunks as ``(rows, updates)`` for ``aggregate_stream``, each checked for finite values;
        the clients' local losses are written into ``local_loss`` [K] as their chunks pass."""
        start = 0
        for chunk in self.trainer.train_chunks(w, clients, round_index):
            rows = np.arange(start, start + len(chunk.clients))
            self._check_finite(round_index + 1, chunk.clients, chunk.updates)
            local_loss[rows] = chunk.local_loss
            start += rows.size
            yield rows, chunk.updates

    @staticmethod
    def _check_finite(number: int, clients: np.ndarray, updates: np.ndarray) -> None:
        bad = ~np.all(np.isfinite(updates), axis=1)
        if bad.any():
            raise NonFiniteModelError(
                number,
                f"local training of client(s) {np.asarray(clients)[bad].tolist()} produced a non-finite model differential "
                f"(divergent SGD: lower training.lr)",
            )
