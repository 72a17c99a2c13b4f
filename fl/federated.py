"""The federated round: client sampling, local training, aggregation, FedAvg step (model §1).

Round t (0-based ``round_index``; reported as round t + 1):

1. the server samples the round's clients (:mod:`fl.sampling`): K of M uniformly without replacement from
   the stream ``(seed, "client-sampling", t)`` (``training.sampling = "without-replacement"``, the default), or
   each of the M clients independently with probability q = K/M (``"poisson"``, a cohort of K_t clients,
   E[K_t] = K);
2. the K clients train from w_t (:class:`fl.training.VectorizedTrainer`, in chunks of
   ``training.client_chunk``) and produce x_k = w^k_{t+1} − w_t;
3. the aggregator (any :class:`phy.aggregation.Aggregator`: ideal, FLORAS or channel
   inversion, with its normalization) returns x̂ ≈ Σ_{k ∈ contributors} x_k. An aggregator with the
   streaming form (``aggregate_stream``, :func:`phy.aggregation.supports_streaming`; every built-in scheme)
   consumes the chunks one after another as the trainer yields them (``train_chunks``), so a round holds
   one chunk's updates at a time and the result does not depend on the chunk size; otherwise the chunks
   are gathered into one ``[K, d] float64`` array for ``aggregate``;
4. FedAvg: w_{t+1} = w_t + x̂ / K' (``result.mean_estimate``; K' = contributors, and a round
   with K' = 0 leaves the model unchanged). Poisson sampling uses DP-FedAvg's fixed denominator instead
   (McMahan et al. 2018): w_{t+1} = w_t + x̂ / (qM), qM = K the expected cohort, whatever K_t and K'. The
   released step then reveals K_t only through x̂: under add/remove neighbours K_t changes by one with the
   added client, and a step x̂/K_t would carry that change in its scale, outside the mechanism's noise that
   the accountant covers (x̂/(qM) is a fixed rescaling of the accounted release, post-processing). An empty
   cohort (K_t = 0) trains nobody and leaves the model unchanged (logged as cohort 0, model §1).

With Poisson sampling the aggregator of a round is built for its K_t clients (``aggregator_for(K_t)``,
:func:`phy.cohort.cohort_aggregators`); ``aggregator`` is the one built for K (its description).

A non-finite differential (checked chunk by chunk) or model raises :class:`NonFiniteModelError`
naming the round and the cause; nothing is applied to the model in that round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phy.aggregation import AggregationResult, supports_streaming

from .sampling import SAMPLINGS, round_clients, sample_clients

__all__ = ["sample_clients", "NonFiniteModelError", "RoundOutcome", "FederatedAveraging"]


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
    clients : ``[K] int64`` the scheduled client ids (``[K_t]`` with Poisson sampling, possibly empty)
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

    @property
    def cohort(self) -> int:
        """The round's cohort size: K, or K_t with Poisson sampling (the ``cohort`` column)."""
        return int(len(self.clients))


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
    sampling : "without-replacement" (K exactly) or "poisson" (each client with probability q = K/M; the step
        x̂/(qM), module docstring)
    aggregator_for : with Poisson sampling, ``aggregator_for(n)`` → the aggregator of a round of n clients
        (:func:`phy.cohort.cohort_aggregators`); None: ``aggregator`` itself, which must then accept any n
    """

    def __init__(self, *, trainer, aggregator, M: int, K: int, seed: int, server_momentum: float = 0.0,
                 sampling: str = "without-replacement", aggregator_for=None):
        if sampling not in SAMPLINGS:
            raise ValueError(f"training.sampling must be one of {SAMPLINGS} (got {sampling!r})")
        self.trainer = trainer
        self.aggregator = aggregator
        self.M, self.K, self.seed = M, K, seed
        self.server_momentum = float(server_momentum)
        self.velocity: np.ndarray | None = None
        self.sampling = sampling
        self.aggregator_for = aggregator_for if aggregator_for is not None else (lambda n: aggregator)

    def step(self, w: np.ndarray, round_index: int) -> tuple[np.ndarray, RoundOutcome]:
        """One round from global model ``w`` (``[d] float64``); returns (w_{t+1}, outcome)."""
        number = round_index + 1
        poisson = self.sampling == "poisson"
        clients = round_clients(self.sampling, seed=self.seed, round_index=round_index, M=self.M, K=self.K)
        if clients.size == 0:  # an empty Poisson cohort: nobody trains, the model stays (module docstring)
            outcome = RoundOutcome(clients, float("nan"), 0.0, 0, {"skipped": 1.0})
            return w.copy(), outcome
        aggregator = self.aggregator_for(int(clients.size)) if poisson else self.aggregator
        if supports_streaming(aggregator) and hasattr(self.trainer, "train_chunks"):
            local_loss = np.full(clients.size, np.nan)
            result = aggregator.aggregate_stream(self._chunks(w, clients, round_index, local_loss),
                                                 round_index=round_index, clients=clients)
            if np.isnan(local_loss).any():  # a half-wired scheme: it must consume every chunk
                raise RuntimeError(f"scheme {aggregator.config.scheme!r}: aggregate_stream returned before "
                                   "consuming every chunk of the round (phy.aggregation.stream_chunks)")
        else:
            updates, local_loss = self.trainer.train(w, clients, round_index)
            self._check_finite(number, clients, updates)
            result = aggregator.aggregate(updates, round_index=round_index, clients=clients)
        step = self.fixed_denominator_step(result) if poisson else result.mean_estimate
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

    def fixed_denominator_step(self, result: AggregationResult) -> np.ndarray:
        """x̂ / (qM) with q = K/M, i.e. x̂ / K: DP-FedAvg's fixed denominator (model §1), whatever K_t and K'."""
        return result.sum_estimate / float(self.K)  # qM = (K/M)·M = K, exactly

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
