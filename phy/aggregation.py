"""The one aggregation interface between the learning loop and the uplink (model §1, §6).

The FL server hands the K scheduled clients' model differentials x_k (a K×d array, model
units) and the round index to an :class:`Aggregator`; the aggregator normalizes (model §2),
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
from .normalization import denormalize, normalize

__all__ = ["AggregationResult", "Aggregator", "IdealAggregator", "make_aggregator", "check_updates"]


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
        Normalized squared error ‖x̂ − Σ_{k∈contributors} x_k‖² / ‖Σ_{k∈contributors} x_k‖²
        (0/0 is reported as 0; x/0 as inf).
    diagnostics : mapping str → float
        Scheme-specific per-round values (FLORAS: ``V`` the conditional noise variance;
        channel inversion: ``admitted``; all: ``nmse`` and ``channel_uses``, the real channel
        uses of the round, model §5).
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

    def aggregate(self, updates: np.ndarray, *, round_index: int) -> AggregationResult:
        """Aggregate the K×d ``updates`` of round ``round_index`` (≥ 0)."""
        ...

    def describe(self) -> dict:
        """Parameters and conventions (SNR definition, resource convention) for reports."""
        ...


def check_updates(updates: np.ndarray, *, K: int | None = None, d: int | None = None) -> np.ndarray:
    """Validate a K×d array of finite updates (K, d checked when given) and return it as float64."""
    x = np.asarray(updates, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"updates must be a K×d array with K ≥ 1 and d ≥ 1 (got shape {x.shape})")
    if K is not None and x.shape[0] != K:
        raise ValueError(f"updates must have K = {K} rows (got {x.shape[0]})")
    if d is not None and x.shape[1] != d:
        raise ValueError(f"updates must have d = {d} columns (got {x.shape[1]})")
    if not np.all(np.isfinite(x)):
        raise ValueError("updates must be finite")
    return x


def relative_error(estimate: np.ndarray, target: np.ndarray) -> float:
    """‖estimate − target‖² / ‖target‖² with 0/0 = 0 and x/0 = inf."""
    num = float(np.sum((estimate - target) ** 2))
    den = float(np.sum(target**2))
    if den == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / den


class IdealAggregator:
    """Noise-free FedAvg with the same normalization (model §6.3): ŝ = Σ_k s_k exactly."""

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int = 0):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = K, d
        from .channel_uses import analog_channel_uses

        # nominal cost of the idealized link: an analog sum of the d entries (model §5)
        self.channel_uses = analog_channel_uses(d=d, L=config.L, resource=config.resource)

    def aggregate(self, updates: np.ndarray, *, round_index: int) -> AggregationResult:
        x = check_updates(updates, K=self.K)
        cfg = self.config
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(x.shape[1]), clip_norm=cfg.clip_norm)
        estimate = denormalize(nz.s.sum(axis=0), nz)
        err = relative_error(estimate, x.sum(axis=0))
        return AggregationResult(estimate, self.K, err, {"channel_uses": float(self.channel_uses), "nmse": err})

    def describe(self) -> dict:
        return {"scheme": "ideal", **self.config.to_dict()}


def make_aggregator(config: PhyConfig, *, K: int, d: int, seed: int, key: bytes | None = None,
                    relation: str = "replace") -> Aggregator:
    """Build the aggregator that ``config.scheme`` names.

    ``key`` is the clients' shared secret for the keyed permutation (model §4, FLORAS only,
    ≥ 16 bytes); it is held by the client side of the FLORAS link and never reaches the
    base-station receiver. ``relation`` ("replace" or "add-remove", the run's
    ``[privacy] relation``) fixes the sensitivity S = 2C or C that the noise multiplier of the
    central and analog Gaussian schemes scales (model §9.1); the other schemes ignore it.
    """
    config.validate(K=K, d=d)
    if config.scheme == "ideal":
        return IdealAggregator(config, K=K, d=d, seed=seed)
    if config.scheme == "floras":
        from .floras import FlorasAggregator

        if key is None:
            raise ValueError("key must be given (≥ 16 bytes) for the FLORAS scheme")
        return FlorasAggregator(config, K=K, d=d, seed=seed, key=key)
    if config.scheme == "channel-inversion":
        from .channel_inversion import ChannelInversionAggregator

        return ChannelInversionAggregator(config, K=K, d=d, seed=seed)
    # ---- private baselines (model §9.1, §9.2)
    if config.scheme == "central-gaussian":
        from .central_gaussian import CentralGaussianAggregator

        return CentralGaussianAggregator(config, K=K, d=d, seed=seed, relation=relation)
    if config.scheme == "analog-gaussian":
        from .analog_gaussian import AnalogGaussianAggregator

        return AnalogGaussianAggregator(config, K=K, d=d, seed=seed, relation=relation)
    if config.scheme == "ddgauss":
        from .digital.ddgauss import DDGaussAggregator

        return DDGaussAggregator(config, K=K, d=d, seed=seed)
    if config.scheme == "sqsgd":
        from .digital.sqsgd import SqsgdAggregator

        return SqsgdAggregator(config, K=K, d=d, seed=seed)
    from .config import SCHEMES

    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)} (got {config.scheme!r})")
