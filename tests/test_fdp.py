"""The trade-off function calculus of privacy/fdp (model §9.4; Dong, Roth & Su 2019; Zheng et al. 2021).

Predictions come from the definitions: f(α) from Φ and Φ⁻¹ (scipy.stats.norm), δ(ε) from a
brute-force conjugate sup_α (1 − f(α) − e^ε α) on a dense α-grid, compositions of Gaussians from
μ = √Σμᵢ², randomized response from the binomial law of its privacy loss.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from privacy.fdp import EpsDelta, Gaussian, Identity, Mixture, PiecewiseLinear, Symmetrised, subsample, tensor, tensor_power
from privacy.fdp.federated import (federated_clt_mu, one_vs_all_rate, one_vs_one_rate, satisfies, strong_federated,
                                   sync_tradeoff, weak_federated)
from privacy.fdp.from_rdp import rdp_tradeoff
from privacy.fdp.lossdist import loss_pair
from privacy.rdp import DEFAULT_ORDERS

# dense α-grid for brute-force conjugates: geometric near 0 (where e^ε α matters at large ε) plus uniform
ALPHA = np.unique(np.concatenate([[0.0], np.geomspace(1e-12, 1e-2, 4000), np.linspace(0.0, 1.0, 200001)]))
EPS = np.array([-2.0, -0.5, 0.0, 0.3, 1.0, 2.5])


def brute_delta(f_values, eps):
    """sup_α (1 − f(α) − e^ε α) on ALPHA: a lower estimate of δ(ε), exact up to the grid."""
    return np.array([np.max(1.0 - f_values - math.exp(e) * ALPHA) for e in eps])


def test_gaussian_tradeoff_values_and_dual_curve():
    g = Gaussian(1.3)
    a = np.array([0.0, 1e-6, 0.05, 0.5, 0.9, 1.0])
    assert g(a) == pytest.approx(norm.cdf(norm.ppf(1 - a) - 1.3), abs=1e-12)
    # δ(ε) = 1 + f*(−e^ε): the closed form against the brute-force conjugate (grid error ≤ 1e-6 here:
    # the maximiser moves by < 5e-6 between grid points and the objective is flat there)
    assert g.delta(EPS) == pytest.approx(brute_delta(g(ALPHA), EPS), abs=1e-6)
    assert Gaussian(0.0)(a) == pytest.approx(1 - a) and np.all(Gaussian(math.inf)(a[1:]) == 0)


def test_eps_delta_tradeoff_is_the_textbook_formula():
    f = EpsDelta(1.0, 0.1)
    a = np.linspace(0, 1, 11)
    expected = np.maximum.reduce([np.zeros_like(a), 0.9 - math.e * a, (0.9 - a) / math.e])
    assert f(a) == pytest.approx(expected, abs=1e-12)
    assert f.delta(np.array([1.0]))[0] == pytest.approx(0.1, abs=1e-12)  # (ε, δ)-DP at its own ε
    assert f.delta(EPS) == pytest.approx(brute_delta(f(ALPHA), EPS), abs=1e-5)


def test_mixture_inverse_and_subsampling_operator():
    g, p = Gaussian(1.0), 0.3
    fp = Mixture(g, p)
    assert fp(ALPHA[::97]) == pytest.approx(p * g(ALPHA[::97]) + (1 - p) * (1 - ALPHA[::97]), abs=1e-12)
    assert fp.delta(EPS) == pytest.approx(brute_delta(fp(ALPHA), EPS), abs=1e-6)
    # f_p is asymmetric (Zheng et al. 2021): δ of f_p⁻¹ = T(Q, P) differs from δ of f_p ...
    inv = fp.inverse().delta(EPS)
    assert np.max(np.abs(inv - fp.delta(EPS))) > 1e-2
    # ... and equals 1 − e^ε + e^ε δ_{f_p}(−ε) (P and Q swapped: H_{e^ε}(P‖Q) = 1 − e^ε + e^ε H_{e^{−ε}}(Q‖P))
    assert inv == pytest.approx(np.maximum(0, 1 - np.exp(EPS) + np.exp(EPS) * fp.delta(-EPS)), abs=1e-12)
    # C_p(f) = min{f_p, f_p⁻¹}** is symmetric, and between the extremes C_0 = Id, C_1(G) = G
    cp = subsample(g, p)
    env = cp.envelope(step=1e-3)
    a = np.linspace(0, 1, 2001)
    inverse_values = np.interp(a, env.beta[::-1], env.alpha[::-1])  # f⁻¹ by reflecting the graph
    assert np.max(np.abs(env(a) - inverse_values)) < 2e-3
    assert subsample(g, 0.0).delta(EPS) == pytest.approx(Identity().delta(EPS), abs=1e-15)
    assert subsample(g, 1.0).delta(EPS) == pytest.approx(g.delta(EPS), abs=1e-12)
    assert np.all(cp.delta(EPS) >= np.maximum(fp.delta(EPS), inv) - 1e-15)


def test_from_an_eps_delta_curve():
    """Finitely many (ε_k, δ(ε_k)) of G_1 give max_k f_{ε_k,δ_k}: below G_1, touching it at the tangent points,
    and one pair alone is exactly f_{ε,δ}."""
    g = Gaussian(1.0)
    e = np.linspace(0, 4, 81)
    f = PiecewiseLinear.from_eps_delta(e, g.delta(e))
    a = np.linspace(0, 1, 20001)
    assert np.all(f(a) <= g(a) + 1e-12) and np.max(g(a) - f(a)) < 5e-3
    assert f.delta(e) == pytest.approx(g.delta(e), abs=1e-12)  # each (ε_k, δ_k) is attained
    one = PiecewiseLinear.from_eps_delta([1.0], [0.1])
    assert one(a) == pytest.approx(EpsDelta(1.0, 0.1)(a), abs=1e-12)


def test_envelope_is_a_lower_bound_within_one_loss_step():
    g, h = Gaussian(1.0), 1e-3
    env = g.envelope(step=h)
    a = np.linspace(0, 1, 20001)
    assert np.all(env(a) <= g(a) + 1e-12)
    e = np.linspace(-3, 4, 71)
    assert np.all(env.delta(e) >= g.delta(e) - 1e-12) and np.all(env.delta(e) <= g.delta(e - h) + 1e-12)


def test_piecewise_linear_from_samples_brackets_the_function():
    g = Gaussian(1.0)
    fine = np.linspace(0, 1, 100001)
    errors = []
    for n in (101, 1001):
        grid = np.linspace(0, 1, n)
        lo = PiecewiseLinear.from_samples(grid, g(grid))
        gap = g(fine) - lo(fine)
        assert gap.min() >= -1e-12 and gap.max() <= lo.error + 1e-12  # lower bound, within its stated error
        errors.append(lo.error)
    assert errors[1] < errors[0] / 3  # refining the grid shrinks the stated error
    with pytest.raises(ValueError, match="convex"):
        PiecewiseLinear([0, 0.25, 0.5, 1], [1, 0.7, 0.2, 0])  # 0.7 above the chord 0.6


def test_gaussian_composition_closed_form_and_numerical():
    assert tensor(Gaussian(0.6), Gaussian(0.8)).mu == pytest.approx(1.0)
    assert tensor_power(Gaussian(0.5), 16).mu == pytest.approx(2.0)
    # numerically (the same δ-curve in a non-Gaussian object): within [ε_exact, ε_exact + T·h]
    h, T = 1e-3, 16
    numeric = tensor_power(Symmetrised(Gaussian(0.5), Gaussian(0.5), symmetric=True), T, step=h)
    exact = Gaussian(2.0).epsilon(1e-5)
    assert exact - 1e-9 <= numeric.epsilon(1e-5) <= exact + T * h
    # commutative: f ⊗ g and g ⊗ f give one δ-curve
    a, b = EpsDelta(0.5), subsample(Gaussian(1.0), 0.3)
    e = np.linspace(0, 3, 7)
    assert tensor(a, b, step=h).delta(e) == pytest.approx(tensor(b, a, step=h).delta(e), abs=1e-12)


def test_randomized_response_composition_is_the_binomial_law():
    """T rounds of ε₀-RR: the privacy loss under Q is (2k − T)ε₀ with k ~ Bin(T, e^{ε₀}/(1 + e^{ε₀})); ε₀ is on the
    loss grid, so the numerical ⊗ must be exact up to floating point."""
    from scipy.stats import binom

    e0, T = 0.05, 200
    k = np.arange(T + 1)
    pk = binom.pmf(k, T, math.exp(e0) / (1 + math.exp(e0)))
    L = (2 * k - T) * e0
    f = tensor_power(EpsDelta(e0), T)
    for eps in (0.5, 2.0, 2.919):
        exact = float(np.sum(pk * np.maximum(0.0, 1 - np.exp(eps - L))))
        assert f.delta(np.array([eps]))[0] == pytest.approx(exact, rel=1e-8, abs=1e-15)
    assert f.epsilon(1e-5) == pytest.approx(2.919, abs=5e-4)  # the exact composition (the PLD accountant: 3.050)


def test_loss_pair_masses_sum_to_one():
    for f in (Gaussian(0.7), EpsDelta(1.0, 0.01), Mixture(Gaussian(2.0), 0.2)):
        up, down = loss_pair(f, step=1e-3)
        assert up.probs.sum() + up.inf == pytest.approx(1.0, abs=1e-9)
        assert down.probs.sum() + down.inf == pytest.approx(1.0, abs=1e-9)


def test_rdp_tradeoff_is_implied_by_the_curve_and_no_stronger_than_the_mechanism():
    """The Gaussian's RDP curve α μ²/2 implies an f below G_μ (RDP loses information) whose ε lies between the exact
    4.3772 (μ = 1, δ = 1e-5) and the best single-order conversion."""
    from privacy.rdp import epsilon_from_rdp

    o = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    f = rdp_tradeoff(o, o * 0.5)
    a = np.linspace(0, 1, 5001)
    assert np.all(f(a) <= Gaussian(1.0)(a) + 1e-9)
    single = epsilon_from_rdp(o, o * 0.5, delta=1e-5, conversion="tight")[0]
    assert 4.3772 < f.epsilon(1e-5) <= single * 1.001


def test_federated_notions_strong_implies_weak():
    f, p, R = Gaussian(1.0), 0.5, 20
    assert one_vs_one_rate(p) == 0.25 and one_vs_all_rate(p, 3) == pytest.approx(0.5 * (1 - 0.25))
    assert one_vs_all_rate(p, 2) == pytest.approx(one_vs_one_rate(p))  # one other client: the two notions agree
    weak = weak_federated(f, rate=p, rounds=R, step=1e-3)
    strong = strong_federated(f, rate=p, rounds=R, clients=10, step=1e-3)
    assert satisfies(weak, strong, slack=1e-12) and not satisfies(strong, weak, slack=1e-3)
    assert weak.epsilon(1e-5) < strong.epsilon(1e-5)
    # a client never sampled with j learns nothing: C_0(f) = Id
    assert sync_tradeoff(f, 0.0).delta(EPS) == pytest.approx(Identity().delta(EPS), abs=1e-15)


def test_federated_clt_approximates_the_composition_for_small_rates():
    """The text's CLT: C_q(G_μ)^{⊗R} → G_{μ′} as q → 0 with q√R fixed (here 0.2, μ = 1). The numerical composition
    (error ≤ R·h ≤ 0.04) moves towards the CLT value: 39 % above it at q = 0.04, under 10 % at q = 0.01."""
    clt = Gaussian(federated_clt_mu(1.0, q=0.01, rounds=400)).epsilon(1e-5)
    assert Gaussian(federated_clt_mu(1.0, q=0.04, rounds=25)).epsilon(1e-5) == pytest.approx(clt, rel=1e-12)
    gaps = [tensor_power(subsample(Gaussian(1.0), q), R, step=1e-4).epsilon(1e-5) / clt - 1 for q, R in ((0.04, 25), (0.01, 400))]
    assert gaps[1] < gaps[0] / 3 and 0 < gaps[1] < 0.1


def test_subsampling_at_rate_one_composes_like_the_mechanism_itself():
    """C_1(G_1) = G_1 (symmetric), so C_1(G_1)^⊗40 is G_√40: ε at δ = 1e-5 from the closed form
    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), within the composition's stated error T·1e-4 (an identity
    component with zero mass once made every loss zero and ε = 0)."""
    import math

    from scipy.optimize import brentq
    from scipy.stats import norm

    from privacy.fdp.compose import tensor_power
    from privacy.fdp.tradeoff import Gaussian, subsample

    mu = math.sqrt(40.0)
    want = brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - 1e-5, 0.0, 200.0)
    got = tensor_power(subsample(Gaussian(1.0), 1.0), 40).epsilon(1e-5)
    assert want - 1e-9 <= got <= want + 40 * 1e-4, (got, want)
