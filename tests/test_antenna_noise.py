"""FLORAS with N_r receive antennas (model §5.2; §9.5, "Several antennas"): the law of the noise variance and its PLD.

With maximum-ratio combining the release carries, given the pilots, N(0, V) with V = Σ_{j=1}^{γ} 1/X_j, X_j ~ χ²_{N_r}
i.i.d. The references below come from that formula alone: for N_r = 1 the exact Lévy law (V = γ²/Z², so z = γ/√V is
|Z|); for N_r > 1 a Monte Carlo of V with a fixed seed, tolerances from the binomial / sample standard error. The code
under test rounds V down on a grid (at most REL_STEP·v_tail, so z at most a factor 1/√(1 − REL_STEP) too large) and
lumps z below z_max/CAP_RATIO there; its CDF of z must lie below the true one and above the true one at z shrunk by
that factor.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from privacy import FlorasRunAccountant
from privacy.antenna_noise import CAP_RATIO, REL_STEP, TAIL, chernoff_lower_tail, noise_law
from privacy.events import CauchyRound
from privacy.pld import PANEL_RATIO, cauchy_mixture_pld

GAMMA = 12  # N − K = 32 − 20, the matched comparison's FLORAS
SHRINK = 1.0 / math.sqrt(1.0 - REL_STEP)  # the most the rounding can raise z at or above the tail edge's V
N_MC = 400_000


def _mc_z(antennas: int, n: int = N_MC, seed: int = 2026) -> np.ndarray:
    x = np.random.default_rng(seed).chisquare(antennas, size=(n, GAMMA))
    return GAMMA / np.sqrt((1.0 / x).sum(axis=1))


def test_one_antenna_grid_law_brackets_the_exact_levy_law():
    law = noise_law(GAMMA, 1)
    z = np.array([0.4, 0.6, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0])
    z = z[z >= law.z_max / CAP_RATIO * 1.01]
    exact = 2.0 * norm.cdf(z) - 1.0
    got = law.cdf_z(z)
    assert np.all(got <= exact + 1e-12)  # pessimistic: never more noise than the true law
    assert np.all(got >= 2.0 * norm.cdf(z / SHRINK) - 1.0 - 1e-10)  # and within the grid's rounding
    # the tail sent to the infinite loss: at least the exact one, at most the Chernoff bound's TAIL
    assert 2.0 * norm.sf(law.z_max) <= law.tail <= TAIL


@pytest.mark.parametrize("antennas", [2, 4])
def test_grid_law_brackets_a_monte_carlo_of_the_combiner_noise(antennas):
    law = noise_law(GAMMA, antennas)
    zs = _mc_z(antennas)
    probes = np.quantile(zs, [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999])
    for z in probes:
        emp = float(np.mean(zs <= z))
        se = math.sqrt(max(emp * (1.0 - emp), 1.0 / N_MC) / N_MC)
        got = float(law.cdf_z(z))
        assert got <= emp + 5.0 * se, (antennas, z, got, emp)
        assert got >= float(np.mean(zs <= z / SHRINK)) - 5.0 * se, (antennas, z, got, emp)


def test_more_antennas_mean_less_noise_and_a_wider_tail_edge():
    laws = [noise_law(GAMMA, n) for n in (1, 2, 4, 8)]
    assert [round(law.z_max, 6) for law in laws] == sorted(round(law.z_max, 6) for law in laws)
    cdf2 = [float(law.cdf_z(3.0)) for law in laws]
    assert cdf2 == sorted(cdf2, reverse=True)  # P(z ≤ 3) falls: z (= γ/√V) grows with N_r


@pytest.mark.parametrize("v", [2.0, 4.0, 8.0, 20.0])
def test_chernoff_bound_is_above_the_exact_one_antenna_tail(v):
    exact = 2.0 * norm.sf(GAMMA / math.sqrt(v))  # P(γ²/Z² ≤ v)
    bound = chernoff_lower_tail(v, gamma=GAMMA, antennas=1)
    assert exact <= bound <= 10.0 * GAMMA / math.sqrt(v) * exact + 1e-300  # the bound has no polynomial prefactor


def _gaussian_delta(eps: float, sigma: np.ndarray, S: float) -> np.ndarray:
    """δ(ε) of the Gaussian mechanism N(S, σ²) against N(0, σ²) (closed form)."""
    a = sigma / S
    return norm.cdf(-eps * a + 0.5 / a) - math.exp(eps) * norm.cdf(-eps * a - 0.5 / a)


@pytest.mark.parametrize("antennas", [2, 4])
def test_one_round_pld_is_the_v_mixture_of_gaussian_profiles(antennas):
    """One unsampled round: δ(ε) = E_V[δ_G(ε; √V)] (Monte Carlo over V). The PLD must not lie below it, and not above
    its value with every σ shrunk by the panel ratio and the grid's rounding at ε − h (h: the loss grid)."""
    S, h = 2.0 * 1.452, 1e-3
    pld = cauchy_mixture_pld(sensitivity=S, gamma=GAMMA, discretization=h, antennas=antennas)
    sigma = GAMMA / _mc_z(antennas)
    for eps in (0.5, 1.0, 2.0):
        d_low = _gaussian_delta(eps, sigma, S)
        d_high = _gaussian_delta(eps - h, sigma / (PANEL_RATIO * SHRINK), S)
        got = float(pld.get_delta_for_epsilon(eps))
        se_low = d_low.std() / math.sqrt(sigma.size)
        se_high = d_high.std() / math.sqrt(sigma.size)
        assert got >= d_low.mean() - 5.0 * se_low, (eps, got, d_low.mean())
        assert got <= d_high.mean() + 5.0 * se_high + TAIL, (eps, got, d_high.mean())


def test_run_accountant_with_antennas_takes_the_pld():
    common = dict(K=20, N=32, M=100, d=1000, normalization="clip", C=1.452, clip_norm=1.0)
    with pytest.raises(ValueError, match="antennas"):
        FlorasRunAccountant(**common, accountant="pld", antennas=0)
    eps = [FlorasRunAccountant(**common, accountant="pld", antennas=n).epsilon(rounds=200) for n in (1, 2, 4)]
    assert eps[0] < eps[1] < eps[2]  # less noise with more antennas at the same C
    tight = FlorasRunAccountant(**common, accountant="tightest", antennas=2)
    report = tight.report(rounds=200)
    assert report.epsilon == pytest.approx(eps[1], rel=1e-9)  # the Rényi bound (tests/test_antenna_rdp.py) is looser
    text = " ".join(report.assumptions)
    assert "tightest: ε from pld (rdp ε = " in text and "2 receive antennas" in text
    assert FlorasRunAccountant(K=20, N=20, M=100, d=1000, accountant="rdp", antennas=4).epsilon(rounds=3) == math.inf


def test_cauchy_round_refuses_what_is_not_derived():
    for bad in (dict(scalar=True), dict(gamma=12.5)):
        with pytest.raises(ValueError, match="antennas"):
            CauchyRound(**{"gamma": 12.0, "sensitivity": 1.0, "antennas": 2, **bad})
