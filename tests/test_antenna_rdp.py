"""The Rényi bound of FLORAS with N_r receive antennas (model §9.5, "Several antennas"; privacy/antenna_rdp.py).

Predictions come from closed forms of the model document (N_r = 1: M(c) = (1 − 2c/γ²)^{−1/2}; γ = 1: V = 1/χ²_{N_r},
M(c) = (1 − 2c)^{−N_r/2}), from a Monte Carlo of the combiner's V = Σ_j 1/χ²_{N_r,j}, and from the one-antenna
z-average of privacy/floras_tight.py, an independent computation of the sampled curve.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privacy import FlorasRunAccountant
from privacy.antenna_rdp import antenna_poisson_sampled_rdp, antenna_rdp, log_mgf_inverse_variance
from privacy.events import CauchyRound, PoissonSampled, SampledWithoutReplacement
from privacy.floras_tight import cauchy_sampled_rdp
from privacy.rdp import cauchy_rdp_bound


@pytest.mark.parametrize("gamma", [1, 3, 12, 83])
@pytest.mark.parametrize("frac", [1e-6, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9])
def test_one_antenna_is_the_levy_closed_form_and_the_error_bound_covers_it(gamma, frac):
    c = frac * gamma**2 / 2.0
    exact = -0.5 * math.log1p(-2.0 * c / gamma**2)
    up, err = log_mgf_inverse_variance(c, gamma, 1)
    assert exact <= up <= exact + err, (up - exact, err)
    assert err <= 1e-9 * exact + 1e-15 or frac > 0.999  # tight except at the ceiling's edge


@pytest.mark.parametrize("antennas", [2, 3, 4, 8])
@pytest.mark.parametrize("frac", [1e-4, 0.3, 0.9, 0.99999])
def test_one_inactive_sequence_is_the_chi_square_moment_generating_function(antennas, frac):
    c = frac / 2.0  # V = 1/X, X ~ χ²_{N_r}: E e^{cX} = (1 − 2c)^{−N_r/2}
    exact = -0.5 * antennas * math.log1p(-2.0 * c)
    up, err = log_mgf_inverse_variance(c, 1, antennas)
    assert exact <= up <= exact + err, (up - exact, err)


@pytest.mark.parametrize("antennas", [2, 4])
def test_the_moment_generating_function_against_a_monte_carlo_of_the_combiner(antennas):
    """V = Σ_{j ≤ γ} 1/χ²_{N_r,j}, γ = 12; c = 0.2·γ²/2 keeps E e^{2c/V} finite, so the sample mean has a variance."""
    rng = np.random.default_rng(7)
    gamma, n = 12, 400_000
    V = (1.0 / rng.chisquare(antennas, size=(n, gamma))).sum(axis=1)
    for c in (0.5, 0.2 * gamma**2 / 2.0):
        x = np.exp(c / V)
        se = x.std() / math.sqrt(n)
        got = math.exp(log_mgf_inverse_variance(c, gamma, antennas)[0])
        assert abs(got - x.mean()) < 5.0 * se, (c, got, x.mean(), se)


def test_the_unsampled_curve_is_the_closed_form_at_one_antenna_and_grows_with_antennas():
    orders = np.array([1.01, 1.5, 2.0, 3.0, 7.5, 12.0, 13.0, 40.0])
    S, gamma = 1.0, 12
    one = antenna_rdp(orders, sensitivity=S, gamma=gamma, antennas=1)
    closed = cauchy_rdp_bound(orders, sensitivity=S, gamma=gamma)
    finite = orders * (orders - 1.0) * S**2 < gamma**2  # α = 13: 156 ≥ 144, the ceiling of every N_r
    assert np.array_equal(np.isfinite(one), finite)
    np.testing.assert_allclose(one[finite], closed[finite], rtol=1e-9)
    assert np.all(one[finite] >= closed[finite])
    two = antenna_rdp(orders, sensitivity=S, gamma=gamma, antennas=2)
    four = antenna_rdp(orders, sensitivity=S, gamma=gamma, antennas=4)
    assert np.array_equal(np.isfinite(two), finite) and np.array_equal(np.isfinite(four), finite)
    # each 1/χ²_{N_r} is stochastically smaller with more antennas: less noise, a larger divergence
    assert np.all(two[finite] > one[finite]) and np.all(four[finite] > two[finite])
    # small orders: ε(α) → α·S²·E[1/V]/2 with E[1/V] = 1/V_ref (19.55 at N_r = 2, model §6.4, "Several antennas")
    small = antenna_rdp(np.array([1.0 + 1e-6]), sensitivity=1e-3, gamma=gamma, antennas=2)[0]
    assert small == pytest.approx(1e-6 / 2.0 / 19.55, rel=2e-3)


def test_poisson_sampled_curve_against_the_one_antenna_z_average_and_the_unsampled_curve():
    orders = np.array([2.0, 2.5, 3.0, 5.0, 8.0, 11.0])
    S, gamma, q = 1.0, 12, 0.2
    ours = antenna_poisson_sampled_rdp(orders, rate=q, sensitivity=S, gamma=gamma, antennas=1)
    theirs, err = cauchy_sampled_rdp(orders, scheme="poisson", rate=q, sensitivity=S, gamma=gamma)
    whole = orders == np.floor(orders)
    np.testing.assert_allclose(ours[whole], theirs[whole], rtol=1e-6, atol=err.max() + 1e-12)
    # fractional orders: the z-average interpolates inside the average, ours outside it (Hölder: never below)
    assert np.all(ours[~whole] >= theirs[~whole] - err[~whole])
    assert np.all(ours[~whole] <= 1.01 * theirs[~whole])
    # q = 1 is the unsampled mechanism (integer orders: the binomial sum is the single term l = α)
    ints = np.array([2.0, 3.0, 6.0])
    np.testing.assert_allclose(antenna_poisson_sampled_rdp(ints, rate=1.0, sensitivity=S, gamma=gamma, antennas=2),
                               antenna_rdp(ints, sensitivity=S, gamma=gamma, antennas=2), rtol=1e-12)
    two = antenna_poisson_sampled_rdp(orders, rate=q, sensitivity=S, gamma=gamma, antennas=2)
    assert np.all(two < antenna_rdp(orders, sensitivity=S, gamma=gamma, antennas=2))  # sampling amplifies
    assert np.all(two > ours)  # more antennas, less noise
    # k = 12 is below the ceiling (132 < 144); 13 is not, so α = 12.5 interpolates towards ∞
    assert np.isinf(antenna_poisson_sampled_rdp(np.array([12.5]), rate=q, sensitivity=S, gamma=gamma, antennas=2)[0])


def test_events_take_the_tight_poisson_curve_and_the_generic_bound_without_replacement():
    from privacy.accountant import event_rdp

    base = CauchyRound(gamma=12.0, sensitivity=1.0, antennas=2)
    orders = np.array([2.0, 4.0, 8.0])
    np.testing.assert_allclose(event_rdp(base, orders), antenna_rdp(orders, sensitivity=1.0, gamma=12, antennas=2))
    wor = SampledWithoutReplacement(base, sample_size=20, population_size=100)
    np.testing.assert_array_equal(event_rdp(wor, orders), event_rdp(wor, orders, method="generic"))
    poisson = PoissonSampled(base, rate=0.2)
    tight, generic = event_rdp(poisson, orders), event_rdp(poisson, orders, method="generic")
    np.testing.assert_allclose(tight, np.minimum(generic, antenna_poisson_sampled_rdp(
        orders, rate=0.2, sensitivity=1.0, gamma=12, antennas=2)))
    assert np.all(tight[1:] < generic[1:])  # Zhu & Wang's factor 3 on the terms l ≥ 3 is gone


def test_run_accountant_with_antennas_under_every_accountant():
    common = dict(K=20, N=32, M=100, d=1000, normalization="clip", C=1.025, clip_norm=1.0, antennas=2)
    rdp = FlorasRunAccountant(**common, accountant="rdp").report(rounds=200)
    pld = FlorasRunAccountant(**common, accountant="pld").epsilon(rounds=200)
    tight = FlorasRunAccountant(**common, accountant="tightest").report(rounds=200)
    assert math.isfinite(rdp.epsilon) and rdp.epsilon > pld
    assert tight.epsilon == pytest.approx(min(rdp.epsilon, pld), rel=1e-9)
    text = " ".join(rdp.assumptions)
    assert "ln E[exp(α(α−1)S²/(2V))]" in text and "V-averaged curve of 2 receive antennas" in text
    assert "tightest: ε from pld" in " ".join(tight.assumptions)
    poisson = FlorasRunAccountant(**{**common, "relation": "add-remove", "sampling": "poisson"}, accountant="rdp")
    assert "through E[e^(c/V)]" in " ".join(poisson.report(rounds=200).assumptions)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="gamma must be a whole number ≥ 1"):
        log_mgf_inverse_variance(1.0, 0, 2)
    with pytest.raises(ValueError, match="antennas must be a whole number ≥ 1"):
        log_mgf_inverse_variance(1.0, 3, 1.5)
    with pytest.raises(ValueError, match="c must be a finite number ≥ 0"):
        log_mgf_inverse_variance(-1.0, 3, 2)
    with pytest.raises(ValueError, match="rate must be in"):
        antenna_poisson_sampled_rdp(np.array([2.0]), rate=0.0, sensitivity=1.0, gamma=3, antennas=2)
    assert log_mgf_inverse_variance(4.5, 3, 2) == (math.inf, 0.0)  # c = γ²/2: the ceiling itself
