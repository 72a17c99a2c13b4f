"""Privacy events: frozen descriptions of mechanisms, evaluated by :mod:`privacy.accountant`.

An event only describes what happened (a Cauchy-noise round, a Gaussian release, a sampling
wrapper, a composition); it holds no RDP numbers. Every event validates its own fields on
construction, so a malformed event cannot exist. The nesting follows Google's dp_accounting
(``dp_event.py``): sampling wrappers and compositions hold other events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "PrivacyEvent",
    "CauchyRound",
    "GaussianRound",
    "SampledWithoutReplacement",
    "PoissonSampled",
    "SelfComposed",
    "Composed",
]


def _nonneg(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number ≥ 0 (got {value!r})")


def _int_at_least(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low} (got {value!r})")


class PrivacyEvent:
    """Base class of every event (a marker; the accountant dispatches on the concrete type)."""

    __slots__ = ()


@dataclass(frozen=True)
class CauchyRound(PrivacyEvent):
    """One FLORAS release under T1: Σ_k s_k/b plus isotropic multivariate Cauchy noise (SPEC §7.2).

    Attributes
    ----------
    gamma : float ≥ 0
        Cauchy scale γ = N − K (0: no noise, ε = ∞).
    sensitivity : float ≥ 0
        ℓ2 sensitivity S of Σ_k s_k/b (dimensionless).
    scalar : bool
        False (default): the multivariate bound ε(α) = −ln(1 − α(α−1)S²/γ²)/(2(α−1)), valid for
        every dimension. True: the exact RDP of a one-dimensional release (d = 1 only).
    """

    gamma: float
    sensitivity: float
    scalar: bool = False

    def __post_init__(self):
        _nonneg("gamma", self.gamma)
        _nonneg("sensitivity", self.sensitivity)
        if not isinstance(self.scalar, bool):
            raise ValueError(f"scalar must be True or False (got {self.scalar!r})")


@dataclass(frozen=True)
class GaussianRound(PrivacyEvent):
    """A Gaussian release N(0, σ²I) of a sum with ℓ2 sensitivity S (cross-checks, baselines)."""

    noise_std: float
    sensitivity: float = 1.0

    def __post_init__(self):
        _nonneg("noise_std", self.noise_std)
        _nonneg("sensitivity", self.sensitivity)


@dataclass(frozen=True)
class SampledWithoutReplacement(PrivacyEvent):
    """``event`` run on ``sample_size`` of ``population_size`` elements drawn uniformly without replacement.

    Evaluated with Wang, Balle & Kasiviswanathan 2019 (arXiv:1808.00087, Thm 9); neighbouring
    relation replace-one. For client sampling: sample_size = K, population_size = M.
    """

    event: PrivacyEvent
    sample_size: int
    population_size: int

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent (got {type(self.event).__name__})")
        _int_at_least("sample_size", self.sample_size, 1)
        _int_at_least("population_size", self.population_size, 1)
        if self.sample_size > self.population_size:
            raise ValueError(
                f"sample_size must be ≤ population_size (got {self.sample_size} > {self.population_size})"
            )

    @property
    def rate(self) -> float:
        return self.sample_size / self.population_size


@dataclass(frozen=True)
class PoissonSampled(PrivacyEvent):
    """``event`` run on a Poisson subsample: every element kept independently with probability ``rate``.

    Evaluated with Zhu & Wang 2019 (ICML, Thm 6); neighbouring relation add/remove.
    """

    event: PrivacyEvent
    rate: float

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent (got {type(self.event).__name__})")
        if isinstance(self.rate, bool) or not isinstance(self.rate, (int, float)) or not (0.0 < self.rate <= 1.0):
            raise ValueError(f"rate must be in (0, 1] (got {self.rate!r})")


@dataclass(frozen=True)
class SelfComposed(PrivacyEvent):
    """``event`` repeated ``count`` times (adaptive composition: RDP adds order by order)."""

    event: PrivacyEvent
    count: int

    def __post_init__(self):
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent (got {type(self.event).__name__})")
        _int_at_least("count", self.count, 0)


@dataclass(frozen=True)
class Composed(PrivacyEvent):
    """The events of ``events`` run one after the other (RDP adds order by order)."""

    events: tuple

    def __post_init__(self):
        if not isinstance(self.events, tuple):
            object.__setattr__(self, "events", tuple(self.events))
        for i, e in enumerate(self.events):
            if not isinstance(e, PrivacyEvent):
                raise ValueError(f"events[{i}] must be a PrivacyEvent (got {type(e).__name__})")
