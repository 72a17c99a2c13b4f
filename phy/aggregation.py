"""The one aggregation interface between the learning loop and the uplink (model §1, §6).

The FL server hands the K scheduled clients' model differentials x_k (a K×d array, model
units) and the round index to an :class:`Aggregator` (built by :func:`phy.schemes.make_aggregator`
from the scheme registry); the aggregator normalizes (model §2),
sends the normalized vectors over its uplink, estimates their sum, de-normalizes and
returns an :class:`AggregationResult`. All randomness of the round is drawn from streams
keyed by ``(seed, purpose, round, ...)`` (see :mod:`phy.randomness`), so the result is a
pure function of (configuration, seed, key, round, updates).

The server then applies w_{t+1} = w_t + x̂ / K' with K' = ``result.contributors``
(K for FLORAS and ideal aggregation, the admitted count for channel inversion; a round
with K' = 0 leaves the model unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol, runtime_checkable

import numpy as np

from .config import PhyConfig

__all__ = ["AggregationResult", "Aggregator", "check_updates", "relative_error", "noise_metrics", "clipped_sum",
           "clipped_metrics", "clipped_sum_factored", "stream_chunks", "concatenate_chunks", "add_rows",
           "aggregate_concatenated", "supports_streaming"]


@dataclass(frozen=True)
class AggregationResult:
    """What the server obtains from one round of uplink aggregation.

    Attributes
    ----------
    sum_estimate : [d] float64
        x̂, the server's estimate of Σ_{k ∈ contributors} x_k [model units].
    contributors : int
        K', the number of clients whose updates x̂ contains (K, or the admitted count).
    error : float
        Normalized squared error ‖x̂ − Σ_{k∈contributors} x_k‖² / ‖Σ_{k∈contributors} x_k‖² against the
        raw (unclipped) sum (0/0 is reported as 0; x/0 as inf).
    diagnostics : mapping str → float
        Scheme-specific per-round values (FLORAS: ``V`` the conditional noise variance;
        channel inversion: ``admitted``; all: ``nmse`` and ``channel_uses``, the real channel
        uses of the round, model §5; ``noise_energy`` and ``clipped_nmse``, :func:`noise_metrics`).
    """

    sum_estimate: np.ndarray
    contributors: int
    error: float
    diagnostics: Mapping[str, float] = field(default_factory=dict)

    @property
    def mean_estimate(self) -> np.ndarray:
        """x̂ / K' — the FedAvg step; zeros when K' = 0."""
        if self.contributors == 0:
            return np.zeros_like(self.sum_estimate)
        return self.sum_estimate / self.contributors


@runtime_checkable
class Aggregator(Protocol):
    """A scheme that turns K update vectors into the server's estimate of their sum."""

    config: PhyConfig

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients: np.ndarray | None = None) -> AggregationResult:
        """Aggregate the K×d ``updates`` of round ``round_index`` (≥ 0).

        ``clients``: the K scheduled clients' identities in the population (their positions in the cell,
        model §5.1, are a function of the identity); None means 0..K−1. Schemes without a cell ignore it.
        """
        ...

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int,
                         clients: np.ndarray | None = None) -> tuple[AggregationResult, object]:
        """``aggregate`` and the scheme's per-round trace (the simulator's view, for link studies), or None."""
        ...

    def describe(self) -> dict:
        """Parameters and conventions (SNR definition, resource convention) for reports."""
        ...


# --- streaming: the round's updates in chunks (model §1, §6.1) ------------------------------------------------
#
# ``aggregate_stream(chunks, *, round_index, clients)`` is the optional streaming form of ``aggregate``:
# ``chunks`` is an iterable of ``(rows, updates)``, rows [c] int the positions 0..K−1 of the chunk's clients in
# the round (consecutive, in the sampled order) and updates [c, d]. A scheme that implements it keeps running
# sums over the chunks (memory O(c·d), independent of K) and returns exactly — bit for bit — what ``aggregate``
# returns on the concatenated K×d array: every d-vector sum is accumulated one client after another in client
# order (:func:`add_rows`, the order numpy's axis-0 sums and einsum("k,kd->d") use), and the per-client scalars
# (μ_k, norms, factors, [K] arrays) are kept whole, so no result depends on the chunk size. A scheme that needs
# all K updates at once (e.g. the ``paper`` normalization's C_max = max_k ‖x_k − μ_k‖, a statistic over all K
# before any s_k exists, model §2) says so explicitly with :func:`aggregate_concatenated`.


def supports_streaming(aggregator) -> bool:
    """True when ``aggregator`` declares the streaming form (an ``aggregate_stream`` method)."""
    return callable(getattr(aggregator, "aggregate_stream", None))


