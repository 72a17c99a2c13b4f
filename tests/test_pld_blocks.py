"""FLORAS's PLD with B pilot blocks a round (model §9.5, "Several pilots"): the mixture over V_min = min_m V_m.

Block m's entries carry N(0, V_m), V_m = γ²/Z_m², Z_m i.i.d. N(0, 1). Given V the release is a post-processing of the
release with V_min on every entry, so one round's privacy profile is at most δ(ε) = E[δ_q(ε; σ = γ/M)] with
M = max_m |Z_m|, P(M ≤ z) = (2Φ(z) − 1)^B, δ_q the (sampled) Gaussian profile. The reference below integrates that
expectation by quadrature over M's density B·2φ(z)·(2Φ(z) − 1)^(B−1) with dp_accounting's closed-form Gaussian
profile; the code under test builds geometric panels in |Z| (every V replaced by its panel's smallest), the
connect-the-dots PMF and the mixture. It must lie between the exact profile's ε and that of the panel-pessimistic
law (z → 1.05·z, the panel ratio), up to one discretization step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_mechanism as plm
from scipy.optimize import brentq
from scipy.stats import norm

from privacy.pld import PANEL_RATIO, Z_LO, cauchy_mixture_pld

H = 1e-3  # the PLD's discretization interval (nats)
DELTA = 1e-5


def _gaussian_profiles(eps: float, sigma: np.ndarray, *, S: float, q: float) -> list[np.ndarray]:
    """δ(ε) of the pair A = qN(S, σ²) + (1 − q)N(0, σ²) against Q = N(0, σ²), both directions (q = 1: the Gaussian
    mechanism, one direction suffices), in closed form from the monotone loss ln(q·e^((2xS − S²)/(2σ²)) + 1 − q)."""
    def threshold(e):  # x where the loss equals e (σ-array), or None where it never does
        arg = (math.exp(e) - (1.0 - q)) / q
        return None if arg <= 0.0 else sigma**2 / S * math.log(arg) + S / 2.0

    x = threshold(eps)  # A against Q: loss > ε for x > x*
    out = [q * norm.sf((x - S) / sigma) + (1.0 - q) * norm.sf(x / sigma) - math.exp(eps) * norm.sf(x / sigma)]
    if q < 1.0:
        xa = threshold(-eps)  # Q against A: loss < −ε for x < x_a
        out.append(np.zeros_like(sigma) if xa is None else
                   norm.cdf(xa / sigma) - math.exp(eps) * (q * norm.cdf((xa - S) / sigma) + (1.0 - q) * norm.cdf(xa / sigma)))
    return out


def _reference_epsilon(*, S: float, gamma: float, blocks: int, rate: float, stretch: float = 1.0) -> float:
    """ε at DELTA of one round from the quadrature of the module text; ``stretch`` multiplies M (panel-pessimistic)."""
    z = np.linspace(1e-4, 9.0, 20001)
    w = blocks * 2.0 * norm.pdf(z) * (2.0 * norm.cdf(z) - 1.0) ** (blocks - 1)
    w /= w.sum()  # uniform grid; the mass beyond 9 is below 10⁻¹⁸
    sigma = gamma / np.maximum(stretch * z, Z_LO if stretch > 1.0 else 0.0)

    def profile(eps: float) -> float:
        return max(float(np.dot(w, d)) for d in _gaussian_profiles(eps, sigma, S=S, q=rate))

    return brentq(lambda e: profile(e) - DELTA, 1e-6, 60.0, xtol=1e-8)


def test_the_reference_profile_is_dp_accountings_gaussian_profile():
    sigma = np.array([0.7, 3.0, 12.0])
    for q in (1.0, 0.2):
        for eps in (0.05, 0.5, 2.0):
            mine = _gaussian_profiles(eps, sigma, S=1.3, q=q)
            for row, adjacency in zip(mine, (plm.AdjacencyType.REMOVE, plm.AdjacencyType.ADD)):
                lib = [plm.GaussianPrivacyLoss(s, sensitivity=1.3, sampling_prob=q, adjacency_type=adjacency)
                       .get_delta_for_epsilon(eps) for s in sigma]
                np.testing.assert_allclose(row, lib, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("S, gamma, blocks, rate", [
    (1.0, 12.0, 4, 1.0),     # unsampled
    (2.0, 12.0, 3, 0.2),     # Poisson-sampled, both directions
])
def test_one_round_lies_between_the_exact_and_the_panel_pessimistic_mixture(S, gamma, blocks, rate):
    got = cauchy_mixture_pld(sensitivity=S, gamma=gamma, rate=rate, discretization=H, blocks=blocks)
    eps = float(got.get_epsilon_for_delta(DELTA))
    exact = _reference_epsilon(S=S, gamma=gamma, blocks=blocks, rate=rate)
    upper = _reference_epsilon(S=S, gamma=gamma, blocks=blocks, rate=rate, stretch=PANEL_RATIO)
    assert exact - 1e-6 <= eps <= upper + H, (exact, eps, upper)
    # the blocks matter: the one-pilot law (B = 1) lies below the B-block exact value, outside this sandwich
    one = _reference_epsilon(S=S, gamma=gamma, blocks=1, rate=rate, stretch=PANEL_RATIO)
    assert one + H < exact


def test_more_blocks_never_lower_the_epsilon_and_the_tail_mass_stays_that_of_one_block():
    eps = [float(cauchy_mixture_pld(sensitivity=1.0, gamma=12.0, rate=0.2, sampling="without-replacement",
                                    blocks=b).self_compose(50).get_epsilon_for_delta(DELTA)) for b in (1, 2, 8)]
    assert eps[0] < eps[1] < eps[2]
    # the infinite-loss mass of a round: 2Φ̄(6.7) at B = 1 and, by the choice of z_max, at most that for every B
    for b in (1, 5, 1000):
        pmf = cauchy_mixture_pld(sensitivity=1e-3, gamma=1.0, rate=1.0, blocks=b)._pmf_remove
        assert pmf._infinity_mass <= 2.0 * norm.sf(6.7) * (1 + 1e-9)


def test_blocks_is_validated():
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="blocks must be an integer ≥ 1"):
            cauchy_mixture_pld(sensitivity=1.0, gamma=12.0, blocks=bad)
    assert math.isfinite(PANEL_RATIO)
