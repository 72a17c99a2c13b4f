"""Privacy events: frozen descriptions of mechanisms, evaluated by :mod:`privacy.accountant`.

An event describes what happened (a Cauchy-noise round, a Gaussian release, a sampling wrapper,
a composition) and stores no accounting results. Every event validates its fields on construction,
so a malformed event cannot exist. The nesting follows Google's dp_accounting (``dp_event.py``).

A leaf event (one mechanism) declares its own accounting through the methods of
:class:`PrivacyEvent`, delegating to the modules holding the mathematics: a new mechanism is one
class. The wrappers (sampling, ``SelfComposed``, ``Composed``) are the composition algebra,
evaluated structurally by :mod:`privacy.accountant`, :mod:`privacy.pld` and :mod:`privacy.gdp`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PrivacyEvent",
    "CauchyRound",
    "GaussianRound",
    "DDGaussRound",
    "RandomizedResponseRound",
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
    """Base class of every event; a leaf event overrides the methods its mechanism supports.

    Events must stay frozen and hashable (the accountant caches curves keyed on the event).
    """

    __slots__ = ()

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """RDP curve ε(α) [n] float64 at ``orders`` (nats, ∞ allowed); default: unsupported."""
        raise ValueError(f"unsupported privacy event {type(self).__name__}")

    def eps_inf(self) -> float:
        """An upper bound on the pure-DP level ε(∞); default ∞ (none known)."""
        return math.inf

    def sampled_rdp(self, orders: np.ndarray, *, scheme: str, rate: float) -> np.ndarray | None:
        """A mechanism-specific curve when subsampled (``scheme`` "without-replacement" or "poisson"; the
        accountant takes its minimum with the generic bound), or None (default): the generic bound alone."""
        return None

    def pld(self, *, rate: float, discretization: float):
        """dp_accounting PrivacyLossDistribution, Poisson-sampled at ``rate`` (1.0: unsampled); default unsupported."""
        from privacy.pld import NO_PLD, _unsupported
        raise _unsupported(self, NO_PLD)

    def gdp_mu(self, rounds: int, *, sampling: str | None, rate: float) -> tuple[float, bool, str]:
        """(μ-GDP after ``rounds``, approximate?, rule text), ``sampling`` None, "poisson" or
        "without-replacement" at ``rate``; default unsupported."""
        from privacy.gdp import _unsupported
        raise _unsupported(self, sampling)


@dataclass(frozen=True)
class CauchyRound(PrivacyEvent):
    """One FLORAS release under T1: Σ_k s_k/b plus isotropic multivariate Cauchy noise (model §7.2).

    Attributes
    ----------
    gamma : float ≥ 0
        Cauchy scale γ = N − K (0: no noise, ε = ∞).
    sensitivity : float ≥ 0
        ℓ2 sensitivity S of Σ_k s_k/b (dimensionless).
    scalar : bool
        False (default): the multivariate bound ε(α) = −ln(1 − α(α−1)S²/γ²)/(2(α−1)), valid for
        every dimension. True: the exact RDP of a one-dimensional release (d = 1 only).
    blocks : int ≥ 1
        Pilot blocks per round, each entry's noise of its block's own V_m, the V_m independent (model §9.5,
        "Several pilots"). The unsampled curve is the same for every B; the sampled one (B > 1) averages a
        convex majorant of the sampled-Gaussian moment; the PLD (B > 1) is the mixture over V_min = min_m V_m.
    antennas : int ≥ 1
        Receive antennas N_r of the base station, whose maximum-ratio combiner leaves V = Σ_j 1/χ²_{N_r,j} over the
        γ inactive sequences (model §5.2; §9.5, "Several antennas"); γ whole, multivariate release.
        Its Rényi curve is ln E[e^{α(α−1)S²/(2V)}]/(α−1) (:mod:`privacy.antenna_rdp`), its Poisson-sampled curve that
        average of the sampled-Gaussian moment; sampled without replacement it takes the generic bound alone. With
        B > 1 pilot blocks (model §5.2, "Antennas over coherence blocks") the unsampled curve is the same (the log
        moment ln E[e^{c/V}] is convex in c and 0 at 0, so an update split over independent blocks loses at most what
        one block loses), the sampled curves are the generic bounds on it, and the PLD is the mixture over the law
        of V_min = min_m V_m (:func:`privacy.antenna_noise.noise_law` with ``blocks``).
    """

    gamma: float
    sensitivity: float
    scalar: bool = False
    blocks: int = 1
    antennas: int = 1

    def __post_init__(self):
        _nonneg("gamma", self.gamma)
        _nonneg("sensitivity", self.sensitivity)
        if not isinstance(self.scalar, bool):
            raise ValueError(f"scalar must be True or False (got {self.scalar!r})")
        _int_at_least("blocks", self.blocks, 1)
        if self.scalar and self.blocks > 1:
            raise ValueError("a scalar release (d = 1) has one pilot block: blocks must be 1")
        _int_at_least("antennas", self.antennas, 1)
        if self.antennas > 1 and (self.scalar or not float(self.gamma).is_integer()):
            raise ValueError(f"antennas = {self.antennas} is derived for the multivariate release and a whole γ (got "
                             f"scalar = {self.scalar}, gamma = {self.gamma!r})")

    def rdp(self, orders):
        from privacy import rdp as _rdp
        if self.antennas > 1 and self.gamma > 0:  # γ = 0: no noise, the Cauchy curve's ε = ∞ holds for any N_r
            from privacy.antenna_rdp import antenna_rdp
            return antenna_rdp(orders, sensitivity=self.sensitivity, gamma=int(self.gamma), antennas=self.antennas)
        fn = _rdp.cauchy_scalar_rdp if self.scalar else _rdp.cauchy_rdp_bound
        return fn(orders, sensitivity=self.sensitivity, gamma=self.gamma)

    def eps_inf(self):  # multivariate: revealing V makes the release Gaussian given V, no pure-DP level
        from privacy.rdp import cauchy_scalar_eps_inf
        if self.sensitivity == 0:
            return 0.0
        return cauchy_scalar_eps_inf(sensitivity=self.sensitivity, gamma=self.gamma) if self.scalar else math.inf

    def sampled_rdp(self, orders, *, scheme, rate):
        if self.scalar:
            return None
        if self.antennas > 1 and self.gamma > 0:
            # without replacement: the generic bound on the V-average curve is the V-average of that bound; several
            # pilot blocks: the V-average is over one V, not a split over B of them, so the generic bound alone
            if scheme != "poisson" or self.blocks > 1:
                return None
            from privacy.antenna_rdp import antenna_poisson_sampled_rdp
            return antenna_poisson_sampled_rdp(orders, rate=rate, sensitivity=self.sensitivity, gamma=int(self.gamma),
                                               antennas=self.antennas)
        from privacy.floras_tight import cauchy_sampled_rdp
        return cauchy_sampled_rdp(orders, scheme=scheme, rate=rate, sensitivity=self.sensitivity, gamma=self.gamma,
                                  blocks=self.blocks)[0]

    def pld(self, *, rate, discretization):
        from privacy.pld import cauchy_round_pld
        return cauchy_round_pld(self, rate=rate, discretization=discretization)


@dataclass(frozen=True)
class GaussianRound(PrivacyEvent):
    """A Gaussian release N(0, σ²I) of a sum with ℓ2 sensitivity S (cross-checks, baselines)."""

    noise_std: float
    sensitivity: float = 1.0

    def __post_init__(self):
        _nonneg("noise_std", self.noise_std)
        _nonneg("sensitivity", self.sensitivity)

    def rdp(self, orders):
        from privacy.rdp import gaussian_rdp
        return gaussian_rdp(orders, noise_std=self.noise_std, sensitivity=self.sensitivity)

    def eps_inf(self):
        return 0.0 if self.sensitivity == 0 else math.inf

    def sampled_rdp(self, orders, *, scheme, rate):
        from privacy.sampled_gaussian import gaussian_round_sampled_rdp
        return gaussian_round_sampled_rdp(orders, self, scheme=scheme, rate=rate)

    def pld(self, *, rate, discretization):
        from privacy.pld import gaussian_round_pld
        return gaussian_round_pld(self, rate=rate, discretization=discretization)

    def gdp_mu(self, rounds, *, sampling, rate):
        from privacy.gdp import gaussian_round_mu
        return gaussian_round_mu(self, rounds, sampling=sampling, rate=rate)


@dataclass(frozen=True)
class DDGaussRound(PrivacyEvent):
    """One DDGauss round: n clients' discretized, rotated updates plus discrete Gaussian noise (model §9.2).

    Attributes
    ----------
    n : int ≥ 1
        Contributors whose noise adds up in the secure sum.
    d : int ≥ 1
        Model dimension; the bound uses the padded dimension d_pad = 2^⌈log2 d⌉ (idempotent).
    clip : float > 0
        ℓ2 clip norm c (model units).
    grid : float > 0
        Grid step γ (model units).
    local_std : float ≥ 0
        Each client's discrete Gaussian noise scale σ (model units); the sum has scale √n·σ.
    beta : float in [0, 1)
        Failure probability of the conditional rounding's norm bound (default e^{−1/2}); 0 is
        unconditional rounding, whose bound has the finite limit Δ₂ = c/γ + √d_pad.
    noise_fraction : float in (0, 1]
        Lower bound on the fraction of the n contributors' noise variance n·σ² that reaches the sum
        (1 − f under dropout after noising of a fraction f, model §9.2): l₁, l₂ use the total noise
        std √(ρn)·σ; τ keeps n terms at σ (an upper bound on the survivors' τ).
    relation : "add-remove" or "replace"
        add-remove (the text's Thm 1: remove = zero the client's vector) or replace-one
        (l₁ and l₂ doubled).
    """

    n: int
    d: int
    clip: float
    grid: float
    local_std: float
    beta: float = math.exp(-0.5)
    relation: str = "add-remove"
    noise_fraction: float = 1.0

    def __post_init__(self):
        _int_at_least("n", self.n, 1)
        _int_at_least("d", self.d, 1)
        for name in ("clip", "grid"):
            v = getattr(self, name)
            _nonneg(name, v)
            if v == 0:
                raise ValueError(f"{name} must be a finite number > 0 (got {v!r})")
        _nonneg("local_std", self.local_std)
        if isinstance(self.beta, bool) or not isinstance(self.beta, (int, float)) or not (0.0 <= self.beta < 1.0):
            raise ValueError(f"beta must be in [0, 1) (got {self.beta!r})")
        nf = self.noise_fraction
        if isinstance(nf, bool) or not isinstance(nf, (int, float)) or not (0.0 < nf <= 1.0):
            raise ValueError(f"noise_fraction must be in (0, 1] (got {nf!r})")
        if self.relation not in ("add-remove", "replace"):
            raise ValueError(f"relation must be one of {{add-remove, replace}} (got {self.relation!r})")

    @property
    def d_pad(self) -> int:
        return 1 << (int(self.d) - 1).bit_length()

    @property
    def delta2(self) -> float:
        """Δ₂ = min{c/γ + √d, √((c/γ)² + d/4 + √(2 ln(1/β))·(c/γ + √d/2))} in grid units (model §9.2);
        β = 0: the limit c/γ + √d (unconditional rounding)."""
        r, d = self.clip / self.grid, float(self.d_pad)
        if self.beta == 0:
            return r + math.sqrt(d)
        return min(r + math.sqrt(d), math.sqrt(r * r + d / 4.0 + math.sqrt(2.0 * math.log(1.0 / self.beta)) * (r + math.sqrt(d) / 2.0)))

    def rdp(self, orders):  # eps_inf: ∞ (default); no tight sampled curve, PLD or GDP
        from privacy.ddgauss import ddgauss_rdp
        return ddgauss_rdp(orders, self)


@dataclass(frozen=True)
class RandomizedResponseRound(PrivacyEvent):
    """A pure ε₀-DP (local DP) round; accounted with the RDP of binary randomized response of the same ε₀.

    Binary randomized response is the worst case among ε₀-DP pairs for every Rényi order, so its
    curve bounds any ε₀-DP mechanism (model §9.3).
    """

    epsilon0: float

    def __post_init__(self):
        _nonneg("epsilon0", self.epsilon0)

    def rdp(self, orders):
        from privacy.randomized_response import randomized_response_rdp
        return randomized_response_rdp(orders, epsilon0=self.epsilon0)

    def eps_inf(self):
        return float(self.epsilon0)

    def pld(self, *, rate, discretization):
        from privacy.pld import randomized_response_pld
        return randomized_response_pld(self, rate=rate, discretization=discretization)


@dataclass(frozen=True)
class SampledWithoutReplacement(PrivacyEvent):
    """``event`` run on ``sample_size`` of ``population_size`` elements drawn uniformly without replacement.

    Evaluated with the mechanism-specific bound where one exists (Gaussian: WBK 2019 Thm 27;
    FLORAS Cauchy: the conditional-Gaussian mixture of model §9.5) and otherwise with Wang, Balle &
    Kasiviswanathan 2019 (arXiv:1808.00087, Thm 9); neighbouring relation replace-one. For client sampling: sample_size = K, population_size = M.
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

    Evaluated with the mechanism-specific bound where one exists (Gaussian: Mironov, Talwar & Zhang
    2019, arXiv:1908.10530; FLORAS Cauchy: model §9.5) and otherwise with Zhu & Wang 2019 (ICML,
    Thm 6); neighbouring relation add/remove.
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
