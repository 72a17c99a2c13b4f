"""Tight RDP of the sampled Gaussian mechanism, through dp_accounting (model §7.3, §9.1, §9.5): pure functions.

The noise multiplier z = σ/S is the noise standard deviation in units of the ℓ2 sensitivity S
of the neighbouring relation the sampling scheme assumes.

- Poisson sampling (rate q), add/remove-one neighbours: Mironov, Talwar & Zhang 2019,
  "Rényi differential privacy of the sampled Gaussian mechanism", arXiv:1908.10530, §3.3
  (exact for integer and fractional orders; dp_accounting ``_compute_log_a``).
- Uniform sampling without replacement (m of n, q = m/n), replace-one neighbours: Wang, Balle &
  Kasiviswanathan 2019, arXiv:1808.00087, Theorem 27 (the Gaussian-specific strengthening of
  their Theorem 9) at integer orders; fractional orders by their Corollary 10 (linear
  interpolation of the cumulant generating function (α−1)·ε(α), which is convex in α).

Both are reused from ``dp_accounting.rdp.rdp_privacy_accountant`` (a runtime dependency) rather
than transcribed, so the curves agree with dp_accounting's ``RdpAccountant`` to rounding.
:func:`log_moment` exposes the cumulant generating function (α−1)·ε(α) itself, which
:mod:`privacy.floras_tight` averages over the Cauchy mixing variable.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _dpa_rdp

__all__ = ["SCHEMES", "sampled_gaussian_rdp", "gaussian_round_sampled_rdp", "log_moment", "log_moment_int"]

#: Sampling schemes with a Gaussian-specific bound, and the neighbouring relation each assumes.
SCHEMES = {"poisson": "add-remove", "without-replacement": "replace"}


def _check(scheme: str, rate: float, z: float) -> tuple[float, float]:
    if scheme not in SCHEMES:
        raise ValueError(f"sampling scheme must be one of {{{', '.join(SCHEMES)}}} (got {scheme!r})")
    rate, z = float(rate), float(z)
    if not (0.0 < rate <= 1.0):
        raise ValueError(f"sampling rate must be in (0, 1] (got {rate!r})")
    if not (z >= 0.0) or math.isnan(z):
        raise ValueError(f"noise multiplier must be a number ≥ 0 (got {z!r})")
    return rate, z


def log_moment_int(scheme: str, rate: float, z: float, alpha: int) -> float:
    """(α−1)·ε(α) at an integer order α ≥ 2 (nats; ∞ when z = 0)."""
    rate, z = _check(scheme, rate, z)
    if z == 0.0:
        return math.inf
    if z == math.inf:
        return 0.0
    unsampled = alpha * (alpha - 1) / (2.0 * z * z)
    if rate == 1.0 or unsampled < 1e-12:
        # sampling never increases the divergence; for huge z dp_accounting's log(e^x − 1) underflows
        return unsampled
    try:
        if scheme == "poisson":
            return min(unsampled, float(_dpa_rdp._compute_log_a(rate, z, int(alpha))))
        return min(unsampled, float(_dpa_rdp._compute_rdp_sample_wor_gaussian_int(rate, z, int(alpha))))
    except (ValueError, OverflowError):
        return unsampled


def log_moment(scheme: str, rate: float, z: float, alpha: float) -> float:
    """(α−1)·ε(α) of the sampled Gaussian mechanism at one order α > 1 (nats)."""
    rate, z = _check(scheme, rate, z)
    alpha = float(alpha)
    if z == 0.0:
        return math.inf
    if z == math.inf:
        return 0.0
    if rate == 1.0:
        return alpha * (alpha - 1.0) / (2.0 * z * z)
    if alpha.is_integer():
        return log_moment_int(scheme, rate, z, int(alpha))
    if scheme == "poisson":
        return float(_dpa_rdp._compute_log_a(rate, z, alpha))
    lo, hi = math.floor(alpha), math.ceil(alpha)
    t = alpha - lo
    x = 0.0 if lo == 1 else log_moment_int(scheme, rate, z, lo)
    return (1.0 - t) * x + t * log_moment_int(scheme, rate, z, hi)


def sampled_gaussian_rdp(orders, *, scheme: str, rate: float, noise_multiplier: float) -> np.ndarray:
    """ε(α) [n] float64 of the sampled Gaussian mechanism with noise multiplier z = σ/S (see module doc)."""
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    rate, z = _check(scheme, rate, noise_multiplier)
    if scheme == "poisson":
        out = _dpa_rdp._compute_rdp_poisson_subsampled_gaussian(rate, z, a)
    else:
        out = _dpa_rdp._compute_rdp_sample_wor_gaussian(rate, z, a) if z > 0 else np.full_like(a, math.inf)
    return np.asarray(out, dtype=np.float64)


def gaussian_round_sampled_rdp(orders, event, *, scheme: str, rate: float) -> np.ndarray:
    """The tight sampled curve of a :class:`privacy.events.GaussianRound` (z = σ/S; 0 when S = 0)."""
    if event.sensitivity == 0:
        return np.zeros_like(orders)
    return sampled_gaussian_rdp(orders, scheme=scheme, rate=rate, noise_multiplier=event.noise_std / event.sensitivity)