def stream_chunks(chunks, *, K: int, d: int, finite: bool = True):
    """Validate a round's chunks and yield them as ``(rows [c] int64, updates [c, d] float64)``.

    Rows must be the consecutive positions of the sampled order, 0..K−1 exactly once over the round (the
    order every running sum takes); updates finite (:func:`check_updates`). ValueError otherwise.
    ``finite=False`` leaves the finite check to a consumer whose first pass over the chunk makes it anyway
    (:func:`phy.normalization.clipped_rows`, :func:`phy.normalization.row_factors`: a non-finite element makes its
    row's sum non-finite), so that the chunk is not read once more only for it.
    """
    start = 0
    for rows, updates in chunks:
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        x = check_updates(updates, K=rows.size, d=d, finite=finite)
        if rows.size == 0 or not np.array_equal(rows, np.arange(start, start + rows.size)):
            raise ValueError(f"chunk rows must be the next consecutive positions {start}..{start + rows.size - 1} of "
                             f"the round's K = {K} clients in sampled order (got {rows.tolist()})")
        if start + rows.size > K:
            raise ValueError(f"the chunks hold more than K = {K} clients")
        start += rows.size
        yield rows, x
    if start != K:
        raise ValueError(f"the chunks hold {start} clients; the round has K = {K}")


def concatenate_chunks(chunks, *, K: int, d: int) -> np.ndarray:
    """The K×d array of a round's chunks (the generic, non-streaming fallback: memory O(K·d))."""
    x = np.empty((int(K), int(d)))
    for rows, upd in stream_chunks(chunks, K=K, d=d):
        x[rows[0] : rows[-1] + 1] = upd
    return x


def aggregate_concatenated(aggregator, chunks, *, round_index: int, clients=None) -> AggregationResult:
    """``aggregator.aggregate`` on the concatenated chunks: the explicit fallback of a scheme (or a configuration)
    that needs all K updates at once (memory O(K·d))."""
    x = concatenate_chunks(chunks, K=aggregator.K, d=aggregator.d)
    return aggregator.aggregate(x, round_index=round_index, clients=clients)


def add_rows(acc: np.ndarray, x: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """acc += Σ_i w_i·x_i, one row after another in row order (the order of ``x.sum(axis=0)`` and of
    ``np.einsum("k,kd->d", w, x)``), so a sum over chunks equals the sum over their concatenation bit for bit."""
    if weights is None:
        for row in x:
            acc += row
    else:
        for wi, row in zip(weights, x):
            acc += wi * row
    return acc


def check_updates(updates: np.ndarray, *, K: int | None = None, d: int | None = None, finite: bool = True
                  ) -> np.ndarray:
    """Validate a K×d array of finite updates (K, d checked when given; finiteness unless ``finite`` is False:
    the caller checks it) and return it as float64."""
    x = np.asarray(updates, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"updates must be a K×d array with K ≥ 1 and d ≥ 1 (got shape {x.shape})")
    if K is not None and x.shape[0] != K:
        raise ValueError(f"updates must have K = {K} rows (got {x.shape[0]})")
    if d is not None and x.shape[1] != d:
        raise ValueError(f"updates must have d = {d} columns (got {x.shape[1]})")
    if finite and not np.all(np.isfinite(x)):
        raise ValueError("updates must be finite")
    return x


def relative_error(estimate: np.ndarray, target: np.ndarray) -> float:
    """‖estimate − target‖² / ‖target‖² with 0/0 = 0 and x/0 = inf."""
    num = float(np.sum((estimate - target) ** 2))
    den = float(np.sum(target**2))
    if den == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / den


def noise_metrics(estimate: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """``noise_energy`` = ‖x̂ − Σ x̃_k‖² [model units²] and ``clipped_nmse`` = that / ‖Σ x̃_k‖² (0/0 = 0, x/0 = inf).

    ``target`` is Σ_{contributors} x̃_k, x̃_k the normalized-then-de-normalized update (what the channel is
    asked to deliver, :func:`clipped_sum`); the raw-sum error (``relative_error`` against Σ x_k) hides
    noise when the raw updates are large (model §6.4).
    """
    target = np.asarray(target, dtype=np.float64)
    diff = np.asarray(estimate, dtype=np.float64) - target
    # numpy's pairwise sums of the squares, not BLAS's dot: a dot product's order (and last bits) depends on the
    # BLAS thread count, so a run's diagnostics would differ between a sweep's one-thread worker and a run here
    num = float(np.add.reduce(np.multiply(diff, diff, out=diff)))
    den = float(np.add.reduce(target * target))
    nmse = (0.0 if num == 0.0 else float("inf")) if den == 0.0 else num / den
    return {"noise_energy": num, "clipped_nmse": nmse}


def clipped_sum(normalized, mask: np.ndarray | None = None) -> np.ndarray:
    """Σ_{k∈mask} x̃_k = scale·Σ_{k∈mask} s_k + Σ_{k∈mask} μ_k [model units] of a :class:`phy.normalization.Normalized`."""
    s, mu = normalized.s, normalized.mu
    if mask is not None:
        s, mu = s[mask], mu[mask]
    return normalized.scale * s.sum(axis=0) + float(mu.sum())


def clipped_metrics(estimate: np.ndarray, normalized, mask: np.ndarray | None = None) -> dict[str, float]:
    """:func:`noise_metrics` against the contributors' (``mask``; all when None) clipped sum."""
    return noise_metrics(estimate, clipped_sum(normalized, mask))


def clipped_sum_factored(x: np.ndarray, factors) -> np.ndarray:
    """Σ_k x̃_k from the factored normalization (:class:`phy.normalization.RowFactors`), without forming s."""
    s_sum = np.einsum("k,kd->d", factors.factor, x) - float(factors.factor @ factors.mu)
    return factors.scale * s_sum + float(factors.mu.sum())
