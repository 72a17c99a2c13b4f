"""Gaussian differential privacy (μ-GDP, f-DP) for Gaussian events (model §9.4; Zheng et al. 2021; Dong, Roth & Su 2019,
arXiv:1905.02383). Pure functions plus :func:`event_mu`.

- Gaussian mechanism, ℓ2 sensitivity S, noise σ: exactly μ-GDP with μ = S/σ (DRS Thm 2.7).
- Composition: μ = √(Σ_t μ_t²) (exact, DRS Cor. 3.3).
- Subsampling (APPROXIMATE, central limit theorem; DRS Thm 3.5/Cor. 5.4 and Zheng et al. 2021), noise
  multiplier z = σ/S, rate p, T rounds, each round an independent draw (not shuffling):
  Poisson, add/remove neighbours, S the add/remove sensitivity (C): μ = p√T·√(e^{1/z²} − 1)
  (Bu, Dong, Long & Su, HDSR 2020);
  uniform without replacement (fixed batch, DRS's Sample_m), replace-one neighbours, S the
  replace-one sensitivity of the sum (2C; the base round is G_{1/z}, DRS Thm 4.2):
  μ = √2·p√T·√(e^{1/z²}Φ(1.5/z) + 3Φ(−0.5/z) − 2) (DRS Cor. 5.4 with the symmetrisation
  min{f_p, f_p⁻¹}**; Bu et al.'s compute_muU). The √2 makes both tend to p√T/z as z → ∞: a
  replace-one shift of 1/z noise units and an add/remove shift of 1/z give the same leading
  privacy-loss variance p²/z². Reference (Bu et al.'s published code): p = 256/60000,
  T = 15·60000/256, z = 1.3, δ = 1e-5 → ε = 1.0685.
  The CLT is a limit p → 0 with p√T fixed: it can underestimate ε (Poisson p = 0.2, z = 2.0134,
  T = 200: 7.03 against 7.31 by PLD) or overestimate it (replace-one p = 0.2, z = 3.744, T = 200:
  3.61 against ≈ 3.19 by numerically composing the dominating pair; the WBK RDP bound gives 8.0).
- Exact conversion: δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (DRS Cor. 2.13); ε(δ) by root finding.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

__all__ = ["gaussian_mu", "compose_mu", "clt_mu_poisson", "clt_mu_without_replacement", "gdp_delta", "gdp_epsilon", "event_mu"]


def gaussian_mu(*, sensitivity: float, noise_std: float) -> float:
    """μ = S/σ (∞ when σ = 0, 0 when S = 0)."""
    if sensitivity == 0:
        return 0.0
    return math.inf if noise_std == 0 else float(sensitivity) / float(noise_std)


def compose_mu(mus) -> float:
    return math.sqrt(sum(float(m) ** 2 for m in mus))


def clt_mu_poisson(*, rate: float, noise_multiplier: float, rounds: int) -> float:
    """p√T·√(e^{1/z²} − 1) (approximate)."""
    z = float(noise_multiplier)
    if z == 0:
        return math.inf
    return rate * math.sqrt(rounds) * math.sqrt(math.expm1(1.0 / (z * z)))


def clt_mu_without_replacement(*, rate: float, noise_multiplier: float, rounds: int) -> float:
    """√2·p√T·√(e^{1/z²}Φ(1.5/z) + 3Φ(−0.5/z) − 2) (approximate)."""
    z = float(noise_multiplier)
    if z == 0:
        return math.inf
    inner = math.exp(1.0 / (z * z)) * ndtr(1.5 / z) + 3.0 * ndtr(-0.5 / z) - 2.0
    return math.sqrt(2.0) * rate * math.sqrt(rounds) * math.sqrt(max(inner, 0.0))


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), evaluated in log space."""
    if mu == 0:
        return 0.0
    if mu == math.inf:
        return 1.0
    a = log_ndtr(-epsilon / mu + mu / 2.0)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2.0)
    if b >= a:
        return 0.0
    return float(math.exp(a) * -math.expm1(b - a))


def gdp_epsilon(delta: float, mu: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ (δ(ε) is decreasing in ε)."""
    if mu == 0:
        return 0.0
    if mu == math.inf:
        return math.inf
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return float(brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12))


_WRAPPER_OF = {"poisson": "PoissonSampled", "without-replacement": "SampledWithoutReplacement"}


def _unsupported(event, sampling: str | None = None) -> ValueError:
    """The ValueError for an event accountant gdp cannot handle (``sampling``: the wrapper around the leaf ``event``)."""
    if sampling is None:
        got = type(event).__name__ + (f" of {type(event.event).__name__}" if hasattr(event, "event") else "")
    else:
        got = f"{_WRAPPER_OF[sampling]} of {type(event).__name__}"
    return ValueError(f"accountant gdp supports Gaussian events only (got {got}); use --accountant rdp or pld")


def gaussian_round_mu(event, rounds: int, *, sampling: str | None, rate: float) -> tuple[float, bool, str]:
    """(μ, approximate?, rule) after ``rounds`` of a :class:`privacy.events.GaussianRound`, sampled or not."""
    if sampling is None or rate == 1.0 or event.sensitivity == 0:
        mu = gaussian_mu(sensitivity=event.sensitivity, noise_std=event.noise_std)
        return mu * math.sqrt(rounds), False, "Gaussian mechanism μ = S/σ, composition μ√T (exact; Dong, Roth & Su 2019)"
    z = event.noise_std / event.sensitivity
    if sampling == "poisson":
        return clt_mu_poisson(rate=rate, noise_multiplier=z, rounds=rounds), True, (
            "APPROXIMATE: Poisson subsampling (add/remove, z = σ over the add/remove sensitivity) by the central "
            "limit theorem μ = p√T·√(e^{1/z²} − 1) "
            "(Dong, Roth & Su 2019, arXiv:1905.02383, Cor. 5.4); can underestimate ε")
    if sampling != "without-replacement":
        raise ValueError(f"sampling must be None, poisson or without-replacement (got {sampling!r})")
    return clt_mu_without_replacement(rate=rate, noise_multiplier=z, rounds=rounds), True, (
        "APPROXIMATE: sampling without replacement (independent fixed-size draws, replace-one, z = σ over the "
        "replace-one sensitivity) by the central limit theorem μ = √2·p√T·√(e^{1/z²}Φ(1.5/z) + 3Φ(−0.5/z) − 2) "
        "(Dong, Roth & Su 2019, Cor. 5.4; Zheng et al. 2021, model §9.4); a p → 0 limit, can under- or overestimate ε")


def event_mu(event, rounds: int) -> tuple[float, bool, str]:
    """(μ after ``rounds`` repetitions of ``event``, approximate?, the rule used); ValueError if unsupported.

    ``event`` is a leaf event or a leaf inside one sampling wrapper; the leaf gives its own
    :meth:`~privacy.events.PrivacyEvent.gdp_mu` (Gaussian only, today).
    """
    from privacy.events import Composed, PoissonSampled, PrivacyEvent, SampledWithoutReplacement, SelfComposed

    wrappers = (SampledWithoutReplacement, PoissonSampled, SelfComposed, Composed)
    if isinstance(event, (PoissonSampled, SampledWithoutReplacement)):
        inner = event.event
        if isinstance(inner, PrivacyEvent) and not isinstance(inner, wrappers):
            scheme = "poisson" if isinstance(event, PoissonSampled) else "without-replacement"
            return inner.gdp_mu(rounds, sampling=scheme, rate=event.rate)
    elif isinstance(event, PrivacyEvent) and not isinstance(event, wrappers):
        return event.gdp_mu(rounds, sampling=None, rate=1.0)
    raise _unsupported(event)
